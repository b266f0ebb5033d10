/**
 * The top level of a directory file: a mapping with exactly the lists `users` and `groups`.
 * Shared by the streamed JSON read and the YAML read, so both refuse a file with the same
 * words. Each failure is a SourceError: a half-read directory would look like mass
 * departures to the planner.
 */
import { SourceError } from '../../errors.ts';
import { closestMatch } from '../../config/suggest.ts';

export const TOP_LEVEL_KEYS = ['users', 'groups'] as const;
export type ListKey = (typeof TOP_LEVEL_KEYS)[number];

export const isListKey = (key: string): key is ListKey => (TOP_LEVEL_KEYS as readonly string[]).includes(key);

export function notAMapping(describe: string): SourceError {
  return new SourceError(`${describe}: expected a mapping with \`users:\` and \`groups:\` lists at the top level`);
}

export function unknownKey(describe: string, key: string): SourceError {
  const guess = closestMatch(key, TOP_LEVEL_KEYS);
  return new SourceError(
    `${describe}: unknown top-level key "${key}"${guess ? ` — did you mean "${guess}"?` : '; only `users` and `groups` are allowed'}`,
  );
}

export function notAList(describe: string, key: ListKey): SourceError {
  const fix = key === 'groups' ? ' (write `groups: []` when there are none)' : '';
  return new SourceError(`${describe}: \`${key}\` must be a list${fix}; refusing a partial read`);
}
