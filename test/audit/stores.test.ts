/**
 * The two state stores and the two dead-letter stores share one contract; each case runs
 * against the local files and against real Redis (unique key prefix per test).
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FileAuditStateStore, auditStateDir } from '../../src/audit/state/file-store.ts';
import { RedisAuditStateStore } from '../../src/audit/state/redis-store.ts';
import { auditRedisKeys } from '../../src/audit/state/redis-keys.ts';
import { FileDeadLetterStore } from '../../src/audit/dead-letter/file-store.ts';
import { RedisDeadLetterStore } from '../../src/audit/dead-letter/redis-store.ts';
import type { AuditStateStore } from '../../src/audit/state/store.ts';
import type { DeadLetter, DeadLetterStore } from '../../src/audit/dead-letter/store.ts';
import { ErrorCodes } from '../../src/errors.ts';
import { eventFromDoc } from '../../src/audit/event.ts';

let redis: Redis;
const cleanups: Array<() => Promise<void>> = [];
let n = 0;

beforeAll(() => {
  redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 2 });
});
afterAll(() => redis.disconnect());
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

interface Backend {
  name: string;
  state(tenant?: string): Promise<{ a: AuditStateStore; b: AuditStateStore }>;
  dlq(): Promise<DeadLetterStore>;
}

const backends: Backend[] = [
  {
    name: 'file',
    async state(tenant = 'acme') {
      const dir = await mkdtemp(join(tmpdir(), 'audit-state-'));
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
      return { a: new FileAuditStateStore(dir, tenant), b: new FileAuditStateStore(dir, tenant) };
    },
    async dlq() {
      const dir = await mkdtemp(join(tmpdir(), 'audit-dlq-'));
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
      return new FileDeadLetterStore(auditStateDir(dir, 'acme'));
    },
  },
  {
    name: 'redis',
    async state(tenant = 'acme') {
      const prefix = `test-audit-store-${process.pid}-${Date.now()}-${n++}`;
      cleanups.push(async () => {
        const keys = await redis.keys(`${prefix}:*`);
        if (keys.length) await redis.del(...keys);
      });
      return {
        a: new RedisAuditStateStore(redis, prefix, tenant, { leaseMs: 5_000 }),
        b: new RedisAuditStateStore(redis, prefix, tenant, { leaseMs: 5_000 }),
      };
    },
    async dlq() {
      const prefix = `test-audit-dlq-${process.pid}-${Date.now()}-${n++}`;
      cleanups.push(async () => {
        const keys = await redis.keys(`${prefix}:*`);
        if (keys.length) await redis.del(...keys);
      });
      return new RedisDeadLetterStore(redis, prefix, 'acme');
    },
  },
];

const letter = (i: number, sink = 'es'): DeadLetter => ({
  id: `id-${i}`,
  sink,
  atMs: 1,
  code: 'test',
  reason: 'r',
  attempts: 0,
  event: eventFromDoc(`k${i}`, i, { n: i }),
});

describe.each(backends)('$name state store', (backend) => {
  it('starts empty, commits cursor and keys atomically, prunes, never moves the cursor back', async () => {
    const { a, b } = await backend.state();
    expect(await a.load()).toMatchObject({ cursorMs: null, dedupe: [], columns: null, backfill: null });
    await a.acquire('test');
    await a.commit({
      cursorMs: 1000,
      added: [
        ['k1', 900],
        ['k2', 950],
      ],
      pruneBeforeMs: 0,
      columns: ['A', 'B'],
      backfill: { fromMs: 0, toMs: 5000, startedAtMs: 1 },
      nowMs: 77,
    });
    await a.commit({ cursorMs: 2000, added: [['k3', 1990]], pruneBeforeMs: 920, nowMs: 78 });
    await a.commit({ cursorMs: 1500, added: [], pruneBeforeMs: 920, backfill: null, nowMs: 79 });
    // A fresh instance sees exactly what was committed.
    const st = await b.load();
    expect(st.cursorMs).toBe(2000);
    expect(st.dedupe.sort()).toEqual([
      ['k2', 950],
      ['k3', 1990],
    ]);
    expect(st.columns).toEqual(['A', 'B']);
    expect(st.backfill).toBeNull();
    expect(st.updatedAtMs).toBe(79);
    await a.release();
  });

  it('lets one run hold the lease; the other gets a conflict until it is released', async () => {
    const { a, b } = await backend.state();
    await a.acquire('first');
    await expect(b.acquire('second')).rejects.toMatchObject({ code: ErrorCodes.CONFLICT, kind: 'conflict' });
    await expect(b.commit({ cursorMs: 1, added: [], pruneBeforeMs: 0, nowMs: 1 })).rejects.toMatchObject({ code: ErrorCodes.CONFLICT });
    await a.release();
    await b.acquire('second');
    await b.commit({ cursorMs: 5, added: [], pruneBeforeMs: 0, nowMs: 1 });
    expect((await a.load()).cursorMs).toBe(5);
    await b.release();
  });

  it('commits many keys in one go', async () => {
    const { a, b } = await backend.state();
    await a.acquire('bulk');
    const added: Array<[string, number]> = Array.from({ length: 12_345 }, (_, i) => [`key-${i}`, 10_000 + i]);
    await a.commit({ cursorMs: 30_000, added, pruneBeforeMs: 10_000, nowMs: 1 });
    const st = await b.load();
    expect(st.dedupe).toHaveLength(12_345);
    expect(st.cursorMs).toBe(30_000);
    await a.release();
  });
});

describe('file state specifics', () => {
  it('takes over a lock left by a dead process, and keeps no temp files behind', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'audit-lock-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const auditDir = auditStateDir(dir, 'acme');
    const store = new FileAuditStateStore(dir, 'acme');
    await store.acquire('x');
    await store.release();
    const { hostname } = await import('node:os');
    await writeFile(
      join(auditDir, 'run.lock'),
      JSON.stringify({ pid: 2 ** 22 + 12345, host: hostname(), owner: 'ghost', atMs: Date.now() }),
    );
    await store.acquire('after-crash');
    await store.commit({ cursorMs: 9, added: [['a', 9]], pruneBeforeMs: 0, nowMs: 1 });
    await store.release();
    expect((await readdir(auditDir)).sort()).toEqual(['state.journal']);
    // The next run folds the journal into a snapshot; nothing else is left behind.
    await store.acquire('next');
    expect((await store.load()).dedupe).toEqual([['a', 9]]);
    await store.release();
    expect((await readdir(auditDir)).sort()).toEqual(['state.json']);
  });

  it('ignores a torn last journal line (a commit that was never acknowledged) and compacts when the journal grows', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'audit-journal-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const store = new FileAuditStateStore(dir, 'acme', { compactBytes: 400 });
    await store.acquire('x');
    await store.commit({ cursorMs: 10, added: [['a', 10]], pruneBeforeMs: 0, nowMs: 1 });
    await store.commit({ cursorMs: 20, added: [['b', 20]], pruneBeforeMs: 0, nowMs: 2 });
    await store.release();
    const { appendFile } = await import('node:fs/promises');
    await appendFile(join(auditStateDir(dir, 'acme'), 'state.journal'), '{"c":99,"a":[["torn",9');
    const st = await new FileAuditStateStore(dir, 'acme').load();
    expect(st.cursorMs).toBe(20);
    expect(st.dedupe.sort()).toEqual([
      ['a', 10],
      ['b', 20],
    ]);
    // Enough commits to pass compactBytes: the journal is folded away mid-run.
    await store.acquire('y');
    await store.load();
    for (let i = 0; i < 10; i++) await store.commit({ cursorMs: 100 + i, added: [[`k${i}`, 100 + i]], pruneBeforeMs: 0, nowMs: 3 });
    await store.release();
    const files = await readdir(auditStateDir(dir, 'acme'));
    expect(files).toContain('state.json');
    const after = await new FileAuditStateStore(dir, 'acme').load();
    expect(after.cursorMs).toBe(109);
    expect(after.dedupe).toHaveLength(12);
  });

  it('compacts from the state it holds: the same cursor and keys as folding the whole journal', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'audit-compact-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const compacting = new FileAuditStateStore(dir, 'small', { compactBytes: 300 });
    const journalOnly = new FileAuditStateStore(dir, 'big');
    for (const store of [compacting, journalOnly]) {
      await store.acquire('x');
      await store.load();
      // Cursor moves 10 per commit; keys older than cursor − 25 are pruned on the way.
      for (let i = 1; i <= 30; i++) {
        const added: Array<[string, number]> = [
          [`k${i}a`, i * 10],
          [`k${i}b`, i * 10 - 5],
        ];
        await store.commit({ cursorMs: i * 10, added, pruneBeforeMs: i * 10 - 25, nowMs: i, ...(i === 3 ? { columns: ['a', 'b'] } : {}) });
      }
      await store.release();
    }
    const small = await new FileAuditStateStore(dir, 'small').load();
    const big = await new FileAuditStateStore(dir, 'big').load();
    expect((await readdir(auditStateDir(dir, 'small'))).sort()).toContain('state.json');
    expect(await readdir(auditStateDir(dir, 'big'))).not.toContain('state.json');
    expect(small.cursorMs).toBe(300);
    expect(small.columns).toEqual(['a', 'b']);
    expect(small.dedupe.sort()).toEqual(big.dedupe.sort());
    expect(small.dedupe.map(([k]) => k).sort()).toEqual(['k28a', 'k28b', 'k29a', 'k29b', 'k30a', 'k30b']);
  });

  it('compacts thousands of keys of any text (quotes, backslashes, accents, emoji, __proto__, empty) unchanged', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'audit-compact-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const odd = ['', '__proto__', 'constructor', 'say "hi"', 'back\\slash', 'ünï', '事件', '🙂', 'line\nbreak', 'tab\there'];
    const keys: Array<[string, number]> = Array.from({ length: 5_000 }, (_, i) => [
      i < odd.length ? (odd[i] as string) : `k-${i}`,
      1_000 + i,
    ]);
    const store = new FileAuditStateStore(dir, 'odd', { compactBytes: 50_000 });
    await store.acquire('x');
    await store.load();
    for (let i = 0; i < keys.length; i += 700)
      await store.commit({ cursorMs: 1_000 + i, added: keys.slice(i, i + 700), pruneBeforeMs: 0, nowMs: i });
    await store.release();
    expect(await readdir(auditStateDir(dir, 'odd'))).toContain('state.json');
    const st = await new FileAuditStateStore(dir, 'odd').load();
    expect(new Map(st.dedupe)).toEqual(new Map(keys));
  });

  it('reads the state an earlier release wrote (version 1: keys as an object) and rewrites it as pairs with the same keys', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'audit-v1-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const auditDir = auditStateDir(dir, 'acme');
    await mkdir(auditDir, { recursive: true });
    const v1 =
      '{"version":1,"tenant":"acme","cursorMs":50,"cursor":null,"columns":["a"],"backfill":null,"updatedAtMs":7,"dedupe":{"x":40,"say \\"hi\\"":45,"__proto__":46}}';
    await writeFile(join(auditDir, 'state.json'), v1);
    const store = new FileAuditStateStore(dir, 'acme');
    await store.acquire('upgrade');
    const expected = new Map<string, number>([
      ['x', 40],
      ['say "hi"', 45],
      ['__proto__', 46],
    ]);
    expect(new Map((await store.load()).dedupe)).toEqual(expected);
    await store.commit({ cursorMs: 60, added: [['y', 55]], pruneBeforeMs: 0, nowMs: 8 });
    await store.release();
    await store.acquire('compact'); // folds the journal into a new snapshot
    await store.load();
    await store.release();
    const written = JSON.parse(await readFile(join(auditDir, 'state.json'), 'utf8')) as { version: number; dedupe: unknown };
    expect(written.version).toBe(2);
    expect(new Map(written.dedupe as Array<[string, number]>)).toEqual(new Map([...expected, ['y', 55]]));
  });

  it('names the file and the fix when the state is corrupt', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'audit-corrupt-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const store = new FileAuditStateStore(dir, 'acme');
    await store.acquire('x');
    await store.commit({ cursorMs: 9, added: [], pruneBeforeMs: 0, nowMs: 1 });
    await store.release();
    await writeFile(join(auditStateDir(dir, 'acme'), 'state.json'), '{"cursorMs": 9, "dedu');
    await expect(new FileAuditStateStore(dir, 'acme').load()).rejects.toThrow(/state\.json is not valid JSON/);
  });
});

describe('redis keys', () => {
  it('builds every key under prefix:{tenant}:audit (one cluster slot per tenant)', () => {
    const k = auditRedisKeys('scimsync', 'acme');
    expect([k.state, k.dedupe, k.lock, k.deadLetterSinks, k.deadLetters('es'), k.deadLettersReplaying('es')]).toEqual([
      'scimsync:{acme}:audit:state',
      'scimsync:{acme}:audit:dedupe',
      'scimsync:{acme}:audit:lock',
      'scimsync:{acme}:audit:dlq-sinks',
      'scimsync:{acme}:audit:dlq:es',
      'scimsync:{acme}:audit:dlq:es:replaying',
    ]);
  });
});

describe.each(backends)('$name dead-letter store', (backend) => {
  it('adds, counts and peeks per sink', async () => {
    const d = await backend.dlq();
    expect(await d.counts()).toEqual({});
    await d.add([
      letter(1),
      letter(2),
      letter(3, 'splunk'),
      { ...letter(4, '_parse'), event: undefined, raw: 'x,y', line: 7 } as DeadLetter,
    ]);
    expect(await d.counts()).toEqual({ es: 2, splunk: 1, _parse: 1 });
    expect((await d.peek('es', 10)).map((e) => e.id)).toEqual(['id-1', 'id-2']);
    expect(await d.peek('_parse', 10)).toEqual([expect.objectContaining({ raw: 'x,y', line: 7 })]);
  });

  it('drains in batches, puts back what fails again, and does not loop on it', async () => {
    const d = await backend.dlq();
    await d.add(Array.from({ length: 25 }, (_, i) => letter(i)));
    const seen: string[] = [];
    const res = await d.drain('es', 10, async (batch) => {
      seen.push(...batch.map((e) => e.id));
      return batch.filter((e) => Number(e.id.slice(3)) % 5 === 0).map((e) => ({ ...e, attempts: e.attempts + 1 }));
    });
    expect(res).toEqual({ taken: 25, returned: 5 });
    expect(seen).toHaveLength(25);
    expect(await d.counts()).toEqual({ es: 5 });
    expect((await d.peek('es', 10)).every((e) => e.attempts === 1)).toBe(true);
  });

  it('a replay that dies mid-way leaves its batch for the next replay (at-least-once)', async () => {
    const d = await backend.dlq();
    await d.add(Array.from({ length: 6 }, (_, i) => letter(i)));
    await expect(
      d.drain('es', 4, async () => {
        throw new Error('sink down');
      }),
    ).rejects.toThrow('sink down');
    expect((await d.counts())['es']).toBe(6);
    const seen: string[] = [];
    await d.drain('es', 4, async (batch) => {
      seen.push(...batch.map((e) => e.id));
      return [];
    });
    expect(seen.sort()).toEqual(['id-0', 'id-1', 'id-2', 'id-3', 'id-4', 'id-5']);
    expect((await d.counts())['es'] ?? 0).toBe(0);
  });
});
