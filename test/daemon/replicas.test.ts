/**
 * Several daemon processes against one Redis and the simulator: scheduled ticks run once
 * per tenant whatever the number of replicas, the fanned-out apply creates each user once
 * with chunks spread over the replicas, the platform request budget and a 429 hold across
 * processes, and what they expose (/metrics, /status, logs, Redis) is complete and secret-free.
 */
import { describe, expect, it } from 'vitest';
import { people, requestsTo, SCIM, usersNamed } from '../helpers/reconcile-harness.ts';
import {
  assertNoSecret,
  daemonSharedConfig,
  dumpKeyspace,
  getJson,
  httpGet,
  jobHashes,
  metricValue,
  tenantConfig,
  waitFor,
  type DaemonWorkspace,
  type LogLine,
} from '../helpers/daemon-harness.ts';
import { closingAfterEach, documentedMetricNames, runsFinished, sumMetric } from './support.ts';

const TOKEN_A = 'replica-token-A-6f1e2d9c8b7a';
const TOKEN_B = 'replica-token-B-0a9b8c7d6e5f';

const { sim, workspace } = closingAfterEach();

describe('replicas', () => {
  it('two replicas serving two tenants run each scheduled tick exactly once per tenant', async () => {
    const [simA, simB] = await Promise.all([sim(TOKEN_A), sim(TOKEN_B)]);
    const ws = workspace({ A_URL: simA.url, A_TOKEN: TOKEN_A, B_URL: simB.url, B_TOKEN: TOKEN_B });
    ws.writeDirectory(
      { users: people(1, 8), groups: [{ externalId: 'g-a', displayName: 'Team A', members: ['u-1', 'u-2'] }] },
      'dir-a.yaml',
    );
    ws.writeDirectory({ users: people(101, 106), groups: [] }, 'dir-b.yaml');
    ws.writeConfigObject({
      ...daemonSharedConfig(ws),
      tenants: [
        tenantConfig('alpha', { envPrefix: 'A', directory: 'dir-a.yaml', pattern: '* * * * * *' }),
        tenantConfig('beta', { envPrefix: 'B', directory: 'dir-b.yaml', pattern: '* * * * * *' }),
      ],
    });
    const daemons = await Promise.all([ws.spawnDaemon(), ws.spawnDaemon()]);
    const ticksOf = (tenant: string): LogLine[] => runsFinished(daemons, 'reconcile').filter((l) => l['tenant'] === tenant);
    await waitFor(() => ticksOf('alpha').length >= 4 && ticksOf('beta').length >= 4, 'four ticks per tenant', 20_000);
    const stops = await Promise.all(daemons.map((d) => d.stop()));
    for (const s of stops) expect(s.code).toBe(0);

    const fencedIds = new Set<string>();
    for (const tenant of ['alpha', 'beta']) {
      const all = ticksOf(tenant);
      // Should BullMQ still hand one tick out twice (a scheduler upserted while its job runs,
      // taskforcesh/bullmq#2876), the run lease fences the duplicate out: it ends as
      // lease_lost, applies nothing, and its tick has exactly one real run.
      const fenced = all.filter((l) => l['result'] === 'lease_lost');
      const lines = all.filter((l) => l['result'] !== 'lease_lost');
      for (const f of fenced) {
        expect(lines.map((l) => l['jobId'])).toContain(f['jobId']);
        fencedIds.add(String(f['jobId']));
      }
      const jobIds = lines.map((l) => String(l['jobId']));
      // One run per tick: no job processed twice, whichever replica took it.
      expect(new Set(jobIds).size, JSON.stringify(all.map((l) => [l['jobId'], l['result'], l['err'], l.time]))).toBe(jobIds.length);
      // Scheduler jobs are named after their tick; ticks are distinct seconds.
      const ticks = jobIds.map((id) => Number(/:(\d+)$/.exec(id)?.[1]));
      for (const t of ticks) expect(t % 1000).toBe(0);
      expect(new Set(ticks).size).toBe(ticks.length);
      expect(lines.every((l) => l['result'] === 'success' || l['result'] === 'skipped')).toBe(true);
    }
    // The BullMQ record agrees with the logs: as many reconcile jobs as runs logged, each finished once.
    const jobs = (await jobHashes(ws, 'reconcile')).filter((j) => j.hash['finishedOn'] !== undefined);
    expect(jobs.length).toBe(ticksOf('alpha').length + ticksOf('beta').length - fencedIds.size);
    for (const j of jobs) if (!fencedIds.has(j.id)) expect(j.hash['atm']).toBe('1');

    // Each tenant's users went to its own platform with its own token, once.
    expect(simA.store.counts()).toEqual({ users: 8, groups: 1 });
    expect(simB.store.counts()).toEqual({ users: 6, groups: 0 });
    expect(requestsTo(simA, 'POST', `${SCIM}/Users`)).toHaveLength(8);
    expect(requestsTo(simB, 'POST', `${SCIM}/Users`)).toHaveLength(6);
    for (const s of [simA, simB]) expect(s.requests.filter((r) => r.status === 401 || r.status === 403)).toEqual([]);
  });

  it('three replicas: a fanned-out apply creates each user once, the request budget and a 429 hold across processes', async () => {
    const USERS = 90;
    const RPS = 30;
    const platform = await sim(TOKEN_A);
    const ws = workspace({ SIM_URL: platform.url, SIM_TOKEN: TOKEN_A });
    ws.writeDirectory({
      users: people(1, USERS),
      groups: [{ externalId: 'g-all', displayName: 'Everyone', members: people(1, 30).map((p) => p.externalId) }],
    });
    ws.writeConfig({ daemon: { applyChunkSize: 5, rateLimit: { requestsPerSecond: RPS }, concurrency: { apply: 2 } } });
    const daemons = await Promise.all([ws.spawnDaemon(), ws.spawnDaemon(), ws.spawnDaemon()]);

    await ws.trigger();
    // Mid-run, the platform answers one create with 429 and Retry-After: 2.
    await waitFor(() => platform.store.counts().users >= 30, 'a third of the users', 20_000, 10);
    platform.setFaults([{ kind: 'status', status: 429, retryAfterSeconds: 2, times: 1, method: 'POST', pathPrefix: `${SCIM}/Users` }]);
    const finished = await waitFor(() => runsFinished(daemons, 'reconcile')[0], 'the run to finish', 30_000);
    expect(finished['result']).toBe('success');

    // Exactly once: every user exists once and was POSTed once (plus the one 429'd attempt).
    expect(platform.store.counts().users).toBe(USERS);
    for (const p of people(1, USERS)) expect(usersNamed(platform, p.userName)).toBe(1);
    const posts = requestsTo(platform, 'POST', `${SCIM}/Users`);
    expect(posts.filter((r) => r.status === 201)).toHaveLength(USERS);
    expect(posts.filter((r) => r.status === 429)).toHaveLength(1);
    expect(posts).toHaveLength(USERS + 1);
    expect(platform.store.getGroupByDisplayName('Everyone')?.members).toHaveLength(30);

    // Fanned out: chunks were applied by more than one replica, and each change logged once.
    const changes = daemons.map((d) => d.logs.filter((l) => l.msg === 'scim change applied' && l['action'] === 'user.create'));
    expect(changes.flat()).toHaveLength(USERS);
    expect(changes.filter((c) => c.length > 0).length).toBeGreaterThanOrEqual(2);

    // The global budget: never more than one full window (plus the next) in any second…
    const times = platform.requests.map((r) => r.at).sort((a, b) => a - b);
    let maxInSecond = 0;
    for (let i = 0, j = 0; i < times.length; i++) {
      while (times[i]! - times[j]! >= 1000) j++;
      maxInSecond = Math.max(maxInSecond, i - j + 1);
    }
    expect(maxInSecond).toBeLessThanOrEqual(2 * RPS);
    // …nothing at all while the 429's Retry-After blocks the shared bucket (requests already
    // past the limiter may still land just after the 429)…
    const at429 = platform.requests.find((r) => r.status === 429)!.at;
    const during = times.filter((t) => t > at429 + 250 && t < at429 + 1800);
    expect(during).toEqual([]);
    // …and N requests need ceil(N / RPS) one-second windows whoever sends them; the 2 s block
    // may absorb the rest of one window. Three unsynchronized replicas would need a third of it.
    const busyMs = times.at(-1)! - times[0]! - 2000;
    expect(busyMs).toBeGreaterThanOrEqual((Math.ceil(times.length / RPS) - 2) * 1000 - 100);

    // The 429 slowed every replica: all were working before it and after the pause.
    const active = (from: number, to: number): number => changes.filter((c) => c.some((l) => l.time >= from && l.time < to)).length;
    expect(active(0, at429)).toBeGreaterThanOrEqual(2);
    expect(active(at429 + 1800, Infinity)).toBeGreaterThanOrEqual(2);

    // /metrics: every documented family is exposed, values add up across the replicas.
    const texts = await Promise.all(daemons.map(async (d) => (await httpGet(`${d.url}/metrics`)).body));
    for (const name of documentedMetricNames()) {
      for (const text of texts) expect(text, `${name} in /metrics`).toMatch(new RegExp(`^# TYPE ${name} `, 'm'));
    }
    expect(sumMetric(texts, 'scimsync_scim_operations_total', { resource: 'user', operation: 'create', result: 'ok' })).toBe(USERS);
    expect(sumMetric(texts, 'scimsync_platform_rate_limited_total', { route: 'scim_users' })).toBe(1);
    expect(sumMetric(texts, 'scimsync_platform_requests_total', { method: 'POST', route: 'scim_users', status: '201' })).toBe(USERS);
    expect(sumMetric(texts, 'scimsync_reconcile_runs_total', { tenant: 'acme', result: 'success' })).toBe(1);
    expect(sumMetric(texts, 'scimsync_jobs_total', { queue: 'reconcile', result: 'completed' })).toBe(1);
    expect(sumMetric(texts, 'scimsync_jobs_total', { queue: 'reconcile-apply', result: 'failed' })).toBe(0);
    // 18 user chunks, 1 group chunk, 1 membership chunk and one barrier per phase (3), each completed once.
    expect(sumMetric(texts, 'scimsync_jobs_total', { queue: 'reconcile-apply', result: 'completed' })).toBe(USERS / 5 + 2 + 3);
    const runner = texts.find((t) => metricValue(t, 'scimsync_reconcile_runs_total', { result: 'success' }) === 1)!;
    expect(metricValue(runner, 'scimsync_managed_objects', { tenant: 'acme', kind: 'user' })).toBe(USERS);
    expect(metricValue(runner, 'scimsync_source_objects', { tenant: 'acme', kind: 'user' })).toBe(USERS);
    expect(metricValue(runner, 'scimsync_tenant_quarantined', { tenant: 'acme' })).toBe(0);
    expect(metricValue(runner, 'scimsync_reconcile_run_duration_seconds_count', { tenant: 'acme' })).toBe(1);
    const lastSuccess = metricValue(runner, 'scimsync_last_success_timestamp_seconds', { tenant: 'acme', kind: 'reconcile' })!;
    expect(Math.abs(lastSuccess * 1000 - finished.time)).toBeLessThan(1000);
    for (const text of texts) {
      expect(metricValue(text, 'scimsync_build_info')).toBe(1);
      // Everyone waited on the shared limiter (and on the 429 block).
      expect(metricValue(text, 'scimsync_rate_limit_wait_seconds_total', { tenant: 'acme' }) ?? 0).toBeGreaterThan(0.5);
      expect(metricValue(text, 'scimsync_queue_jobs', { queue: 'reconcile', state: 'completed' })).toBe(1);
      expect(metricValue(text, 'scimsync_queue_jobs', { queue: 'reconcile-apply', state: 'failed' })).toBe(0);
      // One queue, one label value, on every metric: the BullMQ queue name.
      const queuesOf = (name: string): string[] =>
        [...new Set([...text.matchAll(new RegExp(`^${name}\\{[^}]*queue="([^"]+)"`, 'gm'))].map((m) => m[1]!))].sort();
      expect(queuesOf('scimsync_queue_jobs')).toEqual(['audit-export', 'reconcile', 'reconcile-apply']);
      for (const q of [...queuesOf('scimsync_jobs_total'), ...queuesOf('scimsync_job_duration_seconds_count')])
        expect(queuesOf('scimsync_queue_jobs')).toContain(q);
    }

    // /status: the run is visible from every replica (it is read from Redis).
    for (const d of daemons) {
      const status = await getJson<{ tenants: Array<Record<string, unknown>> }>(`${d.url}/status`);
      expect(status.status).toBe(200);
      const acme = status.body.tenants.find((t) => t['tenant'] === 'acme')!;
      expect((acme['runs'] as { reconcile: Array<{ result: string }> }).reconcile[0]?.result).toBe('success');
      assertNoSecret(JSON.stringify(status.body), TOKEN_A, `/status of ${d.pid}`);
    }

    // Job data holds ids only; the token is nowhere in Redis, metrics or logs.
    const jobs = [...(await jobHashes(ws, 'reconcile')), ...(await jobHashes(ws, 'reconcile-apply'))];
    expect(jobs.length).toBeGreaterThan(USERS / 5);
    const allowed = new Set(['tenant', 'trigger', 'runId', 'phase', 'index', 'chunks', 'fence']);
    for (const j of jobs) {
      for (const [k, v] of Object.entries(j.data)) {
        expect(allowed.has(k), `job ${j.id} data key ${k}`).toBe(true);
        expect(String(v)).not.toMatch(/@|user\d/);
      }
      assertNoSecret(JSON.stringify(j.hash), TOKEN_A, `job hash ${j.key}`);
      expect(j.hash['data']).not.toMatch(/@example\.com/);
    }
    for (const [key, value] of await dumpKeyspace(ws)) assertNoSecret(value, TOKEN_A, `Redis key ${key}`);
    for (const text of texts) assertNoSecret(text, TOKEN_A, '/metrics');
    const stops = await Promise.all(daemons.map((d) => d.stop()));
    for (const [i, s] of stops.entries()) {
      expect(s.code).toBe(0);
      assertNoSecret(daemons[i]!.output(), TOKEN_A, `the logs of daemon ${i}`);
    }
  });
});
