/**
 * Letting the server set the pace: 503 + Retry-After on the listing and 429 on PATCHes are
 * retried (the Retry-After waits are honoured) and the run still converges with exit 0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.ts';
import { SCIM, createWorkspace, people, requestsTo, startSim, type Workspace } from '../helpers/reconcile-harness.ts';

describe('retries with Retry-After through the CLI', () => {
  let sim: Simulator;
  let ws: Workspace;

  beforeAll(async () => {
    sim = await startSim();
    ws = createWorkspace(sim, { directory: { users: people(1, 10), groups: [] } });
    await ws.applyInProcess();
    // Drift on three users, so the run has PATCHes to make.
    for (const n of [2, 5, 8]) {
      const u = sim.store.getUserByUserName(`user${n}@example.com`);
      if (!u) throw new Error(`user${n} missing`);
      sim.store.updateUser(u.id, { displayName: `Drifted ${n}` });
    }
    sim.setFaults([
      { kind: 'status', method: 'GET', pathPrefix: `${SCIM}/Users`, status: 503, retryAfterSeconds: 1, times: 2 },
      { kind: 'status', method: 'PATCH', pathPrefix: `${SCIM}/Users/`, status: 429, times: 2 },
    ]);
    sim.clearRequests();
  });
  afterAll(() => sim.close());

  it('waits out two 503s on the listing and retries 429ed PATCHes, then succeeds', async () => {
    const run = await ws.apply();
    expect(run.code, run.stderr).toBe(0);
    expect(run.out.result.failed).toEqual([]);
    expect(run.out.result.succeeded['user.update']).toBe(3);
    expect(run.durationMs).toBeGreaterThanOrEqual(1900);

    // The listing: 503, 503, then 200 on the same page, each retry after the server's 1 s.
    const firstPage = requestsTo(sim, 'GET', `${SCIM}/Users`).filter(
      (r) => r.path === `${SCIM}/Users` && (r.query['startIndex'] ?? '1') === '1',
    );
    expect(firstPage.map((r) => r.status).slice(0, 3)).toEqual([503, 503, 200]);
    const [a, b, c] = firstPage;
    expect((b?.at ?? 0) - (a?.at ?? 0)).toBeGreaterThanOrEqual(950);
    expect((c?.at ?? 0) - (b?.at ?? 0)).toBeGreaterThanOrEqual(950);

    // PATCHes: two refused with 429, then every update went through (3 successful PATCHes).
    const patches = requestsTo(sim, 'PATCH', `${SCIM}/Users/`);
    expect(patches.filter((r) => r.status === 429)).toHaveLength(2);
    expect(patches.filter((r) => r.status === 200)).toHaveLength(3);
    for (const n of [2, 5, 8]) expect(sim.store.getUserByUserName(`user${n}@example.com`)?.displayName).toBe(`Given${n} Family${n}`);
  });
});
