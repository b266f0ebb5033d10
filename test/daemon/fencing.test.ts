/**
 * One reconcile per tenant, provably: the run lease carries a fencing token that every apply
 * phase and chunk checks. Two replicas on real Redis; a replica's event loop is "blocked"
 * past the job lock by freezing its process (SIGSTOP: no timer, no I/O, exactly what a long
 * synchronous plan does) while the other recovers the job. Nothing is applied twice and no
 * plan is applied under a lost lease.
 */
import { describe, expect, it } from 'vitest';
import { people, requestsTo, SCIM, usersNamed } from '../helpers/reconcile-harness.ts';
import { waitFor, type DaemonProcess } from '../helpers/daemon-harness.ts';
import { closingAfterEach, expectNothingLeft, runsFinished } from './support.ts';

const TOKEN = 'fencing-token-3b8e1d7c5a';
const { sim, workspace } = closingAfterEach();

const freeze = (d: DaemonProcess): void => void process.kill(d.pid, 'SIGSTOP');
const thaw = (d: DaemonProcess): void => void process.kill(d.pid, 'SIGCONT');
const logsAfter = (d: DaemonProcess, t: number, msg: string) => d.logs.filter((l) => l.time >= t && l.msg === msg);

describe('run lease with a fencing token', () => {
  it('a replica stalled while planning past the lock, its job recovered by another replica: the stale plan is never applied, nothing is applied twice', async () => {
    const USERS = 10;
    // The first user listing trickles in (about 3 s): the stalled replica holds a listing taken
    // before the other replica's run, as a replica that blocks while planning 100,000 users does.
    const platform = await sim(TOKEN, {
      faults: [{ kind: 'drip', method: 'GET', pathPrefix: `${SCIM}/Users`, chunkBytes: 8, delayMs: 200, times: 1 }],
    });
    const ws = workspace({ SIM_URL: platform.url, SIM_TOKEN: TOKEN });
    ws.writeDirectory({ users: people(1, USERS), groups: [] });
    ws.writeConfig({ platform: { timeoutSeconds: 60 }, daemon: { jobLockSeconds: 2, applyChunkSize: 5 } });
    const a = await ws.spawnDaemon();
    await ws.trigger();
    // A has listed the groups, so its user listing (sent first) is on its way: freeze A.
    await waitFor(() => requestsTo(platform, 'GET', `${SCIM}/Groups`).length > 0, 'the first listing', 15_000, 5);
    await new Promise((r) => setTimeout(r, 150));
    freeze(a);
    const b = await ws.spawnDaemon();
    // B recovers the stalled job once A's lock lapsed, takes the lease over and applies.
    const done = await waitFor(() => runsFinished([b], 'reconcile')[0], 'B to run the recovered job', 30_000);
    expect(done['result']).toBe('success');
    expect(platform.store.counts().users).toBe(USERS);

    const resumedAt = Date.now();
    thaw(a);
    // A wakes up with its stale listing and a plan to create everyone: its lease is gone.
    const lost = await waitFor(() => runsFinished([a], 'reconcile')[0], 'A to end its run', 20_000);
    // Give a stale apply time to show itself, then check it did not happen.
    await new Promise((r) => setTimeout(r, 1_500));
    // Exactly once: one POST per user, all 201 (a stale create would meet 409 and adopt).
    const posts = requestsTo(platform, 'POST', `${SCIM}/Users`);
    expect(posts.map((p) => p.status)).toEqual(Array(USERS).fill(201));
    expect(logsAfter(a, resumedAt, 'scim change applied')).toEqual([]);
    expect(logsAfter(a, resumedAt, 'reconcile plan')).toEqual([]);
    expect(lost['result']).toBe('lease_lost');
    expect(lost['code']).toBe('E_LEASE_LOST');
    expect(lost['jobId']).toBe(done['jobId']);
    for (const p of people(1, USERS)) expect(usersNamed(platform, p.userName)).toBe(1);
    // The lease-lost run is in the history, not counted as a failure of the tenant.
    const history = (await ws.redis().lrange(`${ws.keyPrefix}:{acme}:history:reconcile`, 0, -1)).map(
      (h) => JSON.parse(h) as { result: string },
    );
    expect(history.map((h) => h.result).sort()).toEqual(['lease_lost', 'success']);
    expect(await ws.redis().exists(`${ws.keyPrefix}:{acme}:quarantine`)).toBe(0);
    await expectNothingLeft(ws, b, platform);
    await Promise.all([a.stop(), b.stop()]);
  });

  it('a replica stalled in the middle of its apply chunks: after the other replica took the run over, the resumed chunks write nothing', async () => {
    const USERS = 24;
    const platform = await sim(TOKEN, { faults: [{ kind: 'latency', latencyMs: 120, method: 'POST', pathPrefix: `${SCIM}/Users` }] });
    const ws = workspace({ SIM_URL: platform.url, SIM_TOKEN: TOKEN });
    ws.writeDirectory({ users: people(1, USERS), groups: [] });
    ws.writeConfig({ daemon: { jobLockSeconds: 2, applyChunkSize: 12, concurrency: { apply: 2 } } });
    const a = await ws.spawnDaemon();
    await ws.trigger();
    await waitFor(() => platform.store.counts().users >= 4, 'A to apply some users', 15_000, 5);
    freeze(a);
    const frozenCreates = platform.store.counts().users;
    const b = await ws.spawnDaemon();
    const done = await waitFor(() => runsFinished([b], 'reconcile')[0], 'B to finish the recovered run', 30_000);
    expect(done['result']).toBe('success');
    expect(platform.store.counts().users).toBe(USERS);

    const resumedAt = Date.now();
    thaw(a);
    await waitFor(() => runsFinished([a], 'reconcile')[0], 'A to end its run', 20_000);
    await new Promise((r) => setTimeout(r, 1_500));
    // A's chunks were fenced out: no request from A after it resumed; it only logged the
    // answers to the creates it had in flight when it froze (one per apply slot at most).
    expect(logsAfter(a, resumedAt, 'scim change applied').length).toBeLessThanOrEqual(2);
    expect(logsAfter(a, resumedAt, 'scim change failed')).toEqual([]);
    const posts = requestsTo(platform, 'POST', `${SCIM}/Users`);
    expect(posts.filter((p) => p.status === 201)).toHaveLength(USERS);
    // Only the creates in flight when A froze (at most one per apply slot) were sent again.
    expect(posts.filter((p) => p.status === 409).length).toBeLessThanOrEqual(2);
    // A create whose bytes were still in A's socket buffer when it froze reaches the server only
    // after it resumes (seen once in CI): it is one of those ≤ 2 in flight and answered 409, never a
    // second account. Nothing A sends after resuming may succeed.
    expect(posts.filter((p) => p.at >= resumedAt && p.status !== 409)).toEqual([]);
    expect(frozenCreates).toBeLessThan(USERS);
    for (const p of people(1, USERS)) expect(usersNamed(platform, p.userName)).toBe(1);
    expect(runsFinished([a], 'reconcile')[0]?.['result']).toBe('lease_lost');
    await expectNothingLeft(ws, b, platform);
    await Promise.all([a.stop(), b.stop()]);
  });
});
