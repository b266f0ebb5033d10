/**
 * A reviewed plan, saved by `plan --out plan.json` and executed by `apply --plan plan.json`,
 * as in Terraform. The file holds the plan, one fingerprint per operation (what it writes and
 * the value it replaces) and the basis: the state, on the platform and in the source, of every
 * object the plan touches (plan-basis.ts). Before applying, the platform and the source are
 * read again and re-planned with the same options; apply runs the saved operations only when
 * each is still in the fresh plan unchanged and none of the objects moved, and otherwise
 * refuses (exit 2) listing what changed since the review: an operation gone or different
 * (another value, another before-value, another reason), an object edited on the platform or
 * in the source, or a deletion guard that now trips. Operations the fresh plan adds are not
 * applied (nobody reviewed them); they are listed for the next plan.
 * The file holds names and attribute values (personal data) but no credential.
 */
import { attributeOperations } from './attributes/selection.ts';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ConfigError } from '../errors.ts';
import { writeJsonFileAtomic } from '../state/atomic-file.ts';
import { basisDrift, touchedObjects, type PlanBasis } from './plan-basis.ts';
import { PLAN_SCHEMA_VERSION, type Plan } from './plan-types.ts';

export const PLAN_FILE_KIND = 'scim-audit-sync/plan';
/** 2: `basis`, and before-values in the fingerprints. A file of another version is refused: write it again. */
export const PLAN_FILE_VERSION = 2;

export interface PlanFileOptions {
  allowDeletes: boolean;
  only?: string;
}

export interface PlanFile {
  kind: typeof PLAN_FILE_KIND;
  fileVersion: typeof PLAN_FILE_VERSION;
  tenant: string;
  /** The platform the plan was computed against (origin + SCIM path). */
  target: string;
  options: PlanFileOptions;
  /** Operation key → fingerprint of what it does; see planOperations(). */
  operations: Record<string, string>;
  /** The state of every object the plan touches when it was made (plan-basis.ts). */
  basis: PlanBasis;
  plan: Plan;
}

export interface Operation {
  /** What a person reads: `create user ann@example.com`, `add bob@example.com to Sales`. */
  label: string;
  fingerprint: string;
}

const hash = (v: unknown): string => createHash('sha256').update(JSON.stringify(v)).digest('hex').slice(0, 16);
const who = (r: { userName?: string | undefined; externalId?: string | undefined; id?: string | undefined }): string =>
  r.userName ?? r.externalId ?? r.id ?? '?';

/**
 * Every write the plan implies, keyed by the object it touches (platform id when it exists,
 * else the source externalId), with a fingerprint of its content. Two plans with the same
 * map do exactly the same thing.
 */
export function planOperations(plan: Plan): Map<string, Operation> {
  const ops = new Map<string, Operation>();
  const put = (key: string, label: string, content: unknown): void => void ops.set(key, { label, fingerprint: hash(content) });
  for (const u of plan.users.create) put(`user:create:${u.externalId}`, `create user ${u.userName}`, u.resource);
  // An update's changes carry the before-values: the same write over another value is another operation.
  for (const u of plan.users.update) put(`user:update:${u.id}`, `update user ${u.userName}`, [u.ops, u.adopt, u.externalId, u.changes]);
  for (const u of plan.users.reactivate)
    put(`user:reactivate:${u.id}`, `reactivate user ${u.userName}`, [u.ops, u.adopt, u.externalId, u.changes]);
  for (const u of plan.users.deactivate)
    put(`user:deactivate:${u.id}`, `deactivate user ${u.userName} (${u.reason})`, [u.reason, u.externalId]);
  for (const u of plan.users.delete) put(`user:delete:${u.id}`, `delete user ${u.userName} (${u.reason})`, [u.reason, u.externalId]);
  for (const g of plan.groups.create) put(`group:create:${g.externalId}`, `create group ${g.displayName}`, g.resource);
  for (const g of plan.groups.update)
    put(`group:update:${g.id}`, `update group ${g.displayName}`, [g.ops, g.adopt, g.externalId, g.changes]);
  for (const g of plan.groups.delete) put(`group:delete:${g.id}`, `delete group ${g.displayName}`, g.externalId);
  for (const m of plan.memberships) {
    const group = m.group.id ?? `new:${m.group.externalId}`;
    for (const r of m.add)
      put(`member:add:${group}:${r.id ?? `new:${r.externalId}`}`, `add ${who(r)} to ${m.group.displayName}`, [r.id, r.externalId]);
    for (const r of m.remove) put(`member:remove:${group}:${r.id}`, `remove ${who(r)} from ${m.group.displayName}`, [r.id]);
  }
  for (const [key, label, content] of attributeOperations(plan)) put(key, label, content);
  if (plan.guard.tripped) put('guard:tripped', `deletion guard tripped (${plan.guard.reasons.join('; ')})`, plan.guard.destructive);
  return ops;
}

export function toPlanFile(plan: Plan, target: string, options: PlanFileOptions, basis: PlanBasis): PlanFile {
  const operations = Object.fromEntries([...planOperations(plan)].map(([k, op]) => [k, op.fingerprint]));
  return { kind: PLAN_FILE_KIND, fileVersion: PLAN_FILE_VERSION, tenant: plan.tenant, target, options, operations, basis, plan };
}

export async function writePlanFile(path: string, file: PlanFile): Promise<void> {
  await writeJsonFileAtomic(path, file);
}

export async function readPlanFile(path: string): Promise<PlanFile> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'));
  } catch (e) {
    const why = (e as { code?: string }).code === 'ENOENT' ? 'no such file' : e instanceof SyntaxError ? 'not JSON' : 'unreadable';
    throw new ConfigError(`cannot read plan file ${path} (${why})`, [`--plan: pass a file written by \`scim-audit-sync plan --out FILE\``]);
  }
  const f = parsed as Partial<PlanFile>;
  if (
    f.kind !== PLAN_FILE_KIND ||
    f.fileVersion !== PLAN_FILE_VERSION ||
    f.plan?.schemaVersion !== PLAN_SCHEMA_VERSION ||
    typeof f.operations !== 'object' ||
    f.operations === null ||
    typeof f.basis !== 'object' ||
    f.basis === null
  ) {
    throw new ConfigError(`${path} is not a plan file of this version`, [
      `--plan: expected kind ${PLAN_FILE_KIND}, fileVersion ${PLAN_FILE_VERSION}; write it again with \`plan --out\``,
    ]);
  }
  const file = f as PlanFile;
  // The operations applied are the plan's own: they must be the ones fingerprinted at review.
  const own = planOperations(file.plan);
  const listed = Object.keys(file.operations);
  if (own.size !== listed.length || listed.some((k) => own.get(k)?.fingerprint !== file.operations[k])) {
    throw new ConfigError(`${path} was modified after \`plan --out\` wrote it`, [
      '--plan: its operations no longer match their fingerprints; make and review a new plan',
    ]);
  }
  return file;
}

export interface PlanDrift {
  /** Saved operations that are gone or different now, objects that moved, or a guard verdict that moved: apply refuses. */
  blocking: string[];
  /** Operations a fresh plan has that the reviewed one did not: not applied, left for the next plan. */
  notReviewed: string[];
}

/**
 * How a fresh read differs from the reviewed one: one line per operation gone, changed or new,
 * and per touched object that moved (`freshBasis`: the saved plan's objects, read again).
 */
export function planDrift(saved: PlanFile, fresh: Plan, freshBasis: PlanBasis): PlanDrift {
  const now = planOperations(fresh);
  const savedLabels = planOperations(saved.plan);
  const blocking: string[] = [];
  const notReviewed: string[] = [];
  for (const [key, op] of now) {
    const before = saved.operations[key];
    if (before === undefined) (key.startsWith('guard:') ? blocking : notReviewed).push(`new since the plan: ${op.label}`);
    else if (before !== op.fingerprint) blocking.push(`changed since the plan: ${op.label}`);
  }
  for (const key of Object.keys(saved.operations)) {
    if (!now.has(key)) blocking.push(`no longer in a fresh plan: ${savedLabels.get(key)?.label ?? key}`);
  }
  blocking.push(...basisDrift(saved.basis, freshBasis, touchedObjects(saved.plan)));
  return { blocking, notReviewed };
}

export function firstLines(lines: string[], max = 20): string[] {
  return lines.length > max ? [...lines.slice(0, max), `… and ${lines.length - max} more`] : lines;
}
