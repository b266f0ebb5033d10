/**
 * Nothing forgotten on a crash, nothing false reported at shutdown: a reconcile whose apply
 * jobs vanished with Redis's data ends with a clear error within the lease (not after the
 * 6-hour phase timeout); the time of a deactivation survives a crash right after the PATCH;
 * at the shutdown bound, apply chunks stop between tasks instead of logging false failures
 * against closed connections.
 */
import { describe, expect, it } from 'vitest';
import { people, requestsTo, SCIM, usersNamed } from '../helpers/reconcile-harness.ts';
import { createDaemonWorkspace, waitFor } from '../helpers/daemon-harness.ts';
import { startRedisServer } from '../helpers/redis-server.ts';
import { closingAfterEach, expectNothingLeft, runsFinished } from './support.ts';

const TOKEN = 'crash-safety-token-9d4c2a7e1b';
const { sim, workspace } = closingAfterEach();

describe('crash safety of the daemon', () => {
  it('Redis restarted without persistence mid-apply: the run ends with E_JOBS_VANISHED within the lease', async () => {
    const redis = await startRedisServer({ persistence: false });
    const platform = await sim(TOKEN, { faults: [{ kind: 'latency', latencyMs: 150, method: 'POST', pathPrefix: `${SCIM}/Users` }] });
    const ws = createDaemonWorkspace({ redisUrl: redis.url, env: { SIM_URL: platform.url, SIM_TOKEN: TOKEN } });
    try {
      ws.writeDirectory({ users: people(1, 30), groups: [] });
      ws.writeConfig({ daemon: { jobLockSeconds: 4, applyChunkSize: 5, concurrency: { apply: 1 } } });
      const d = await ws.spawnDaemon();
      await ws.trigger();
      await waitFor(() => platform.store.counts().users >= 5, 'some users', 15_000, 10);
      await redis.stop();
      await redis.start();
      const restarted = Date.now();

      const end = await waitFor(() => runsFinished([d], 'reconcile')[0], 'the run to end', 15_000);
      expect(end['result']).toBe('failed');
      expect(end['code']).toBe('E_JOBS_VANISHED');
      // Within the lease (4 s) plus a poll, not after the 6-hour phase timeout.
      expect(end.time - restarted).toBeLessThan(4_000 + 2_000);
      const failed = d.logs.find((l) => l.msg === 'reconcile run failed');
      expect(String(failed?.['err'])).toMatch(/gone from Redis: Redis restarted without persistence/);
      // The chunk in progress stopped too (its lease went with the data): no create after the end.
      await new Promise((r) => setTimeout(r, 1_000));
      expect(requestsTo(platform, 'POST', `${SCIM}/Users`).filter((r) => r.at > end.time)).toEqual([]);
      expect(platform.store.counts().users).toBeLessThan(30);
      // Recorded in the (new) history; not a quarantine-worthy failure of the tenant.
      const history = (await ws.redis().lrange(`${ws.keyPrefix}:{acme}:history:reconcile`, 0, -1)).map(
        (h) => JSON.parse(h) as { result: string; detail: { code: string } },
      );
      expect(history.map((h) => [h.result, h.detail.code])).toEqual([['failed', 'E_JOBS_VANISHED']]);
      expect(await ws.redis().exists(`${ws.keyPrefix}:{acme}:quarantine`)).toBe(0);

      // The next run plans again from the platform and completes the work, each user once.
      await ws.trigger();
      await waitFor(() => runsFinished([d], 'reconcile')[1], 'the next run', 30_000);
      expect(runsFinished([d], 'reconcile')[1]?.['result']).toBe('success');
      for (const p of people(1, 30)) expect(usersNamed(platform, p.userName)).toBe(1);
      expect((await d.stop()).code).toBe(0);
    } finally {
      await ws.cleanup();
      await redis.destroy();
    }
  });

  it('leaver, crash right after the PATCH active:false: the time of the deactivation is in the ledger, so the grace period of deleteAfterDays still runs', async () => {
    const platform = await sim(TOKEN);
    const ws = workspace({ SIM_URL: platform.url, SIM_TOKEN: TOKEN });
    ws.writeDirectory({ users: people(1, 10), groups: [] });
    ws.writeConfig({ provisioning: { deprovision: { action: 'deactivate', deleteAfterDays: 30 } }, daemon: { jobLockSeconds: 2 } });
    const a = await ws.spawnDaemon();
    await ws.trigger();
    await waitFor(() => runsFinished([a], 'reconcile')[0], 'the first run', 20_000);
    const leaver = platform.store.users().find((u) => u.externalId === 'u-10')!;

    // u-10 leaves. The platform applies the PATCH but its answer trickles in; the replica is
    // killed before it has read it (before the end of its run).
    ws.writeDirectory({ users: people(1, 9), groups: [] });
    platform.setFaults([{ kind: 'drip', method: 'PATCH', pathPrefix: `${SCIM}/Users`, chunkBytes: 4, delayMs: 250, times: 1 }]);
    const before = Date.now();
    await ws.trigger();
    await waitFor(() => platform.store.getUser(leaver.id)?.active === false, 'the deactivation to reach the platform', 15_000, 5);
    await a.stop('SIGKILL');
    const killed = Date.now();

    const ledgerKey = `${ws.keyPrefix}:{acme}:ledger:users`;
    const entry = JSON.parse((await ws.redis().hget(ledgerKey, leaver.id)) ?? '{}') as { externalId?: string; deactivatedAt?: number };
    expect(entry.externalId).toBe('u-10');
    expect(entry.deactivatedAt).toBeGreaterThanOrEqual(before);
    expect(entry.deactivatedAt).toBeLessThanOrEqual(killed);

    // The next replica recovers the run: nothing to do (the grace period runs), and the time stays.
    const b = await ws.spawnDaemon();
    const done = await waitFor(() => runsFinished([b], 'reconcile')[0], 'the recovered run', 30_000);
    expect(done['result']).toBe('success');
    const after = JSON.parse((await ws.redis().hget(ledgerKey, leaver.id)) ?? '{}') as { deactivatedAt?: number };
    expect(after.deactivatedAt).toBe(entry.deactivatedAt);
    expect(platform.store.getUser(leaver.id)?.active).toBe(false);
    await expectNothingLeft(ws, b, platform);
    expect((await b.stop()).code).toBe(0);
  });

  it('SIGTERM of a replica in the middle of an apply chunk: the chunk stops at the bound, no false "failed" change, the other replica applies the rest once', async () => {
    const USERS = 40;
    const platform = await sim(TOKEN, { faults: [{ kind: 'latency', latencyMs: 200, method: 'POST', pathPrefix: `${SCIM}/Users` }] });
    const ws = workspace({ SIM_URL: platform.url, SIM_TOKEN: TOKEN });
    ws.writeDirectory({ users: people(1, USERS), groups: [] });
    ws.writeConfig({ daemon: { shutdownTimeoutSeconds: 1, jobLockSeconds: 2, applyChunkSize: 10, concurrency: { apply: 1 } } });
    const daemons = await Promise.all([ws.spawnDaemon(), ws.spawnDaemon()]);
    await ws.trigger();
    const orchestrator = await waitFor(
      () => daemons.find((d) => d.logs.some((l) => l.msg === 'reconcile plan')),
      'the replica running the reconcile',
      15_000,
      10,
    );
    const other = daemons.find((d) => d !== orchestrator)!;
    await waitFor(
      () => other.logs.filter((l) => l.msg === 'scim change applied').length >= 2,
      'the other replica to be inside a chunk',
      15_000,
      5,
    );

    const stop = await other.stop('SIGTERM');
    expect(stop.code).toBe(0);
    expect(stop.ms).toBeLessThan(1_000 + 1_500);
    expect(other.logs.filter((l) => l.msg === 'scim change failed')).toEqual([]);
    expect(other.logs.some((l) => l.msg.startsWith('shutdown: apply chunk stopped between tasks'))).toBe(true);

    const done = await waitFor(() => runsFinished([orchestrator], 'reconcile')[0], 'the run to finish', 30_000);
    expect(done['result']).toBe('success');
    expect(done['failed']).toBe(0);
    for (const p of people(1, USERS)) expect(usersNamed(platform, p.userName)).toBe(1);
    const posts = requestsTo(platform, 'POST', `${SCIM}/Users`);
    expect(posts.filter((r) => r.status === 201)).toHaveLength(USERS);
    // At most the one create in flight at the bound is sent again (and adopted).
    expect(posts.filter((r) => r.status === 409).length).toBeLessThanOrEqual(1);
    await expectNothingLeft(ws, orchestrator, platform);
    expect((await orchestrator.stop()).code).toBe(0);
  });
});
