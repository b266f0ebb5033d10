/**
 * Retention of the provisioning log, in both stores: records past the size bound or older
 * than the age bound go, oldest first; queries and the sink position keep working after.
 */
import { mkdtempSync, rmSync, writeFileSync, appendFileSync, readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { FileProvisioningLogStore, provisioningLogPath } from '../../src/provisioning-log/file-store.ts';
import type { NewRecord } from '../../src/provisioning-log/record.ts';
import { provisioningLogKeys, RedisProvisioningLogStore } from '../../src/provisioning-log/redis-store.ts';
import type { ProvisioningLogStore } from '../../src/provisioning-log/store.ts';

const DAY = 86_400_000;
const redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
const prefixes: string[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const p of prefixes.splice(0)) {
    const keys = await redis.keys(`${p}:*`);
    if (keys.length > 0) await redis.del(...keys);
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
afterAll(() => redis.disconnect());

const rec = (n: number, timeMs: number): NewRecord => ({
  time: new Date(timeMs).toISOString(),
  tenant: 'acme',
  runId: `run-${n}`,
  action: 'user.create',
  result: 'ok',
  object: { type: 'user', externalId: `u-${n}`, name: `user${n}@example.com`, id: `id-${n}` },
});

type Clock = { now: number };
const stores: Record<string, (clock: Clock, maxEntries: number, maxAgeMs: number) => ProvisioningLogStore> = {
  file: (clock, maxEntries, maxAgeMs) => {
    const dir = mkdtempSync(join(tmpdir(), 'plog-'));
    dirs.push(dir);
    return new FileProvisioningLogStore(dir, 'acme', { maxEntries, maxAgeMs }, () => clock.now);
  },
  redis: (clock, maxEntries, maxAgeMs) => {
    const prefix = `plog-${randomUUID().slice(0, 8)}`;
    prefixes.push(prefix);
    return new RedisProvisioningLogStore(redis, prefix, 'acme', { maxEntries, maxAgeMs }, () => clock.now);
  },
};

describe.each(Object.keys(stores))('%s store retention', (kind) => {
  it('keeps the newest maxEntries records', async () => {
    const clock = { now: Date.now() };
    const store = stores[kind]!(clock, 5, 30 * DAY);
    for (let n = 1; n <= 8; n++) await store.append([rec(n, clock.now)]);
    await store.trim();
    const all = await store.query({ limit: 100 });
    expect(all.map((r) => r.runId)).toEqual(['run-8', 'run-7', 'run-6', 'run-5', 'run-4']);
    // The sink position still finds what follows it after a trim.
    expect((await store.after(null, 10)).map((r) => r.runId)).toEqual(['run-4', 'run-5', 'run-6', 'run-7', 'run-8']);
    await store.setDeliveredUpTo(all[1]!.id);
    expect(await store.deliveredUpTo()).toBe(all[1]!.id);
    expect((await store.after(all[1]!.id, 10)).map((r) => r.runId)).toEqual(['run-8']);
  });

  it('drops records older than maxAge', async () => {
    // Redis stream ids carry the server's clock, so the age bound is tested against real time.
    const start = Date.now();
    const clock = { now: start };
    const store = stores[kind]!(clock, 1000, 2 * DAY);
    await store.append([rec(1, start), rec(2, start)]);
    await new Promise((r) => setTimeout(r, 20));
    clock.now = Date.now();
    const cut = clock.now;
    await store.append([rec(3, cut)]);
    // Two days and 10 ms later, the first two are too old; the third stays.
    clock.now = cut + 2 * DAY - 5;
    await store.trim();
    expect((await store.query({ limit: 100 })).map((r) => r.runId)).toEqual(['run-3']);
  });
});

describe('file store', () => {
  it('trims a log larger than one write chunk by streaming it: the newest maxEntries, in order, torn lines among the dropped', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plog-'));
    dirs.push(dir);
    const clock = { now: 1_800_000_000_000 };
    const store = new FileProvisioningLogStore(dir, 'acme', { maxEntries: 2_500, maxAgeMs: DAY }, () => clock.now);
    await store.append(Array.from({ length: 1_000 }, (_, i) => rec(i + 1, clock.now)));
    appendFileSync(provisioningLogPath(dir, 'acme'), '{"id":"torn\n');
    await store.append(Array.from({ length: 3_000 }, (_, i) => rec(i + 1_001, clock.now)));
    expect(readFileSync(provisioningLogPath(dir, 'acme'), 'utf8').length).toBeGreaterThan(3 * 256 * 1024);
    await store.trim();
    const lines = readFileSync(provisioningLogPath(dir, 'acme'), 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(2_500);
    const runs = lines.map((l) => (JSON.parse(l) as { runId: string }).runId);
    expect(runs[0]).toBe('run-1501');
    expect(runs.at(-1)).toBe('run-4000');
  });

  it('skips a line torn by a crash and continues the ids after it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plog-'));
    dirs.push(dir);
    const clock = { now: 1_800_000_000_000 };
    const store = new FileProvisioningLogStore(dir, 'acme', { maxEntries: 100, maxAgeMs: DAY }, () => clock.now);
    await store.append([rec(1, clock.now), rec(2, clock.now)]);
    appendFileSync(provisioningLogPath(dir, 'acme'), '{"id":"1800000000000-2","time":"2027-');
    writeFileSync(join(dir, 'ignored'), '');
    const again = new FileProvisioningLogStore(dir, 'acme', { maxEntries: 100, maxAgeMs: DAY }, () => clock.now);
    await again.append([rec(3, clock.now)]);
    const all = await again.query({ limit: 10 });
    expect(all.map((r) => r.runId)).toEqual(['run-3', 'run-2', 'run-1']);
    expect(new Set(all.map((r) => r.id)).size).toBe(3);
    expect(readFileSync(provisioningLogPath(dir, 'acme'), 'utf8')).toContain('run-3');
  });
});

describe('redis store', () => {
  it('is one capped stream per tenant under the key prefix', async () => {
    const prefix = `plog-${randomUUID().slice(0, 8)}`;
    prefixes.push(prefix);
    const store = new RedisProvisioningLogStore(redis, prefix, 'acme', { maxEntries: 3, maxAgeMs: DAY });
    await store.append([1, 2, 3, 4, 5].map((n) => rec(n, Date.now())));
    const key = provisioningLogKeys(prefix, 'acme').stream;
    expect(key).toBe(`${prefix}:{acme}:provisioning-log`);
    expect(await redis.type(key)).toBe('stream');
    expect(await redis.xlen(key)).toBe(3);
  });
});
