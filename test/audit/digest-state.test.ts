/**
 * Window digests in the two state stores: added commit by commit, atomically with the keys,
 * kept through compactions and journal replays, bounded by retention. Each case runs against
 * the local files and real Redis (unique key prefix per test).
 */
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addHash, digestsOf, keyElement, subHash, ZERO_HASH } from '../../src/audit/digest/window-digest.ts';
import { FileAuditStateStore } from '../../src/audit/state/file-store.ts';
import { RedisAuditStateStore } from '../../src/audit/state/redis-store.ts';
import type { AuditStateStore, CommitUpdate } from '../../src/audit/state/store.ts';

const HOUR = 3_600_000;
const T0 = Date.parse('2026-11-01T00:00:00Z');

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

async function fileStore(compactBytes?: number): Promise<{ store: FileAuditStateStore; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'audit-digest-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return { store: new FileAuditStateStore(dir, 'acme', compactBytes === undefined ? {} : { compactBytes }), dir };
}

function redisStore(): RedisAuditStateStore {
  const prefix = `test-audit-digest-${process.pid}-${Date.now()}-${n++}`;
  cleanups.push(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
  });
  return new RedisAuditStateStore(redis, prefix, 'acme');
}

const stores: Array<[string, () => Promise<AuditStateStore>]> = [
  ['file', async () => (await fileStore()).store],
  ['redis', async () => redisStore()],
];

/** A commit of `pairs`, their digests added (the first one resets the digests to start at T0). */
function commit(pairs: Array<[string, number]>, cursorMs: number, first: boolean, pruneBeforeMs = 0): CommitUpdate {
  return {
    cursorMs,
    added: pairs,
    pruneBeforeMs: cursorMs - 15 * 60_000,
    nowMs: cursorMs,
    digests: { windowMs: HOUR, ...(first ? { reset: { sinceMs: T0 } } : {}), add: digestsOf(pairs, HOUR), pruneBeforeMs },
  };
}

function events(fromMs: number, count: number, stepMs: number, prefix = 'e'): Array<[string, number]> {
  return Array.from({ length: count }, (_, i) => [`${prefix}${fromMs + i * stepMs}`, fromMs + i * stepMs]);
}

describe('digest arithmetic', () => {
  it('is order-independent and a sum modulo 2^128, so a part subtracted from the whole leaves the rest', () => {
    const keys = ['a', 'b', 'c', 'd'].map((k) => keyElement(k));
    const ab = addHash(keys[0] as string, keys[1] as string);
    const whole = addHash(addHash(ab, keys[2] as string), keys[3] as string);
    const reversed = addHash(addHash(addHash(keys[3] as string, keys[2] as string), keys[1] as string), keys[0] as string);
    expect(reversed).toBe(whole);
    expect(subHash(whole, ab)).toBe(addHash(keys[2] as string, keys[3] as string));
    expect(subHash(ab, ab)).toBe(ZERO_HASH);
    expect(addHash('ffffffffffffffffffffffffffffffff', '00000000000000000000000000000001')).toBe(ZERO_HASH);
  });
});

for (const [name, make] of stores) {
  describe(`digests in the ${name} state`, () => {
    it('add up commit by commit to the digest of every committed event', async () => {
      const s = await make();
      await s.acquire('test');
      const a = events(T0, 300, 10_000);
      const b = events(T0 + 50 * 60_000, 300, 10_000, 'f');
      await s.commit(commit(a, T0 + HOUR, true));
      await s.commit(commit(b, T0 + 2 * HOUR, false));
      await s.release();
      const st = await s.load();
      expect(st.digests.windowMs).toBe(HOUR);
      expect(st.digests.sinceMs).toBe(T0);
      expect(st.digests.windows).toEqual(digestsOf([...a, ...b], HOUR));
    });

    it('a commit of more keys than one script call takes records each key once, with the keys (Redis slices)', async () => {
      const s = await make();
      await s.acquire('test');
      const many = events(T0, 12_345, 500);
      await s.commit(commit(many, T0 + 2 * HOUR, true));
      await s.release();
      expect((await s.load()).digests.windows).toEqual(digestsOf(many, HOUR));
    });

    it('forgets windows older than the retention bound and moves the digest start up to it', async () => {
      const s = await make();
      await s.acquire('test');
      const a = events(T0, 100, 60_000);
      await s.commit(commit(a, T0 + 2 * HOUR, true));
      await s.commit(commit([], T0 + 3 * HOUR, false, T0 + HOUR));
      await s.release();
      const st = await s.load();
      expect(st.digests.sinceMs).toBe(T0 + HOUR);
      expect(st.digests.windows.map((w) => w.startMs)).toEqual([T0 + HOUR]);
    });

    it('a reset drops the digests of another window length and starts again', async () => {
      const s = await make();
      await s.acquire('test');
      await s.commit(commit(events(T0, 10, 60_000), T0 + HOUR, true));
      const b = events(T0 + 2 * HOUR, 10, 60_000);
      await s.commit({
        ...commit(b, T0 + 3 * HOUR, false),
        digests: { windowMs: 2 * HOUR, reset: { sinceMs: T0 + 2 * HOUR }, add: digestsOf(b, 2 * HOUR), pruneBeforeMs: 0 },
      });
      await s.release();
      const st = await s.load();
      expect(st.digests.windowMs).toBe(2 * HOUR);
      expect(st.digests.sinceMs).toBe(T0 + 2 * HOUR);
      expect(st.digests.windows).toEqual(digestsOf(b, 2 * HOUR));
    });
  });
}

describe('digests in the file state journal', () => {
  it('survive a compaction after every commit', async () => {
    const { store } = await fileStore(1);
    await store.acquire('test');
    await store.load();
    const a = events(T0, 200, 10_000);
    const b = events(T0 + HOUR, 200, 10_000, 'f');
    await store.commit(commit(a, T0 + HOUR, true));
    await store.commit(commit(b, T0 + 2 * HOUR, false));
    await store.release();
    expect((await store.load()).digests.windows).toEqual(digestsOf([...a, ...b], HOUR));
  });

  it('a journal replayed after a crash between writing the snapshot and removing the journal is not added twice', async () => {
    const { store, dir } = await fileStore();
    const journal = join(dir, 'acme', 'audit', 'state.journal');
    await store.acquire('test');
    await store.load();
    const a = events(T0, 200, 10_000);
    const b = events(T0 + HOUR, 200, 10_000, 'f');
    await store.commit(commit(a, T0 + HOUR, true));
    await store.release();
    // A second run: the first commit is folded into the snapshot, the journal holds the second.
    await store.acquire('test');
    await store.load();
    await store.commit(commit(b, T0 + 2 * HOUR, false));
    await store.release();
    await copyFile(journal, `${journal}.kept`);
    // The next run folds the journal into a new snapshot and removes it…
    const next = new FileAuditStateStore(dir, 'acme');
    await next.acquire('test');
    await next.load();
    await next.release();
    // …and a crash before the removal would have left it there.
    await copyFile(`${journal}.kept`, journal);
    expect((await new FileAuditStateStore(dir, 'acme').load()).digests.windows).toEqual(digestsOf([...a, ...b], HOUR));
  });
});

describe('digests in the Redis state, a commit cut between its slices', () => {
  it('keys already in the dedupe set are in the digests too, so the next run (which skips them) loses nothing', async () => {
    const prefix = `test-audit-digest-cut-${process.pid}-${Date.now()}-${n++}`;
    cleanups.push(async () => {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
    });
    // The connection dies after the first script call of the commit (the process crashed there).
    let evals = 0;
    const cut = new Proxy(redis, {
      get(target, prop, receiver) {
        if (prop === 'eval')
          return (...args: unknown[]) => {
            evals++;
            if (evals > 1 && String(args[0]).includes('ZADD')) return Promise.reject(new Error('connection lost'));
            return (target.eval as (...a: unknown[]) => Promise<unknown>)(...args);
          };
        const v = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const s = new RedisAuditStateStore(cut, prefix, 'acme');
    await s.acquire('test');
    const many = events(T0, 12_000, 500);
    await expect(s.commit(commit(many, T0 + 2 * HOUR, true))).rejects.toThrow(/connection lost/);
    await s.release();
    const st = await new RedisAuditStateStore(redis, prefix, 'acme').load();
    expect(st.dedupe.length).toBe(5000);
    expect(st.digests.windows).toEqual(digestsOf(st.dedupe, HOUR));
  });
});
