/**
 * Header validation: every mapped column must exist, exactly once. A missing column is a
 * SourceError naming the column, its config key and the columns the file does have, so a
 * renamed HR column fails the run instead of blanking a field for everyone.
 */
import { SourceError } from '../../errors.ts';
import type { CsvSourceConfig } from './schema.ts';

/** Config key → column name, e.g. `columns.emails[1]` → `Work Email`. */
export function mappedColumns(c: CsvSourceConfig['columns']): Array<[key: string, column: string]> {
  const out: Array<[string, string]> = [];
  for (const key of ['externalId', 'userName', 'givenName', 'familyName', 'displayName', 'active', 'groups'] as const) {
    const v = c[key];
    if (v !== undefined) out.push([`columns.${key}`, v]);
  }
  if (c.emails !== undefined) {
    const list = Array.isArray(c.emails) ? c.emails : [c.emails];
    list.forEach((col, i) => out.push([Array.isArray(c.emails) ? `columns.emails[${i}]` : 'columns.emails', col]));
  }
  for (const [k, col] of Object.entries(c.attributes)) out.push([`columns.attributes.${k}`, col]);
  return out;
}

/** Column name → index in a row. */
export function indexHeader(header: string[], columns: CsvSourceConfig['columns'], file: string): Map<string, number> {
  const names = header.map((h) => h.trim());
  const index = new Map<string, number>();
  const dupes = new Set<string>();
  names.forEach((n, i) => (index.has(n) ? dupes.add(n) : index.set(n, i)));
  const found = names.map((n) => JSON.stringify(n)).join(', ');
  const missing = mappedColumns(columns).filter(([, col]) => !index.has(col));
  if (missing.length > 0) {
    const list = missing.map(([key, col]) => `"${col}" (${key})`).join(', ');
    throw new SourceError(`${file}: header has no column ${list}; columns found: ${found}`);
  }
  const ambiguous = mappedColumns(columns).filter(([, col]) => dupes.has(col));
  if (ambiguous.length > 0) {
    throw new SourceError(`${file}: column ${ambiguous.map(([, c]) => `"${c}"`).join(', ')} appears more than once in the header`);
  }
  return index;
}
