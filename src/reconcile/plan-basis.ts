/**
 * What a reviewed plan was made from: for every object the plan touches, the state the
 * reviewer saw on the platform and in the source, one short hash per attribute. `plan --out`
 * saves it; `apply --plan` takes it again from a fresh read and refuses when any of those
 * objects moved (an admin's edit on the platform, an HR change in the source), as Terraform
 * refuses a stale plan. Operation fingerprints (plan-file.ts) say "the same writes"; the basis
 * says "over the same state": without it an admin's edit of a value the plan replaces would be
 * overwritten unseen, because the write itself is unchanged.
 *
 * Keys: `platform:user:<id>`, `platform:group:<id>`, `source:user:<externalId>`,
 * `source:group:<externalId>`. A value is the object's attribute hashes (dotted paths of
 * nested objects; arrays whole, group members in any order), or null when the object was absent.
 */
import { createHash } from 'node:crypto';
import type { NormalizedGroup, NormalizedUser } from '../identity/model.ts';
import type { ScimGroup, ScimUser } from '../platform/scim/types.ts';
import type { Plan } from './plan-types.ts';

/** The inputs of one plan, kept by planReconcile when asked (PlanOptions.keepInputs). */
export interface PlanInputs {
  sourceUsers: readonly NormalizedUser[];
  sourceGroups: readonly NormalizedGroup[];
  platformUsers: readonly ScimUser[];
  platformGroups: readonly ScimGroup[];
}

export type ObjectState = Record<string, string> | null;
export type PlanBasis = Record<string, ObjectState>;

const hash = (v: unknown): string =>
  createHash('sha256')
    .update(JSON.stringify(v) ?? 'undefined')
    .digest('hex')
    .slice(0, 16);

/** Platform bookkeeping that changes without anyone changing the object. */
const IGNORED = new Set(['meta', 'schemas']);

function flatten(obj: Record<string, unknown>, prefix: string, out: Record<string, string>): void {
  for (const [k, v] of Object.entries(obj)) {
    if (prefix === '' && IGNORED.has(k)) continue;
    const path = prefix === '' ? k : `${prefix}.${k}`;
    if (v === undefined) continue;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) flatten(v as Record<string, unknown>, path, out);
    else out[path] = hash(v);
  }
}

function stateOf(obj: object | undefined, sortedArrays: Record<string, (x: unknown) => string> = {}): ObjectState {
  if (obj === undefined) return null;
  const copy: Record<string, unknown> = { ...(obj as Record<string, unknown>) };
  // Member lists are sets: a server or a directory may return them in another order.
  for (const [k, keyOf] of Object.entries(sortedArrays)) {
    const list = copy[k];
    if (Array.isArray(list)) copy[k] = [...list].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
  }
  const out: Record<string, string> = {};
  flatten(copy, '', out);
  return out;
}

const memberKey = (m: unknown): string => JSON.stringify(m) ?? '';

/** The objects a plan touches, with a name a person reads: key → `user ann@example.com`. */
export function touchedObjects(plan: Plan): Map<string, string> {
  const touched = new Map<string, string>();
  const user = (id: string | null | undefined, ext: string | undefined, name: string): void => {
    if (id) touched.set(`platform:user:${id}`, `user ${name}`);
    if (ext) touched.set(`source:user:${ext}`, `user ${name}`);
  };
  const group = (id: string | undefined, ext: string | undefined, name: string): void => {
    if (id) touched.set(`platform:group:${id}`, `group ${name}`);
    if (ext) touched.set(`source:group:${ext}`, `group ${name}`);
  };
  for (const u of plan.users.create) user(undefined, u.externalId, u.userName);
  for (const list of [plan.users.update, plan.users.reactivate, plan.users.deactivate, plan.users.delete])
    for (const u of list) user(u.id, u.externalId, u.userName);
  for (const g of plan.groups.create) group(undefined, g.externalId, g.displayName);
  for (const list of [plan.groups.update, plan.groups.delete]) for (const g of list) group(g.id, g.externalId, g.displayName);
  for (const m of plan.memberships) group(m.group.id, m.group.externalId, m.group.displayName);
  for (const u of plan.attributes?.users ?? []) user(u.id, u.externalId, u.userName);
  return touched;
}

/** The basis of a plan: the current state of every object it touches, from one read. */
export function planBasis(plan: Plan, inputs: PlanInputs): PlanBasis {
  const touched = touchedObjects(plan);
  const wanted = (kind: string, id: string): boolean => touched.has(`${kind}:${id}`);
  const basis: PlanBasis = {};
  for (const key of touched.keys()) basis[key] = null;
  for (const u of inputs.platformUsers) if (wanted('platform:user', u.id)) basis[`platform:user:${u.id}`] = stateOf(u);
  for (const g of inputs.platformGroups)
    if (wanted('platform:group', g.id)) basis[`platform:group:${g.id}`] = stateOf(g, { members: memberKey });
  for (const u of inputs.sourceUsers) if (wanted('source:user', u.externalId)) basis[`source:user:${u.externalId}`] = stateOf(u);
  for (const g of inputs.sourceGroups)
    if (wanted('source:group', g.externalId)) basis[`source:group:${g.externalId}`] = stateOf(g, { members: memberKey });
  return basis;
}

/**
 * One line per object that moved between the reviewed basis and a fresh one:
 * `user ann@example.com changed on the platform since the plan (displayName)`.
 */
export function basisDrift(saved: PlanBasis, fresh: PlanBasis, names: Map<string, string>): string[] {
  const lines: string[] = [];
  for (const [key, before] of Object.entries(saved)) {
    const now = fresh[key] ?? null;
    const where = key.startsWith('platform:') ? 'on the platform' : 'in the source';
    const name = names.get(key) ?? key;
    if (before === null && now === null) continue;
    if (before === null) lines.push(`${name} appeared ${where} since the plan`);
    else if (now === null) lines.push(`${name} is gone ${where} since the plan`);
    else {
      const paths = [...new Set([...Object.keys(before), ...Object.keys(now)])].filter((p) => before[p] !== now[p]).sort();
      if (paths.length > 0) lines.push(`${name} changed ${where} since the plan (${paths.join(', ')})`);
    }
  }
  return lines;
}
