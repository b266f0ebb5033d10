/**
 * The subset of the Directory API search syntax the simulator understands: space-separated
 * clauses, all of which must match; `field=value` is exact, `field:value` a word or prefix
 * match (`value*`); values may be single-quoted. Users: email, givenName, familyName, name,
 * orgUnitPath, isAdmin, isSuspended, isArchived and `Schema.field` custom fields. Groups:
 * email, name. Anything else is Google's 400 "Invalid Input".
 */
import type { GoogleGroup, GoogleUser } from './types.ts';

export class QuerySyntaxError extends Error {}

interface Clause {
  field: string;
  op: '=' | ':';
  value: string;
}

const CLAUSE = /([A-Za-z][\w.]*)\s*([=:])\s*(?:'([^']*)'|"([^"]*)"|(\S+))/y;

export function parseQuery(q: string): Clause[] {
  const out: Clause[] = [];
  let i = 0;
  const s = q.trim();
  while (i < s.length) {
    if (/\s/.test(s[i] as string)) {
      i++;
      continue;
    }
    CLAUSE.lastIndex = i;
    const m = CLAUSE.exec(s);
    if (!m) throw new QuerySyntaxError(`Invalid Input: ${q}`);
    out.push({ field: m[1] as string, op: m[2] as '=' | ':', value: (m[3] ?? m[4] ?? m[5]) as string });
    i = CLAUSE.lastIndex;
  }
  return out;
}

function matches(actual: unknown, c: Clause): boolean {
  const values = (Array.isArray(actual) ? actual : [actual])
    .filter((v) => v !== undefined && v !== null)
    .map((v) => String(v).toLowerCase());
  const want = c.value.toLowerCase();
  if (c.op === '=') return values.includes(want);
  const prefix = want.endsWith('*') ? want.slice(0, -1) : undefined;
  return values.some((v) =>
    prefix !== undefined
      ? v.startsWith(prefix) || v.split(/[\s@.]/).some((w) => w.startsWith(prefix))
      : v === want || v.split(/[\s@.]/).includes(want),
  );
}

function userField(u: GoogleUser, field: string): unknown {
  switch (field) {
    case 'email':
      return [u.primaryEmail, ...(u.aliases ?? [])];
    case 'givenName':
      return u.name.givenName;
    case 'familyName':
      return u.name.familyName;
    case 'name':
      return u.name.fullName;
    case 'orgUnitPath':
      return u.orgUnitPath;
    case 'isAdmin':
      return u.isAdmin;
    case 'isSuspended':
      return u.suspended;
    case 'isArchived':
      return u.archived;
    default: {
      const dot = field.indexOf('.');
      if (dot < 0) throw new QuerySyntaxError(`Invalid Input: unknown field ${field}`);
      return u.customSchemas?.[field.slice(0, dot)]?.[field.slice(dot + 1)];
    }
  }
}

export function userMatcher(q: string | null): (u: GoogleUser) => boolean {
  if (q === null || q.trim() === '') return () => true;
  const clauses = parseQuery(q);
  for (const c of clauses) userField({ name: {}, primaryEmail: '' } as GoogleUser, c.field); // unknown fields fail up front
  return (u) =>
    clauses.every((c) => {
      if (c.field === 'orgUnitPath' && c.op === '=') {
        // orgUnitPath='/Sales' matches the unit and every unit below it.
        const want = c.value.toLowerCase().replace(/\/+$/, '');
        const have = u.orgUnitPath.toLowerCase();
        return want === '' || have === want || have.startsWith(`${want}/`);
      }
      return matches(userField(u, c.field), c);
    });
}

export function groupMatcher(q: string | null): (g: GoogleGroup) => boolean {
  if (q === null || q.trim() === '') return () => true;
  const clauses = parseQuery(q);
  for (const c of clauses)
    if (c.field !== 'email' && c.field !== 'name') throw new QuerySyntaxError(`Invalid Input: unknown field ${c.field}`);
  return (g) => clauses.every((c) => matches(c.field === 'email' ? [g.email, ...(g.aliases ?? [])] : g.name, c));
}
