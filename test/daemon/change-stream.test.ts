/**
 * The daemon applies source changes as they come: one change stream per tenant across
 * replicas (its own lease; another replica takes it over when the holder stops), batches
 * written under the tenant's reconcile lease, a cursor kept in Redis across restarts.
 * The source is the file source (its change mechanism polls the file), the platform the
 * simulator, Redis the real one.
 */
import { describe, expect, it } from 'vitest';
import { people, person, usersNamed } from '../helpers/reconcile-harness.ts';
import {
  daemonSharedConfig,
  getJson,
  metricValue,
  httpGet,
  tenantConfig,
  waitFor,
  type DaemonProcess,
  type DaemonWorkspace,
} from '../helpers/daemon-harness.ts';
import { loadAllTenants } from '../../src/config/load.ts';
import type { Simulator } from '../../src/simulator/index.ts';
import { openControl } from '../../src/jobs/control.ts';
import { closingAfterEach, runsFinished } from './support.ts';
import { merge } from '../helpers/reconcile-harness.ts';

const TOKEN = 'change-stream-token-7c2e91ab';
const { sim, workspace } = closingAfterEach();

/** The change stream on (the harness turns it off), the file stat'ed every 200 ms, changes coalesced for 100 ms. */
const CHANGES = { provisioning: { changes: { enabled: true, pollIntervalMs: 200, coalesceMs: 100 } } };

interface StreamStatus {
  state: string;
  mechanism: string | null;
  owner: string | null;
  cursor: string | null;
  lastPollAt: string | null;
  lastResult: string | null;
  lastDeferred: { code: string } | null;
  heldBurst: { destructive: number } | null;
}

async function streamOf(d: DaemonProcess, tenant = 'acme'): Promise<StreamStatus> {
  const { body } = await getJson<{ tenants: Array<{ tenant: string; changes: StreamStatus }> }>(`${d.url}/status`);
  return body.tenants.find((t) => t.tenant === tenant)!.changes;
}

async function startedWith(ws: DaemonWorkspace, users: number): Promise<void> {
  ws.writeDirectory({ users: people(1, users), groups: [] });
  ws.writeConfig(CHANGES);
}

/**
 * A daemon over a fresh simulator and `users` people in the file source, after its first full
 * reconcile (no cursor yet: the first answer is a full read, applied by the full reconcile it
 * requests), with the stream polling from its cursor.
 */
async function streaming(users: number): Promise<{ s: Simulator; ws: DaemonWorkspace; d: DaemonProcess }> {
  const s = await sim(TOKEN);
  const ws = workspace({ SIM_URL: s.url, SIM_TOKEN: TOKEN });
  await startedWith(ws, users);
  const d = await ws.spawnDaemon();
  await waitFor(() => runsFinished([d], 'reconcile').length === 1 && s.store.users().length === users, 'the first full reconcile', 20_000);
  await waitFor(async () => (await streamOf(d)).lastResult === 'idle', 'the stream polling from its cursor');
  return { s, ws, d };
}

describe('change stream', () => {
  it('a joiner edited into the file source reaches the platform without a scheduled run', { timeout: 90_000 }, async () => {
    const { s, ws, d } = await streaming(3);
    const fullRuns = runsFinished([d], 'reconcile').length;
    ws.writeDirectory({ users: people(1, 4), groups: [] });
    await waitFor(() => usersNamed(s, 'user4@example.com') === 1, 'the joiner on the platform', 15_000);
    const applied = await waitFor(() => d.logs.find((l) => l.msg === 'change stream: changes applied'), 'the batch log line');
    expect(applied['identities']).toBe(1);
    // Written by the change path alone: no reconcile ran for it, none was scheduled.
    expect(runsFinished([d], 'reconcile').length).toBe(fullRuns);
    const metrics = (await httpGet(`${d.url}/metrics`)).body;
    expect(metricValue(metrics, 'scimsync_change_propagation_seconds_count', { tenant: 'acme' })).toBeGreaterThanOrEqual(1);
    expect(metricValue(metrics, 'scimsync_changes_total', { tenant: 'acme', outcome: 'applied' })).toBe(1);
    const st = await streamOf(d);
    expect(st).toMatchObject({ state: 'running', mechanism: 'file-poll' });
    // `status` names the stream, the replica that runs it and its mechanism.
    const printed = await ws.cli(['status', '--config', ws.configPath]);
    expect(printed.stdout).toMatch(new RegExp(`changes: +running on [^ ]+:${d.pid}:[0-9a-f]+ \\(file-poll\\); last poll \\d+ s ago`));
    expect((await d.stop()).code).toBe(0);
  });
});

describe('change stream across replicas', () => {
  it('two replicas run one change stream per tenant, and the other takes it over when the holder stops', { timeout: 90_000 }, async () => {
    const s = await sim(TOKEN);
    const ws = workspace({ SIM_URL: s.url, SIM_TOKEN: TOKEN });
    await startedWith(ws, 2);
    ws.writeConfig({ ...CHANGES, daemon: { jobLockSeconds: 3 } });
    const daemons = await Promise.all([ws.spawnDaemon(), ws.spawnDaemon()]);
    await waitFor(() => s.store.users().length === 2, 'the first full reconcile', 20_000);
    const running = (ds: DaemonProcess[]): DaemonProcess[] =>
      ds.filter((d) => d.logs.some((l) => l.msg === 'change stream running on this replica'));
    await waitFor(() => running(daemons).length === 1, 'one replica running the stream');
    // Long enough for the other replica to have tried the stream's lease many times.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(running(daemons)).toHaveLength(1);
    const holder = running(daemons)[0]!;
    const other = daemons.find((d) => d !== holder)!;
    const gauges = await Promise.all(
      daemons.map(async (d) => metricValue((await httpGet(`${d.url}/metrics`)).body, 'scimsync_change_stream_running', { tenant: 'acme' })),
    );
    expect(gauges.sort()).toEqual([0, 1]);
    const st = await streamOf(other);
    expect(st.state).toBe('running');
    expect(st.owner).toContain(`:${holder.pid}:`);

    expect((await holder.stop()).code).toBe(0);
    await waitFor(
      () => other.logs.some((l) => l.msg === 'change stream running on this replica'),
      'the other replica taking the stream over',
      10_000,
    );
    ws.writeDirectory({ users: people(1, 3), groups: [] });
    await waitFor(() => usersNamed(s, 'user3@example.com') === 1, 'a joiner applied after the takeover', 20_000);
    expect((await streamOf(other)).owner).toContain(`:${other.pid}:`);
  });
});

describe('change stream and the reconcile lease', () => {
  it('a batch waits while a full reconcile holds the lease, and is applied once it is released', { timeout: 90_000 }, async () => {
    const s = await sim(TOKEN);
    const ws = workspace({ SIM_URL: s.url, SIM_TOKEN: TOKEN });
    await startedWith(ws, 2);
    const d = await ws.spawnDaemon();
    await waitFor(() => s.store.users().length === 2, 'the first full reconcile', 20_000);
    await waitFor(async () => (await streamOf(d)).lastResult === 'idle', 'the stream polling from its cursor');
    const cursor = (await streamOf(d)).cursor;
    // A full reconcile (of another replica) holds the tenant's reconcile lease.
    const redis = ws.redis();
    const leaseKey = `${ws.keyPrefix}:{acme}:lease:reconcile`;
    await redis.set(leaseKey, '999999 job:full-run-elsewhere', 'PX', 60_000);
    ws.writeDirectory({ users: people(1, 3), groups: [] });
    await waitFor(async () => (await streamOf(d)).lastResult === 'busy', 'the batch waiting for the lease');
    await new Promise((r) => setTimeout(r, 1_000));
    expect(usersNamed(s, 'user3@example.com')).toBe(0);
    // Not advanced past changes that were not applied: a crash now would read them again.
    expect((await streamOf(d)).cursor).toBe(cursor);
    await redis.del(leaseKey);
    await waitFor(() => usersNamed(s, 'user3@example.com') === 1, 'the joiner applied after the lease was released', 20_000);
    // Saved once the batch's writes were acknowledged.
    await waitFor(async () => (await streamOf(d)).cursor !== cursor, 'the cursor advanced past the applied batch');
    expect(d.logs.some((l) => l.msg === 'change stream: changes applied')).toBe(true);
  });
});

describe('change stream and quarantine', () => {
  it('a quarantined tenant gets no batches; its changes are applied once the quarantine ends', { timeout: 90_000 }, async () => {
    const { s, ws, d } = await streaming(2);
    const redis = ws.redis();
    const quarantine = `${ws.keyPrefix}:{acme}:quarantine`;
    await redis.hset(quarantine, {
      failures: '3',
      until: String(Date.now() + 3_600_000),
      reason: 'E_TRANSIENT: test',
      since: String(Date.now()),
    });
    ws.writeDirectory({ users: people(1, 3), groups: [] });
    await waitFor(async () => (await streamOf(d)).lastResult === 'quarantined', 'the batch held back by the quarantine');
    await new Promise((r) => setTimeout(r, 1_000));
    expect(usersNamed(s, 'user3@example.com')).toBe(0);
    // The quarantine ends (as `resume` ends it): the kept batch goes through.
    await redis.del(quarantine);
    await waitFor(() => usersNamed(s, 'user3@example.com') === 1, 'the joiner applied after the quarantine', 20_000);
  });
});

describe('change stream cursor', () => {
  it('the cursor survives a restart: the stream resumes from it without a full read', { timeout: 90_000 }, async () => {
    const s = await sim(TOKEN);
    const ws = workspace({ SIM_URL: s.url, SIM_TOKEN: TOKEN });
    await startedWith(ws, 2);
    const first = await ws.spawnDaemon();
    await waitFor(() => s.store.users().length === 2, 'the first full reconcile', 20_000);
    // Settled: the file's mtime is old enough for its metadata alone to be trusted.
    await new Promise((r) => setTimeout(r, 2_200));
    await waitFor(async () => (await streamOf(first)).lastResult === 'idle', 'the stream polling from its cursor');
    const before = (await streamOf(first)).cursor;
    expect(before).not.toBeNull();
    expect((await first.stop()).code).toBe(0);
    const second = await ws.spawnDaemon();
    await waitFor(() => second.logs.some((l) => l.msg === 'change stream running on this replica'), 'the stream on the restarted daemon');
    await waitFor(
      async () => (await streamOf(second)).lastPollAt !== null && (await streamOf(second)).lastResult === 'idle',
      'a poll after the restart',
    );
    await new Promise((r) => setTimeout(r, 600));
    expect((await streamOf(second)).cursor).toBe(before);
    // No full read answered, no full reconcile requested by the restarted stream.
    expect(second.logs.filter((l) => l.msg === 'change stream: full reconcile requested')).toHaveLength(0);
    expect(runsFinished([second], 'reconcile')).toHaveLength(0);
  });
});

/** Whether the platform account of `externalId` is active (undefined: none). */
const activeOf = (s: { store: { users(): Array<{ externalId?: string; active?: boolean }> } }, externalId: string): boolean | undefined =>
  s.store.users().find((u) => u.externalId === externalId)?.active;

describe('change stream and the deletion guard', () => {
  it('a burst of leavers over the limit is held, and applied after approve-deletes', { timeout: 90_000 }, async () => {
    const s = await sim(TOKEN);
    const ws = workspace({ SIM_URL: s.url, SIM_TOKEN: TOKEN });
    ws.writeDirectory({ users: people(1, 10), groups: [] });
    ws.writeConfig(merge(CHANGES, { provisioning: { guards: { maxDeletes: 2, maxDeletePercent: 100 } } }));
    const d = await ws.spawnDaemon();
    await waitFor(() => s.store.users().length === 10, 'the first full reconcile', 20_000);
    await waitFor(async () => (await streamOf(d)).lastResult === 'idle', 'the stream polling from its cursor');
    // Leavers one at a time: each batch alone is far under the guard.
    for (const n of [1, 2]) {
      ws.writeDirectory({ users: people(n + 1, 10), groups: [] });
      await waitFor(() => activeOf(s, `u-${n}`) === false, `leaver u-${n} deactivated by the change path`, 15_000);
    }
    const runsBefore = runsFinished([d], 'reconcile').length;
    expect(runsBefore).toBe(1);
    // The third leaver within the window: 3 deactivations exceed guards.maxDeletes (2).
    ws.writeDirectory({ users: people(4, 10), groups: [] });
    const held = await waitFor(async () => (await streamOf(d)).heldBurst, 'the burst held', 15_000);
    expect(held.destructive).toBe(3);
    // The full reconcile it requested holds the leaver exactly like a held full plan.
    const run = await waitFor(
      () =>
        runsFinished([d], 'reconcile')
          .slice(runsBefore)
          .find((l) => l['result'] === 'guard_held'),
      'a held full reconcile',
      20_000,
    );
    expect(run).toBeDefined();
    await new Promise((r) => setTimeout(r, 1_000));
    expect(activeOf(s, 'u-3')).toBe(true);
    const status = await getJson<{ tenants: Array<{ heldDeletes: { count: number } | null }> }>(`${d.url}/status`);
    expect(status.body.tenants[0]!.heldDeletes?.count).toBe(1);

    const approved = await ws.cli(['approve-deletes', '--config', ws.configPath]);
    expect(approved.code, approved.stderr).toBe(0);
    await waitFor(() => activeOf(s, 'u-3') === false, 'the held leaver deactivated after approve-deletes', 20_000);
    await waitFor(async () => (await streamOf(d)).heldBurst === null, 'the burst hold ended');
    // The others stay: only what was held was applied.
    expect(s.store.users().filter((u) => u.active !== false)).toHaveLength(7);
  });

  it('a change the targeted reconcile cannot decide alone (a recycled userName) triggers a full reconcile', {
    timeout: 90_000,
  }, async () => {
    const { s, ws, d } = await streaming(10);
    const runsBefore = runsFinished([d], 'reconcile').length;
    // u-1 leaves and a newcomer gets the leaver's userName: the account is never handed over locally.
    ws.writeDirectory({ users: [...people(2, 10), person(19, { userName: 'user1@example.com' })], groups: [] });
    await waitFor(() => runsFinished([d], 'reconcile').length > runsBefore, 'the full reconcile the change asked for', 20_000);
    const st = await streamOf(d);
    expect(st.lastDeferred?.code).toBe('name-held');
    const metrics = (await httpGet(`${d.url}/metrics`)).body;
    expect(metricValue(metrics, 'scimsync_changes_deferred_total', { tenant: 'acme', reason: 'name-held' })).toBe(1);
    expect(metricValue(metrics, 'scimsync_changes_total', { tenant: 'acme', outcome: 'deferred' })).toBeGreaterThanOrEqual(1);
    // The full reconcile decided: the leaver is deactivated, the newcomer held by the identity conflict.
    await waitFor(() => activeOf(s, 'u-1') === false, 'the leaver deactivated by the full reconcile');
    expect(s.store.users().filter((u) => u.externalId === 'u-19')).toEqual([]);
    expect(runsFinished([d], 'reconcile').at(-1)?.['result']).toBe('success');
  });
});

describe('change stream and the full reconcile schedule', () => {
  it('a tenant whose changes flow has its full reconcile every 6 hours by default; one with changes off keeps every 30 minutes', {
    timeout: 90_000,
  }, async () => {
    const s = await sim(TOKEN);
    const ws = workspace({ SIM_URL: s.url, SIM_TOKEN: TOKEN });
    ws.writeDirectory({ users: people(1, 2), groups: [] });
    const unscheduled = (t: Record<string, unknown>): Record<string, unknown> => ({ ...t, schedules: { audit: { enabled: false } } });
    ws.writeConfigObject({
      ...daemonSharedConfig(ws),
      tenants: [
        unscheduled(merge(tenantConfig('flowing'), CHANGES)),
        unscheduled(merge(tenantConfig('polled'), { provisioning: { changes: { enabled: false } } })),
      ],
    });
    const d = await ws.spawnDaemon();
    await waitFor(async () => (await streamOf(d, 'flowing')).state === 'running', 'the stream of the tenant whose changes flow');
    expect((await streamOf(d, 'polled')).state).toBe('off');
    const control = openControl(await loadAllTenants(ws.configPath, ws.env));
    try {
      expect((await control.queues.reconcile.getJobScheduler('reconcile:flowing'))?.pattern).toBe('0 */6 * * *');
      expect((await control.queues.reconcile.getJobScheduler('reconcile:polled'))?.pattern).toBe('*/30 * * * *');
    } finally {
      await control.close();
    }
    expect(d.logs.filter((l) => l.msg === 'change stream running on this replica').map((l) => l['tenant'])).toEqual(['flowing']);
  });
});
