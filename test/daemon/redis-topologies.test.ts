/**
 * The daemon against Redis Cluster (three masters; BullMQ keys hash-tagged by `{keyPrefix}`,
 * tenant state by `{tenant}`) and against Redis Sentinel (the master found through a sentinel):
 * and over TLS with a password file: a triggered reconcile fans out, completes, and `status`
 * and /readyz work.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { people, startSim } from '../helpers/reconcile-harness.ts';
import { createDaemonWorkspace, getJson, waitFor, type DaemonWorkspace } from '../helpers/daemon-harness.ts';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startRedisCluster, startRedisSentinel, startRedisTls, type RedisTopology } from '../helpers/redis-topology.ts';
import { runsFinished } from './support.ts';

const TOKEN = 'topology-token-8c1f0e';
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function reconcileThrough(
  topology: RedisTopology,
  redisSection: Record<string, unknown>,
  setup?: (ws: DaemonWorkspace) => void,
): Promise<string> {
  const sim = await startSim({ tokens: [{ token: TOKEN }] });
  cleanups.push(() => sim.close());
  const ws: DaemonWorkspace = createDaemonWorkspace({
    redisUrl: `redis://127.0.0.1:${topology.nodes[0]?.port}`,
    env: { SIM_URL: sim.url, SIM_TOKEN: TOKEN },
  });
  cleanups.push(() => ws.cleanup());
  ws.writeDirectory({ users: people(1, 12), groups: [{ externalId: 'g-1', displayName: 'Team', members: ['u-1', 'u-2', 'u-3'] }] });
  setup?.(ws);
  ws.writeConfig({ redis: redisSection, daemon: { applyChunkSize: 4 } });
  const d = await ws.spawnDaemon();
  expect((await getJson<{ ready: boolean }>(`${d.url}/readyz`)).status).toBe(200);
  await ws.trigger();
  await waitFor(() => runsFinished([d], 'reconcile').length === 1, 'the reconcile run', 20_000);
  expect(runsFinished([d], 'reconcile')[0]?.['result']).toBe('success');
  expect(sim.store.counts()).toEqual({ users: 12, groups: 1 });
  expect(sim.store.getGroupByDisplayName('Team')?.members).toHaveLength(3);
  const status = await ws.cli(['status', '--config', ws.configPath]);
  expect(status.code, status.stderr).toBe(0);
  expect(status.stdout).toMatch(/tenant acme[\s\S]*reconcile: last success/);
  expect((await d.stop()).code).toBe(0);
  return d.output() + status.stdout + status.stderr;
}

describe('Redis topologies', () => {
  it('Redis Cluster: queues and tenant state live in hash-tagged slots; a fanned-out reconcile completes', async () => {
    const cluster = await startRedisCluster();
    cleanups.push(() => cluster.stop());
    await reconcileThrough(cluster, { cluster: { nodes: cluster.nodes } });
  });

  it('Redis Sentinel: the daemon finds the master through the sentinel', async () => {
    const sentinel = await startRedisSentinel();
    cleanups.push(() => sentinel.stop());
    await reconcileThrough(sentinel, { sentinel: { name: sentinel.masterName, nodes: sentinel.nodes } });
  });
  it('TLS with a private CA and a password from a file (rediss://): the password never reaches the logs', async () => {
    const tls = await startRedisTls();
    cleanups.push(() => tls.stop());
    const output = await reconcileThrough(
      tls,
      {
        url: `rediss://127.0.0.1:${tls.nodes[0]?.port}`,
        passwordFile: 'redis-password',
        tls: { caFile: tls.caFile, servername: 'localhost' },
      },
      (ws) => writeFileSync(join(ws.dir, 'redis-password'), `${tls.password}\n`),
    );
    expect(output).not.toContain(tls.password as string);
  });
});
