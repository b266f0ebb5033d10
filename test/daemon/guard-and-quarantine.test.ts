/**
 * The daemon's safety states, driven through the operator commands a human would use:
 * deletions held by the guard until `approve-deletes`, and a tenant with a bad credential
 * failing once per run (never retried), quarantined after maxConsecutiveFailures, skipped
 * while quarantined, and back after the credential is fixed and `resume` is run.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.ts';
import { people, SCIM, startSim } from '../helpers/reconcile-harness.ts';
import {
  assertNoSecret,
  createDaemonWorkspace,
  dumpKeyspace,
  getJson,
  httpGet,
  jobHashes,
  metricValue,
  waitFor,
  type DaemonProcess,
  type DaemonWorkspace,
} from '../helpers/daemon-harness.ts';
import { runsFinished } from './support.ts';

const GOOD = 'guard-good-token-93c1a7e5b2';
const BAD = 'guard-revoked-token-4d8f0e6a1c';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(env: { token: string }): Promise<{ sim: Simulator; ws: DaemonWorkspace }> {
  const sim = await startSim({ tokens: [{ token: GOOD }] });
  cleanups.push(() => sim.close());
  const ws = createDaemonWorkspace({ env: { SIM_URL: sim.url, SIM_TOKEN: env.token } });
  cleanups.push(() => ws.cleanup());
  return { sim, ws };
}

interface TenantStatus {
  quarantined: boolean;
  quarantine: { failures: number; reason: string; until: string | null };
  deletesHeld: number;
  heldDeletes: { count: number; reasons: string[]; approved: boolean } | null;
  runs: { reconcile: Array<{ result: string; detail: Record<string, unknown> }> };
}

async function tenantStatus(d: DaemonProcess, tenant = 'acme'): Promise<TenantStatus> {
  const { body } = await getJson<{ tenants: Array<TenantStatus & { tenant: string }> }>(`${d.url}/status`);
  const t = body.tenants.find((x) => x.tenant === tenant);
  if (!t) throw new Error(`tenant ${tenant} missing from /status`);
  return t;
}

describe('deletion guard', () => {
  it('holds the deactivations of a shrunken source, shows them, and runs them after approve-deletes', async () => {
    const { sim, ws } = await setup({ token: GOOD });
    ws.writeDirectory({ users: people(1, 20), groups: [] });
    ws.writeConfig({ provisioning: { guards: { maxDeletes: 5, maxDeletePercent: 100 } } });
    const d = await ws.spawnDaemon();
    const runs = (): string[] => runsFinished([d], 'reconcile').map((l) => String(l['result']));

    await ws.trigger();
    await waitFor(() => runs().length === 1, 'the first run');
    expect(runs()).toEqual(['success']);
    expect(sim.store.users().filter((u) => u.active !== false)).toHaveLength(20);

    // 12 users leave the source: more than guards.maxDeletes.
    ws.writeDirectory({ users: people(1, 8), groups: [] });
    await ws.trigger();
    await waitFor(() => runs().length === 2, 'the held run');
    expect(runs()[1]).toBe('guard_held');
    expect(sim.store.users().filter((u) => u.active !== false)).toHaveLength(20);
    expect(sim.requests.filter((r) => r.method === 'PATCH' || r.method === 'DELETE')).toEqual([]);

    const held = await tenantStatus(d);
    expect(held.deletesHeld).toBe(12);
    expect(held.heldDeletes).toMatchObject({ count: 12, approved: false });
    expect(held.heldDeletes!.reasons.join(' ')).toMatch(/maxDeletes \(5\)/);
    expect(held.runs.reconcile[0]?.result).toBe('guard_held');
    const metrics = (await httpGet(`${d.url}/metrics`)).body;
    expect(metricValue(metrics, 'scimsync_deletes_held', { tenant: 'acme' })).toBe(12);
    expect(metricValue(metrics, 'scimsync_guard_trips_total', { tenant: 'acme' })).toBe(1);
    expect(metricValue(metrics, 'scimsync_reconcile_runs_total', { result: 'guard_held' })).toBe(1);
    const statusCli = await ws.cli(['status', '--config', ws.configPath]);
    expect(statusCli.code).toBe(0);
    expect(statusCli.stdout).toMatch(/held deletes: 12 .*approve-deletes --tenant acme/);

    const approve = await ws.cli(['approve-deletes', '--tenant', 'acme', '--config', ws.configPath]);
    expect(approve.code).toBe(0);
    expect(approve.stdout).toMatch(/approved 12 held/);
    await waitFor(() => runs().length === 3, 'the approved run');
    expect(runs()[2]).toBe('success');
    expect(
      sim.store
        .users()
        .filter((u) => u.active === false)
        .map((u) => u.userName)
        .sort(),
    ).toEqual(
      people(9, 20)
        .map((p) => p.userName)
        .sort(),
    );
    const after = await tenantStatus(d);
    expect(after.heldDeletes).toBeNull();
    expect(after.deletesHeld).toBe(0);
    expect(after.runs.reconcile[0]?.detail['approvedDeletes']).toBe(true);
    expect(metricValue((await httpGet(`${d.url}/metrics`)).body, 'scimsync_deletes_held', { tenant: 'acme' })).toBe(0);

    // The approval was for one run: with nothing held, there is nothing left to approve.
    const again = await ws.cli(['approve-deletes', '--tenant', 'acme', '--config', ws.configPath]);
    expect(again.stdout).toMatch(/no deletions held/);
    // An idle daemon stops at once: it does not sit out shutdownTimeoutSeconds (3 s here).
    const stop = await d.stop();
    expect(stop.code).toBe(0);
    expect(stop.ms).toBeLessThan(2_000);
  });
});

describe('quarantine', () => {
  it('a 401 fails each run once without retries, quarantines the tenant, and resume brings it back', async () => {
    const { sim, ws } = await setup({ token: BAD });
    ws.writeDirectory({ users: people(1, 5), groups: [] });
    ws.writeConfig({
      schedules: { reconcile: { pattern: '* * * * * *' } },
      daemon: { jobAttempts: 3, quarantine: { maxConsecutiveFailures: 2, baseBackoffMinutes: 60 } },
    });
    const d1 = await ws.spawnDaemon();
    const results = (d: DaemonProcess): string[] =>
      runsFinished([d], 'reconcile')
        .map((l) => String(l['result']))
        .filter((x) => x !== 'skipped');
    await waitFor(async () => (await tenantStatus(d1)).quarantined, 'quarantine', 15_000);
    const requestsAtQuarantine = sim.requests.length;
    // While quarantined, scheduled ticks are skipped without a single platform request.
    await waitFor(() => results(d1).filter((r) => r === 'quarantined').length >= 2, 'two skipped ticks', 10_000);
    expect(sim.requests.length).toBe(requestsAtQuarantine);
    expect(results(d1).slice(0, 2)).toEqual(['failed', 'failed']);
    expect(sim.requests.every((r) => r.status === 401)).toBe(true);

    const q = await tenantStatus(d1);
    expect(q.quarantine.failures).toBe(2);
    expect(q.quarantine.reason).toMatch(/^E_AUTH_INVALID/);
    expect(q.runs.reconcile.map((r) => r.result)).toEqual(['failed', 'failed']);
    expect(q.runs.reconcile[0]?.detail['code']).toBe('E_AUTH_INVALID');
    // Unrecoverable: each failed job was attempted once although jobAttempts is 3.
    const failed = (await jobHashes(ws, 'reconcile')).filter((j) => j.hash['failedReason'] !== undefined);
    expect(failed).toHaveLength(2);
    for (const j of failed) {
      expect(j.hash['atm']).toBe('1');
      expect(j.hash['failedReason']).toMatch(/E_AUTH_INVALID/);
    }
    const m1 = (await httpGet(`${d1.url}/metrics`)).body;
    expect(metricValue(m1, 'scimsync_tenant_quarantined', { tenant: 'acme' })).toBe(1);
    expect(metricValue(m1, 'scimsync_jobs_total', { queue: 'reconcile', result: 'failed' })).toBe(2);
    expect(metricValue(m1, 'scimsync_jobs_total', { queue: 'reconcile', result: 'retried' }) ?? 0).toBe(0);
    expect(metricValue(m1, 'scimsync_reconcile_runs_total', { result: 'failed' })).toBe(2);
    const statusCli = await ws.cli(['status', '--config', ws.configPath]);
    expect(statusCli.stdout).toMatch(/quarantine: YES .*resume --tenant acme/);
    expect((await d1.stop()).code).toBe(0);

    // The operator fixes the credential and restarts: the quarantine survives the restart…
    ws.env['SIM_TOKEN'] = GOOD;
    const d2 = await ws.spawnDaemon();
    await waitFor(() => results(d2).includes('quarantined'), 'a skipped tick after the restart', 10_000);
    expect(sim.store.counts().users).toBe(0);
    // …until `resume`, which clears it and runs now.
    const resume = await ws.cli(['resume', '--tenant', 'acme', '--config', ws.configPath]);
    expect(resume.code).toBe(0);
    expect(resume.stdout).toMatch(/resumed \(was quarantined: E_AUTH_INVALID/);
    await waitFor(() => results(d2).includes('success'), 'a successful run', 10_000);
    expect(sim.store.counts().users).toBe(5);
    const back = await tenantStatus(d2);
    expect(back.quarantined).toBe(false);
    expect(back.quarantine.failures).toBe(0);
    expect(metricValue((await httpGet(`${d2.url}/metrics`)).body, 'scimsync_tenant_quarantined', { tenant: 'acme' })).toBe(0);
    const exposed =
      JSON.stringify((await getJson(`${d2.url}/status`)).body) + (await httpGet(`${d2.url}/metrics`)).body + JSON.stringify(q);
    for (const secret of [BAD, GOOD]) assertNoSecret(exposed, secret, '/status or /metrics');
    // Scheduled ticks run again.
    const successes = results(d2).filter((r) => r === 'success').length;
    await waitFor(() => results(d2).filter((r) => r === 'success').length > successes, 'a scheduled run after resume', 10_000);
    expect((await d2.stop()).code).toBe(0);

    for (const d of [d1, d2]) {
      assertNoSecret(d.output(), BAD, 'daemon logs');
      assertNoSecret(d.output(), GOOD, 'daemon logs');
    }
    for (const [key, value] of await dumpKeyspace(ws)) {
      assertNoSecret(value, BAD, `Redis key ${key}`);
      assertNoSecret(value, GOOD, `Redis key ${key}`);
    }
  });

  it('transient failures quarantine a tenant with a backoff; when it expires the next scheduled run probes and ends it', async () => {
    const { sim, ws } = await setup({ token: GOOD });
    ws.writeDirectory({ users: people(1, 3), groups: [] });
    ws.writeConfig({
      schedules: { reconcile: { pattern: '* * * * * *' } },
      // One attempt per run; a 1.2 s backoff (0.02 min) so the probe comes quickly.
      daemon: { jobAttempts: 1, quarantine: { maxConsecutiveFailures: 2, baseBackoffMinutes: 0.02 } },
    });
    sim.setFaults([{ kind: 'status', status: 503, pathPrefix: `${SCIM}/Users` }]);
    const d = await ws.spawnDaemon();
    // Overlapping ticks are recorded as skipped (the lease): not part of the story here.
    const results = (): string[] =>
      runsFinished([d], 'reconcile')
        .map((l) => String(l['result']))
        .filter((x) => x !== 'skipped');
    await waitFor(async () => (await tenantStatus(d)).quarantined, 'quarantine', 15_000);
    const q = await tenantStatus(d);
    expect(q.quarantine.reason).toMatch(/^E_TRANSIENT/);
    expect(Date.parse(q.quarantine.until!) - Date.now()).toBeLessThanOrEqual(1_200);
    sim.setFaults([]);
    await waitFor(() => results().includes('success'), 'the probe run', 15_000);
    // Entered (a tick was skipped), then left by the first scheduled run after the backoff.
    const r = results();
    expect(r.slice(0, 2)).toEqual(['failed', 'failed']);
    expect(r.indexOf('quarantined')).toBeGreaterThan(1);
    expect(r.indexOf('quarantined')).toBeLessThan(r.indexOf('success'));
    expect(sim.store.counts().users).toBe(3);
    const back = await tenantStatus(d);
    expect(back.quarantined).toBe(false);
    expect(back.quarantine.failures).toBe(0);
    expect(metricValue((await httpGet(`${d.url}/metrics`)).body, 'scimsync_tenant_quarantined', { tenant: 'acme' })).toBe(0);
    expect((await d.stop()).code).toBe(0);
  });
});
