/**
 * Plan warnings for names the plan writes that can be read as another name (mixed scripts,
 * Cyrillic or Greek look-alikes of Latin, compatibility characters: identity/confusable.ts).
 * Only what this plan writes is looked at, creates and renames, so a name is reported when it
 * first reaches the platform, not again on every run; one warning per object. Pure.
 */
import { confusableReason } from '../identity/confusable.ts';
import type { AttributeChange, GroupCreate, GroupUpdate, PlanWarning, UserCreate, UserUpdate } from './plan-types.ts';

const NAME_PATHS = new Set(['userName', 'displayName', 'emails']);

function strings(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (!Array.isArray(v)) return [];
  return v.flatMap((e) =>
    typeof e === 'string' ? [e] : typeof (e as { value?: unknown })?.value === 'string' ? [(e as { value: string }).value] : [],
  );
}

/** One warning per object: its first field that can be misread. */
function check(out: PlanWarning[], ref: string, field: string, values: string[]): void {
  if (out.at(-1)?.ref === ref) return;
  for (const v of values) {
    const why = confusableReason(v);
    if (why === undefined) continue;
    out.push({ code: 'confusable-name', ref, message: `${field} ${why}: it can be read as another name; check that it is intended` });
    return;
  }
}

function changed(out: PlanWarning[], ref: string, changes: AttributeChange[]): void {
  for (const c of changes) if (NAME_PATHS.has(c.path)) check(out, ref, c.path, strings(c.after));
}

export function nameWarnings(
  users: { create: UserCreate[]; update: UserUpdate[] },
  groups: { create: GroupCreate[]; update: GroupUpdate[] },
): PlanWarning[] {
  const out: PlanWarning[] = [];
  for (const u of users.create) {
    check(out, u.userName, 'userName', [u.userName]);
    check(out, u.userName, 'displayName', strings(u.resource['displayName']));
    check(out, u.userName, 'emails', strings(u.resource['emails']));
  }
  for (const u of users.update) changed(out, u.userName, u.changes);
  for (const g of groups.create) check(out, g.displayName, 'displayName', [g.displayName]);
  for (const g of groups.update) changed(out, g.displayName, g.changes);
  return out;
}
