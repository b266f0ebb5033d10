/** One CSV row → a normalized user and its group names, or the reason it cannot be used. */
import type { NormalizedUser } from '../../identity/model.ts';
import type { CsvSourceConfig } from './schema.ts';

/** A row that cannot be used still shows what it could read: the planner protects that account. */
export interface RowIdentity {
  externalId?: string;
  userName?: string;
  groups: string[];
}

export type RowResult = { ok: true; user: NormalizedUser; groups: string[] } | { ok: false; reason: string; identity: RowIdentity };

export type RowMapper = (row: string[]) => RowResult;

export function rowMapper(c: CsvSourceConfig, index: ReadonlyMap<string, number>): RowMapper {
  const col = (name: string | undefined) => (name === undefined ? undefined : (index.get(name) as number));
  const cols = c.columns;
  const emailCols = (cols.emails === undefined ? [] : Array.isArray(cols.emails) ? cols.emails : [cols.emails]).map(
    (n) => col(n) as number,
  );
  const attrCols = Object.entries(cols.attributes).map(([k, n]) => [k, col(n) as number] as const);
  const trueValues = new Set(c.activeValues.true.map((v) => v.trim().toLowerCase()));
  const falseValues = new Set(c.activeValues.false.map((v) => v.trim().toLowerCase()));
  const [iId, iName, iGiven, iFamily, iDisplay, iActive, iGroups] = [
    cols.externalId,
    cols.userName,
    cols.givenName,
    cols.familyName,
    cols.displayName,
    cols.active,
    cols.groups,
  ].map(col);

  return (row) => {
    const cell = (i: number | undefined): string | undefined => {
      if (i === undefined) return undefined;
      const v = (row[i] ?? '').trim();
      return v === '' ? undefined : v;
    };
    const externalId = cell(iId);
    const userName = cell(iName);
    const groups = (cell(iGroups) ?? '')
      .split(c.groupSeparator)
      .map((g) => g.trim())
      .filter((g) => g !== '');
    const identity: RowIdentity = {
      groups,
      ...(externalId !== undefined ? { externalId } : {}),
      ...(userName !== undefined ? { userName } : {}),
    };
    if (externalId === undefined) return { ok: false, reason: `empty ${cols.externalId} (externalId)`, identity };
    if (userName === undefined) return { ok: false, reason: `empty ${cols.userName} (userName)`, identity };
    let active = true;
    if (iActive !== undefined) {
      const raw = (row[iActive] ?? '').trim();
      const v = raw.toLowerCase();
      if (trueValues.has(v)) active = true;
      else if (falseValues.has(v)) active = false;
      else
        return {
          ok: false,
          reason: `${cols.active} (active) is ${JSON.stringify(raw)}: expected one of ${[...trueValues, ...falseValues].join(', ')} (activeValues)`,
          identity,
        };
    }
    const emails: string[] = [];
    for (const i of emailCols) {
      const e = cell(i);
      if (e !== undefined && !emails.some((x) => x.toLowerCase() === e.toLowerCase())) emails.push(e);
    }
    const attributes: Record<string, unknown> = {};
    for (const [k, i] of attrCols) {
      const v = cell(i);
      if (v !== undefined) attributes[k] = v;
    }
    const user: NormalizedUser = { externalId, userName, emails, active, attributes };
    const given = cell(iGiven);
    const family = cell(iFamily);
    const display = cell(iDisplay);
    if (given !== undefined) user.givenName = given;
    if (family !== undefined) user.familyName = family;
    if (display !== undefined) user.displayName = display;
    return { ok: true, user, groups };
  };
}
