/**
 * Existing platform objects and ambiguous creates: an unmanaged user with the same userName
 * in another case is skipped (adoptExisting false) or adopted (true) and then owned; a POST
 * that the platform processed but whose answer was lost, or that lost a race (409), never
 * leaves a duplicate.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { applyReconcile, planReconcile } from '../../src/reconcile/engine.ts';
import type { Simulator } from '../../src/simulator/index.ts';
import {
  SCIM,
  createWorkspace,
  people,
  person,
  requestsTo,
  startSim,
  usersNamed,
  writeRequests,
  type Directory,
} from '../helpers/reconcile-harness.ts';

const ADA = person(100, {
  userName: 'ada.lovelace@example.com',
  givenName: 'Ada',
  familyName: 'Lovelace',
  emails: 'ada.lovelace@example.com',
});

function dir(extra = [ADA]): Directory {
  const users = [...people(1, 3), ...extra];
  return { users, groups: [{ externalId: 'g-team', displayName: 'Team', members: users.map((u) => u.externalId) }] };
}

function postedUserNames(sim: Simulator): string[] {
  return requestsTo(sim, 'POST', `${SCIM}/Users`).map((r) => String((r.body as { userName?: unknown }).userName).toLowerCase());
}

describe('adopting existing platform users', () => {
  let sim: Simulator;
  afterEach(() => sim.close());

  it('same userName in another case, unmanaged: skipped without adoptExisting, adopted and owned with it', async () => {
    sim = await startSim();
    const hand = sim.store.createUser({ userName: 'Ada.Lovelace@Example.COM', displayName: 'Ada (created by hand)', active: true });
    const ws = createWorkspace(sim, { directory: dir() });

    const skip = await ws.apply();
    expect(skip.code, skip.stderr).toBe(0);
    expect(skip.out.plan.skipped).toContainEqual({
      kind: 'user',
      ref: 'ada.lovelace@example.com',
      reason: expect.stringContaining('not managed by this tool (set provisioning.matching.adoptExisting: true'),
      code: 'unmanaged',
    });
    // The source group lists her and she exists on the platform: she is a wanted member even unmanaged (issue #14).
    expect(skip.out.plan.skipped).not.toContainEqual(expect.objectContaining({ kind: 'member', ref: 'Team ← u-100' }));
    expect(sim.store.groupIdsOf(hand.id)).toHaveLength(1);
    expect(postedUserNames(sim)).not.toContain('ada.lovelace@example.com');
    expect(postedUserNames(sim)).toHaveLength(3);
    expect(usersNamed(sim, 'ada.lovelace@example.com')).toBe(1);
    expect(sim.store.getUser(hand.id)?.displayName).toBe('Ada (created by hand)'); // untouched
    expect(ws.readLedger()?.users[hand.id]).toBeUndefined();

    ws.writeConfig({ provisioning: { matching: { adoptExisting: true } } });
    sim.clearRequests();
    const adopt = await ws.applyInProcess();
    expect(adopt.result.failed).toEqual([]);
    const entry = adopt.plan.users.update.find((u) => u.id === hand.id);
    expect(entry?.adopt).toBe(true);
    expect(entry?.changes).toContainEqual({ path: 'externalId', before: null, after: 'u-100' });
    expect(entry?.changes).toContainEqual({ path: 'displayName', before: 'Ada (created by hand)', after: 'Ada Lovelace' });
    expect(requestsTo(sim, 'POST', `${SCIM}/Users`)).toEqual([]);
    expect(usersNamed(sim, 'ada.lovelace@example.com')).toBe(1);
    expect(sim.store.getUser(hand.id)).toMatchObject({ externalId: 'u-100', displayName: 'Ada Lovelace' });
    expect(ws.readLedger()?.users[hand.id]).toEqual({ externalId: 'u-100' });
    expect(sim.store.groupIdsOf(hand.id)).toHaveLength(1);

    // Ours now: when Ada leaves the source she is deactivated like any managed user.
    ws.writeDirectory(dir([]));
    const leave = await ws.applyInProcess();
    expect(leave.result.failed).toEqual([]);
    expect(leave.plan.users.deactivate.map((u) => u.id)).toEqual([hand.id]);
    expect(sim.store.getUser(hand.id)?.active).toBe(false);
  });

  it('POSTs processed but answered by a connection reset: each user exists exactly once', async () => {
    sim = await startSim({ faults: [{ kind: 'reset-after-commit', method: 'POST', pathPrefix: `${SCIM}/Users`, times: 3 }] });
    const ws = createWorkspace(sim, { directory: { users: people(1, 6), groups: [] } });
    const run = await ws.applyInProcess();
    const posts = requestsTo(sim, 'POST', `${SCIM}/Users`);
    expect(posts.filter((r) => r.status === 0)).toHaveLength(3); // the three resets did happen
    expect(run.result.failed).toEqual([]);
    expect(run.result.succeeded).toEqual({ 'user.create': 3, 'user.adopt': 3 });
    for (const u of people(1, 6)) expect(usersNamed(sim, u.userName), u.userName).toBe(1);
    expect(sim.store.counts().users).toBe(6);
    expect(Object.keys(ws.readLedger()?.users ?? {})).toHaveLength(6);
    expect(ws.readLedger()?.pending).toEqual([]);

    sim.clearRequests();
    const again = await ws.applyInProcess();
    expect(again.plan.summary.changes).toBe(0);
    expect(writeRequests(sim)).toEqual([]);
  });

  it('a user created by someone else between plan and apply (409 on POST) is adopted, not duplicated', async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, {
      directory: { users: people(1, 3), groups: [] },
      config: { provisioning: { matching: { adoptExisting: true } } },
    });
    const ctx = await ws.context();
    try {
      const planned = await planReconcile(ctx, { allowDeletes: false });
      expect(planned.plan.users.create).toHaveLength(3);
      const racer = sim.store.createUser({ userName: 'USER2@example.com', active: true });
      const result = await applyReconcile(ctx, planned, {});
      expect(result.failed).toEqual([]);
      expect(result.succeeded).toEqual({ 'user.create': 2, 'user.adopt': 1 });
      expect(
        requestsTo(sim, 'POST', `${SCIM}/Users`)
          .map((r) => r.status)
          .sort(),
      ).toEqual([201, 201, 409]);
      expect(usersNamed(sim, 'user2@example.com')).toBe(1);
      expect(planned.ledger.has('user', racer.id)).toBe(true);
    } finally {
      await ctx.close();
    }
  });
  it("without adoptExisting, a 409 on create against someone else's user fails that user and adopts nothing", async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, { directory: { users: people(1, 3), groups: [] } });
    const ctx = await ws.context();
    try {
      const planned = await planReconcile(ctx, { allowDeletes: false });
      expect(planned.plan.users.create).toHaveLength(3);
      const racer = sim.store.createUser({ userName: 'USER2@example.com', active: true });
      const result = await applyReconcile(ctx, planned, {});
      expect(result.succeeded).toEqual({ 'user.create': 2 });
      expect(result.failed).toEqual([
        expect.objectContaining({
          action: 'user.create',
          code: 'E_CONFLICT',
          message: expect.stringMatching(/unmanaged user .*adoptExisting/),
        }),
      ]);
      expect(usersNamed(sim, 'user2@example.com')).toBe(1);
      expect(planned.ledger.has('user', racer.id)).toBe(false);
    } finally {
      await ctx.close();
    }
  });
});
