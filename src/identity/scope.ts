/**
 * Scoping: a SCIM filter expression evaluated over normalized source objects with
 * scim2-parse-filter. String comparison is case-insensitive, as for SCIM attributes
 * with caseExact=false (the default): both sides are lower-cased before evaluation.
 */
import { filter, type Filter } from 'scim2-parse-filter';
import { parseFilter } from '../platform/scim/filter.ts';
import { ConfigError } from '../errors.ts';
import type { NormalizedGroup, NormalizedUser } from './model.ts';

export type ScopePredicate<T> = (subject: T) => boolean;

export function compileScope<T extends NormalizedUser | NormalizedGroup>(
  expression: string | undefined,
  keyPath: string,
): ScopePredicate<T> {
  if (expression === undefined) return () => true;
  let ast: Filter;
  try {
    ast = lowerCaseLiterals(parseFilter(expression));
  } catch (e) {
    throw new ConfigError(`${keyPath}: invalid SCIM filter`, [
      `${keyPath}: cannot parse ${JSON.stringify(expression)}: ${(e as Error).message}`,
    ]);
  }
  const test = filter(ast);
  return (subject: T) => test(lowerCaseValues(scopeView(subject)));
}

/** What a filter sees: core fields at the top, `attributes.*` flattened beside them. */
function scopeView(subject: NormalizedUser | NormalizedGroup): Record<string, unknown> {
  if ('userName' in subject) {
    const { attributes, ...core } = subject;
    return {
      ...attributes,
      ...core,
      emails: subject.emails.map((value) => ({ value })),
      name: { givenName: subject.givenName, familyName: subject.familyName },
    };
  }
  return { ...subject };
}

function lowerCaseLiterals(node: Filter): Filter {
  const n = node as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = { ...n };
  if (typeof n['compValue'] === 'string') out['compValue'] = (n['compValue'] as string).toLowerCase();
  if (Array.isArray(n['filters'])) out['filters'] = (n['filters'] as Filter[]).map(lowerCaseLiterals);
  if (n['filter'] && typeof n['filter'] === 'object') out['filter'] = lowerCaseLiterals(n['filter'] as Filter);
  if (n['valFilter'] && typeof n['valFilter'] === 'object') out['valFilter'] = lowerCaseLiterals(n['valFilter'] as Filter);
  return out as unknown as Filter;
}

function lowerCaseValues(v: unknown): Record<string, unknown> {
  return lowerDeep(v) as Record<string, unknown>;
}

function lowerDeep(v: unknown): unknown {
  if (typeof v === 'string') return v.toLowerCase();
  if (Array.isArray(v)) return v.map(lowerDeep);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, val] of Object.entries(v)) out[k] = lowerDeep(val);
    return out;
  }
  return v;
}
