/**
 * Interruptions: SIGTERM during a run (clean exit within the bound, the work completed
 * after the restart), SIGKILL of the replica running a reconcile (another replica takes the
 * stalled job over), and Redis restarted in the middle of a run (readiness follows Redis,
 * liveness does not, and the run completes). Nothing is ever created twice.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.ts';
import { people, requestsTo, SCIM, startSim, usersNamed } from '../helpers/reconcile-harness.ts';
import {
  createDaemonWorkspace,
  getJson,
  httpGet,
  jobHashes,
  metricValue,
  waitFor,
  type DaemonWorkspace,
} from '../helpers/daemon-harness.ts';
import { startRedisServer } from '../helpers/redis-server.ts';
import { expectNothingLeft, runsFinished } from './support.ts';

const TOKEN = 'lifecycle-token-7c2b9e4f1a';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A platform whose user creates take `latencyMs` each: slow enough to interrupt a run. */
async function platform(latencyMs = 0): Promise<Simulator> {
  const sim = await startSim({
    tokens: [{ token: TOKEN }],
    faults: latencyMs > 0 ? [{ kind: 'latency', latencyMs, method: 'POST', pathPrefix: `${SCIM}/Users` }] : [],
  });
  cleanups.push(() => sim.close());
  return sim;
}

function workspace(sim: Simulator, redisUrl?: string): DaemonWorkspace {
  const ws = createDaemonWorkspace({ env: { SIM_URL: sim.url, SIM_TOKEN: TOKEN }, ...(redisUrl ? { redisUrl } : {}) });
  cleanups.push(() => ws.cleanup());
  return ws;
}

/** Every user of the directory exists once on the platform. */
function expectEachOnce(sim: Simulator, n: number): void {
  expect(sim.store.counts().users).toBe(n);
  for (const p of people(1, n)) expect(usersNamed(sim, p.userName), p.userName).toBe(1);
}

const lifecycleDaemon = { shutdownTimeoutSeconds: 2, jobLockSeconds: 2, applyChunkSize: 4, concurrency: { apply: 1 } };

describe('daemon lifecycle', () => {
  it('SIGTERM during a run exits cleanly within the bound; after the restart the work is completed', async () => {
    const sim = await platform(60);
    const ws = workspace(sim);
    ws.writeDirectory({ users: people(1, 40), groups: [] });
    ws.writeConfig({ daemon: lifecycleDaemon });
    const d1 = await ws.spawnDaemon();
    await ws.trigger();
    await waitFor(() => sim.store.counts().users >= 8, 'a fifth of the users', 15_000, 10);

    const stop = await d1.stop('SIGTERM');
    expect(stop.code).toBe(0);
    expect(stop.ms).toBeLessThan(2_000 + 1_500);
    expect(d1.logs.some((l) => l.msg === 'daemon stopped')).toBe(true);
    const createdBeforeRestart = sim.store.counts().users;
    // Abandoned, not failed: the job is still active in Redis (its lock lapses) and no attempt was spent.
    const interrupted = String(d1.logs.find((l) => l.msg === 'reconcile plan')?.['jobId']);
    expect(await ws.redis().lrange(`{${ws.keyPrefix}}:reconcile:active`, 0, -1)).toEqual([interrupted]);
    const job = (await jobHashes(ws, 'reconcile')).find((j) => j.id === interrupted);
    expect(job?.hash['failedReason']).toBeUndefined();
    expect(job?.hash['atm'] ?? '0').toBe('0');
    expect(createdBeforeRestart).toBeLessThan(40);

    const d2 = await ws.spawnDaemon();
    const done = await waitFor(
      () => runsFinished([d2], 'reconcile').find((l) => l['result'] === 'success'),
      'the interrupted run to complete on the new daemon',
      20_000,
    );
    // It is the interrupted job itself, taken over as stalled, not a new run.
    expect(done['jobId']).toBe(interrupted);
    expectEachOnce(sim, 40);
    expect(requestsTo(sim, 'POST', `${SCIM}/Users`).filter((r) => r.status === 201)).toHaveLength(40);
    const status = await getJson<{ tenants: Array<{ tenant: string; runs: { reconcile: Array<{ result: string }> } }> }>(
      `${d2.url}/status`,
    );
    expect(status.body.tenants.find((t) => t.tenant === 'acme')?.runs.reconcile[0]?.result).toBe('success');
    await expectNothingLeft(ws, d2, sim);
    expect((await d2.stop()).code).toBe(0);
  });

  it('SIGKILL of the replica running a reconcile: the other replica takes the stalled run over, nothing is duplicated', async () => {
    const sim = await platform(60);
    const ws = workspace(sim);
    ws.writeDirectory({ users: people(1, 48), groups: [] });
    ws.writeConfig({ daemon: lifecycleDaemon });
    const daemons = await Promise.all([ws.spawnDaemon(), ws.spawnDaemon()]);
    await ws.trigger();
    const planner = await waitFor(
      () => daemons.find((d) => d.logs.some((l) => l.msg === 'reconcile plan')),
      'the replica running the reconcile',
      15_000,
      10,
    );
    await waitFor(() => sim.store.counts().users >= 10, 'some users', 15_000, 10);
    const killed = await planner.stop('SIGKILL');
    expect(killed.signal).toBe('SIGKILL');
    const survivor = daemons.find((d) => d !== planner)!;

    const done = await waitFor(
      () => runsFinished([survivor], 'reconcile').find((l) => l['result'] === 'success'),
      'the survivor to finish the run',
      30_000,
    );
    expect(done['jobId']).toBe(planner.logs.find((l) => l.msg === 'reconcile plan')?.['jobId']);
    expectEachOnce(sim, 48);
    // A create sent again (in flight at the kill, or re-planned while the dead replica's chunks
    // were still being finished) meets the existing user: 409, adopted, never duplicated.
    const posts = requestsTo(sim, 'POST', `${SCIM}/Users`);
    expect(posts.filter((r) => r.status === 201)).toHaveLength(48);
    expect(posts.filter((r) => r.status !== 201 && r.status !== 409)).toEqual([]);
    await expectNothingLeft(ws, survivor, sim);
    expect((await survivor.stop()).code).toBe(0);
  });

  it('a daemon that cannot start (its port is taken) exits with an error instead of hanging', async () => {
    const sim = await platform();
    const ws = workspace(sim);
    ws.writeDirectory({ users: people(1, 3), groups: [] });
    ws.writeConfig({ daemon: { http: { port: Number(new URL(sim.url).port) } } });
    const d = await ws.spawnDaemon({ waitStarted: false });
    const exit = await Promise.race([d.exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 8_000))]);
    expect(exit).toEqual({ code: 2, signal: null });
    expect(d.output()).toContain(`daemon.http.port: 127.0.0.1:${new URL(sim.url).port} is already in use`);
  });

  it('Redis restarted mid-run: /readyz follows Redis, /healthz stays 200, and the run completes', async () => {
    const redis = await startRedisServer();
    cleanups.push(() => redis.destroy());
    const sim = await platform(50);
    const ws = workspace(sim, redis.url);
    ws.writeDirectory({ users: people(1, 40), groups: [] });
    ws.writeConfig({ daemon: { ...lifecycleDaemon, jobLockSeconds: 10 } });
    const d = await ws.spawnDaemon();
    expect((await httpGet(`${d.url}/readyz`)).status).toBe(200);
    await ws.trigger();
    await waitFor(() => sim.store.counts().users >= 8, 'a fifth of the users', 15_000, 10);

    await redis.stop();
    const notReady = await waitFor(
      async () => {
        const r = await getJson<{ status: string; checks: Record<string, unknown> }>(`${d.url}/readyz`);
        return r.status === 503 ? r.body : undefined;
      },
      '/readyz to report Redis down',
      10_000,
      100,
    );
    expect(notReady.status).toBe('not_ready');
    expect(notReady.checks['redis']).not.toBe(true);
    expect((await httpGet(`${d.url}/healthz`)).status).toBe(200);
    // A scrape during the outage still answers; queue depths are dropped, not stale.
    const scrape = await httpGet(`${d.url}/metrics`);
    expect(scrape.status).toBe(200);
    expect(metricValue(scrape.body, 'scimsync_build_info')).toBe(1);
    expect(metricValue(scrape.body, 'scimsync_queue_jobs')).toBeUndefined();
    expect((await httpGet(`${d.url}/healthz`)).status).toBe(200);
    const createdWhileDown = sim.store.counts().users;

    await redis.start();
    await waitFor(async () => (await httpGet(`${d.url}/readyz`)).status === 200, '/readyz to recover', 15_000, 100);
    await waitFor(() => runsFinished([d], 'reconcile').some((l) => l['result'] === 'success'), 'the run to complete', 30_000);
    expect(createdWhileDown).toBeLessThan(40);
    expectEachOnce(sim, 40);
    await expectNothingLeft(ws, d, sim);
    expect((await d.stop()).code).toBe(0);
  });
});
