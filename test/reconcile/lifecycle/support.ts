/**
 * Shared steps of the lifecycle scenarios: the exact platform state as sorted lines, one
 * apply that must not fail, and the proof of convergence (the next plan changes nothing).
 */
import { expect } from 'vitest';
import type { ScimUser } from '../../../src/platform/scim/types.ts';
import type { Plan } from '../../../src/reconcile/plan-types.ts';
import type { Simulator } from '../../../src/simulator/index.ts';
import type { ApplyOutput, DirUser, Workspace } from '../../helpers/reconcile-harness.ts';

/** Every platform user as `userName externalId active|inactive`, sorted. */
export function users(sim: Simulator): string[] {
  return sim.store
    .users()
    .map((u) => `${u.userName} ${u.externalId ?? '-'} ${u.active === false ? 'inactive' : 'active'}`)
    .sort();
}

/** Every platform group as `displayName: member userNames`, sorted. */
export function groups(sim: Simulator): string[] {
  return sim.store
    .groups()
    .map(
      (g) =>
        `${g.displayName}: ${(g.members ?? [])
          .map((m) => sim.store.getUser(m.value)?.userName ?? `?${m.value}`)
          .sort()
          .join(' ')}`,
    )
    .sort();
}

export function byName(sim: Simulator, userName: string): ScimUser {
  const u = sim.store.getUserByUserName(userName);
  if (!u) throw new Error(`no platform user ${userName}`);
  return u;
}

/** One in-process plan + apply that must not fail anything. */
export async function apply(ws: Workspace, opts: { allowDeletes?: boolean } = {}): Promise<ApplyOutput> {
  const out = await ws.applyInProcess(opts);
  expect(out.result.failed).toEqual([]);
  expect(out.result.aborted).toBeUndefined();
  return out;
}

/** Converged: the next plan has no change and holds nothing. */
export async function expectConverged(ws: Workspace): Promise<Plan> {
  const plan = await ws.planInProcess();
  expect(plan.summary.changes, JSON.stringify(plan.summary)).toBe(0);
  expect(plan.guard.tripped).toBe(false);
  return plan;
}

export function user(ext: string, userName: string, extra: Partial<DirUser> = {}): DirUser {
  const local = userName.split('@')[0] ?? userName;
  return { externalId: ext, userName, givenName: local, familyName: ext, emails: userName, ...extra };
}
