/**
 * The daemon's scheduled `audit verify` (`schedules.auditVerify`): registered on the audit queue
 * only when enabled, and each run sets the gap metrics. Real Redis (unique prefix), the
 * simulator on a socket, real BullMQ jobs; the export job before it is the daemon's own.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { auditMetrics } from '../../src/audit/metrics.ts';
import { parseConfig, type LoadedConfig } from '../../src/config/load.ts';
import { processAudit } from '../../src/jobs/audit-job.ts';
import { processAuditVerify } from '../../src/jobs/audit-verify-job.ts';
import { registerSchedulers, schedulerId } from '../../src/jobs/schedulers.ts';
import { createTenantRuntime, type TenantRuntime } from '../../src/jobs/tenant-runtime.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { startSimulator, type Simulator } from '../../src/simulator/index.ts';

const HOUR = 3_600_000;
const TOKEN = 'verify-job-token';
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Setup {
  sim: Simulator;
  redis: Redis;
  keyPrefix: string;
  queue: Queue;
  rt: TenantRuntime;
  startMs: number;
}

async function setup(verifyEnabled: boolean): Promise<Setup> {
  const startMs = Math.floor((Date.now() - 15 * 60_000) / HOUR) * HOUR - 3 * HOUR;
  const sim = await startSimulator({
    tokens: [{ token: TOKEN }],
    audit: { startAt: new Date(startMs).toISOString(), eventsPerHour: 300, idColumn: true },
  });
  cleanups.push(() => sim.close());
  const dir = await mkdtemp(join(tmpdir(), 'audit-verify-job-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
  const keyPrefix = `test-verify-job-${process.pid}-${Date.now()}`;
  cleanups.push(async () => {
    const keys = await redis.keys(`${keyPrefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });
  const yaml = [
    'tenant: acme',
    'platform:',
    `  baseUrl: ${sim.url}`,
    `  token: ${TOKEN}`,
    '  allowInsecureHttp: true',
    'audit:',
    '  settleSeconds: 0',
    `  backfill: { from: "${new Date(startMs).toISOString()}" }`,
    '  sinks: [{ type: file, name: siem, path: ./out/audit.ndjson }]',
    'schedules:',
    `  auditVerify: { enabled: ${verifyEnabled}, lookbackHours: 6 }`,
    '',
  ].join('\n');
  const parsed = await parseConfig(yaml, dir, {});
  const loaded: LoadedConfig = { ...parsed, configPath: join(dir, 'config.yaml') };
  const logger = createLogger({ level: 'silent' });
  const rt = createTenantRuntime(loaded, { redis, keyPrefix, logger });
  cleanups.push(() => rt.close());
  const queue = new Queue(`audit-verify-test-${Date.now()}`, { connection: redis, prefix: keyPrefix });
  cleanups.push(() => queue.close());
  return { sim, redis, keyPrefix, queue, rt, startMs };
}

function deps(s: Setup): Parameters<typeof processAuditVerify>[1] {
  return { redis: s.redis, keyPrefix: s.keyPrefix, tenants: new Map([['acme', s.rt]]), logger: createLogger({ level: 'silent' }) };
}

async function gauge(g: {
  get(): Promise<{ values: Array<{ labels: Record<string, unknown>; value: number }> }>;
}): Promise<number | undefined> {
  return (await g.get()).values.find((v) => v.labels['tenant'] === 'acme')?.value;
}

describe('scheduled audit verify', () => {
  it('is registered on the audit queue only when schedules.auditVerify.enabled', async () => {
    const on = await setup(true);
    const queues = { reconcile: on.queue, audit: on.queue };
    await registerSchedulers(queues, [on.rt]);
    expect((await on.queue.getJobScheduler(schedulerId('audit-verify', 'acme')))?.name).toBe('audit-verify');
    const off = {
      ...on.rt,
      loaded: {
        ...on.rt.loaded,
        config: {
          ...on.rt.loaded.config,
          schedules: { ...on.rt.loaded.config.schedules, auditVerify: { ...on.rt.loaded.config.schedules.auditVerify, enabled: false } },
        },
      },
    };
    await registerSchedulers(queues, [off]);
    expect(await on.queue.getJobScheduler(schedulerId('audit-verify', 'acme'))).toBeUndefined();
  });

  it('a run after an export that lost events sets the gap gauges, and a complete one clears them', async () => {
    const s = await setup(true);
    const lostFrom = s.startMs + HOUR + 5 * 60_000;
    s.sim.setFaults([
      {
        kind: 'drop-events',
        pathPrefix: '/api/v1/audit-logs/export',
        dropFrom: new Date(lostFrom).toISOString(),
        dropTo: new Date(lostFrom + 5 * 60_000).toISOString(),
        times: 1,
      },
    ]);
    const lost = [...s.sim.audit.eventsIn(new Date(lostFrom).toISOString(), new Date(lostFrom + 5 * 60_000).toISOString())].length;
    const exportJob = await s.queue.add('audit', { tenant: 'acme', trigger: 'manual' });
    await processAudit(exportJob, deps(s));
    s.sim.setFaults([]);
    const before =
      (await auditMetrics.verifyRunsTotal.get()).values.find((v) => v.labels['tenant'] === 'acme' && v.labels['result'] === 'gap')?.value ??
      0;
    const job = await s.queue.add('audit-verify', { tenant: 'acme', trigger: 'schedule' });
    const r = await processAuditVerify(job, deps(s));
    expect(r).toMatchObject({ result: 'gap', windowsDiffering: 1, missing: lost });
    expect(await gauge(auditMetrics.verifyGapWindows)).toBe(1);
    expect(await gauge(auditMetrics.verifyMissing)).toBe(lost);
    const after = (await auditMetrics.verifyRunsTotal.get()).values.find(
      (v) => v.labels['tenant'] === 'acme' && v.labels['result'] === 'gap',
    )?.value;
    expect(after).toBe(before + 1);
    // A tenant whose export lost nothing: the gauges go back to 0.
    const clean = await setup(true);
    await processAudit(await clean.queue.add('audit', { tenant: 'acme', trigger: 'manual' }), deps(clean));
    const ok = await processAuditVerify(await clean.queue.add('audit-verify', { tenant: 'acme', trigger: 'schedule' }), deps(clean));
    expect(ok).toMatchObject({ result: 'match', windowsDiffering: 0, missing: 0 });
    expect(ok.windowsChecked).toBeGreaterThanOrEqual(3);
    expect(await gauge(auditMetrics.verifyGapWindows)).toBe(0);
  });
});
