/**
 * A Redis failover in the middle of an apply: the master holding the tenant's state (the
 * chunks' completion marks) is SIGKILLed while hundreds of PATCHes are under way, once in a
 * six-node Cluster (three masters, three replicas) and once in a Sentinel set (master,
 * replica, three sentinels). The promotion takes seconds; no user is PATCHed twice, /readyz
 * says 503 while the tenant's slot has no master, and the next run has nothing left to do.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { person, requestsTo, SCIM, startSim } from '../helpers/reconcile-harness.ts';
import { createDaemonWorkspace, httpGet, waitFor, type DaemonProcess } from '../helpers/daemon-harness.ts';
import { startRedisCluster, startRedisSentinelSet, type FailoverTopology } from '../helpers/redis-topology.ts';
import type { Simulator } from '../../src/simulator/index.ts';
import { runsFinished } from './support.ts';

const TOKEN = 'failover-token-3b9d27e1';
const USERS = 240;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const users = (renamed: boolean): ReturnType<typeof person>[] =>
  Array.from({ length: USERS }, (_, i) => person(i + 1, renamed ? { familyName: `Renamed${i + 1}` } : {}));

/** PATCH requests per user path, only those sent more than once. */
function repeatedPatches(sim: Simulator): Record<string, number> {
  const per = new Map<string, number>();
  for (const r of requestsTo(sim, 'PATCH', `${SCIM}/Users/`)) if (r.status < 300) per.set(r.path, (per.get(r.path) ?? 0) + 1);
  return Object.fromEntries([...per].filter(([, n]) => n > 1));
}

const renamedOnPlatform = (sim: Simulator): number => sim.store.users().filter((u) => u.name?.familyName?.startsWith('Renamed')).length;

async function failoverMidApply(topology: FailoverTopology, redis: Record<string, unknown>): Promise<void> {
  const sim = await startSim({ tokens: [{ token: TOKEN }] });
  cleanups.push(() => sim.close());
  const ws = createDaemonWorkspace({
    redisUrl: `redis://127.0.0.1:${topology.nodes[0]?.port}`,
    env: { SIM_URL: sim.url, SIM_TOKEN: TOKEN },
  });
  cleanups.push(() => ws.cleanup());
  ws.writeDirectory({ users: users(false), groups: [] });
  ws.writeConfig({ redis, daemon: { applyChunkSize: 10, jobAttempts: 5 } });
  const d: DaemonProcess = await ws.spawnDaemon();
  await ws.trigger();
  await waitFor(() => runsFinished([d], 'reconcile').some((l) => l['result'] === 'success'), 'the creating run', 30_000);
  expect(sim.store.counts().users).toBe(USERS);

  // Every user changes: USERS PATCHes, each taking 60 ms on the platform.
  ws.writeDirectory({ users: users(true), groups: [] });
  sim.setFaults([{ kind: 'latency', method: 'PATCH', latencyMs: 60 }]);
  sim.clearRequests();
  const before = runsFinished([d], 'reconcile').length;
  await ws.trigger();
  await waitFor(() => requestsTo(sim, 'PATCH', `${SCIM}/Users/`).length >= USERS / 6, 'the apply to be under way', 30_000, 10);
  const dead = await topology.killMasterOf(`${ws.keyPrefix}:{acme}:quarantine`);
  const readiness: number[] = [];
  const promoted = topology.promoted(`${ws.keyPrefix}:{acme}:quarantine`, dead).then(() => true);
  while (!(await Promise.race([promoted, new Promise<false>((r) => setTimeout(() => r(false), 150))]))) {
    readiness.push((await httpGet(`${d.url}/readyz`, 3_000)).status);
  }
  await waitFor(() => renamedOnPlatform(sim) === USERS, 'every user renamed', 45_000, 100);
  await waitFor(() => runsFinished([d], 'reconcile').length > before, 'the run to finish', 30_000, 100);

  expect(repeatedPatches(sim)).toEqual({});
  // While the tenant's slot had no master, the daemon was not ready.
  expect(readiness).toContain(503);
  await waitFor(async () => (await httpGet(`${d.url}/readyz`)).status === 200, '/readyz after the promotion', 15_000, 100);

  // The next run converges: nothing is left to write.
  sim.clearRequests();
  const done = runsFinished([d], 'reconcile').length;
  await ws.trigger();
  await waitFor(() => runsFinished([d], 'reconcile').length > done, 'the next run', 30_000, 100);
  expect(runsFinished([d], 'reconcile').at(-1)?.['result']).toBe('success');
  expect(requestsTo(sim, 'PATCH', `${SCIM}/Users/`)).toHaveLength(0);
  expect(d.output()).not.toMatch(/^\s+at /m);
  const stopped = await Promise.race([d.stop(), new Promise<'hung'>((r) => setTimeout(() => r('hung'), 15_000))]);
  expect(stopped === 'hung' ? 'hung' : stopped.code).toBe(0);
}

describe('Redis failover mid-apply', () => {
  it('Cluster master holding the tenant state SIGKILLed mid-apply: its replica is promoted, no user is PATCHed twice', {
    timeout: 120_000,
  }, async () => {
    const cluster = await startRedisCluster({ replicas: 1, nodeTimeoutMs: 5_000 });
    cleanups.push(() => cluster.stop());
    await failoverMidApply(cluster, { cluster: { nodes: cluster.nodes } });
  });

  it('Sentinel master SIGKILLed mid-apply: the sentinels promote the replica, no user is PATCHed twice', { timeout: 120_000 }, async () => {
    const set = await startRedisSentinelSet({ downAfterMs: 1_000 });
    cleanups.push(() => set.stop());
    await failoverMidApply(set, { sentinel: { name: set.masterName, nodes: set.nodes } });
  });
});
