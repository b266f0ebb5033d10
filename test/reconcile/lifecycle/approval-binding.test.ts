/**
 * approve-deletes as the daemon stores it (real Redis): the approval carries the counts that
 * were held, and a plan is released by it only when it removes no more than that.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { TenantState } from '../../../src/jobs/tenant-state.ts';
import { evaluateGuard } from '../../../src/reconcile/guard.ts';

const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: false, maxRetriesPerRequest: 1 });
afterAll(() => redis.quit());

const limits = { maxDeletes: 5, maxDeletePercent: 100, maxMemberRemovals: 500, maxMemberRemovalPercent: 100 };
const guard = (destructive: number, memberRemovals: number, approval: Awaited<ReturnType<TenantState['approval']>>) =>
  evaluateGuard({
    destructive,
    managed: 100,
    memberRemovals,
    members: 100,
    sourceEmpty: false,
    sourceRejectedUsers: 0,
    sourceMembersEmpty: false,
    unidentified: [],
    limits,
    allowDeletes: false,
    approval,
  });

describe('approval bound to the held plan (daemon state)', () => {
  it('stores the held counts with the approval; a larger plan is not released by it', async () => {
    const state = new TenantState(redis, `test-approval-${randomUUID()}`, 'acme');
    expect(await state.approval()).toBeUndefined();
    await state.setHeldDeletes({
      count: 8,
      memberRemovals: 3,
      reasons: ['8 deactivations/deletions exceed guards.maxDeletes (5)'],
      at: Date.now(),
      runId: 'r1',
    });
    expect(await state.heldDeletes()).toMatchObject({ count: 8, memberRemovals: 3 });
    expect(await state.approveHeld('ops')).toMatchObject({ count: 8, memberRemovals: 3 });
    const approval = await state.approval();
    expect(approval).toEqual({ destructive: 8, memberRemovals: 3 });

    expect(guard(8, 3, approval)).toMatchObject({ tripped: false, overridden: true });
    expect(guard(6, 0, approval)).toMatchObject({ tripped: false, overridden: true });
    expect(guard(9, 3, approval)).toMatchObject({ tripped: true, overridden: false });
    expect(guard(8, 4, approval).tripped).toBe(true);
    // Consumed by one run.
    expect(await state.takeApproval()).toBe(true);
    expect(await state.approval()).toBeUndefined();
    await state.setHeldDeletes(undefined);
  });

  it('an approval written without counts (older release) releases nothing', async () => {
    const prefix = `test-approval-${randomUUID()}`;
    const state = new TenantState(redis, prefix, 'acme');
    await redis.set(`${prefix}:{acme}:approve-deletes`, JSON.stringify({ by: 'ops', at: Date.now() }), 'EX', 60);
    const approval = await state.approval();
    expect(approval).toEqual({ destructive: 0, memberRemovals: 0 });
    expect(guard(8, 0, approval).tripped).toBe(true);
    await redis.del(`${prefix}:{acme}:approve-deletes`);
  });
});
