/**
 * DedupeSet: membership, pruning by time (in order and out of order), a key added twice,
 * dead-lettered row keys, the pending additions, and many pruned entries.
 */
import { describe, expect, it } from 'vitest';
import { BAD_ROW_KEY_PREFIX, DedupeSet } from '../../src/audit/dedupe-set.ts';

/** A plain model: key → largest time added, pruned by time. */
class Model {
  readonly m = new Map<string, number>();
  add(k: string, ts: number): void {
    this.m.set(k, Math.max(ts, this.m.get(k) ?? ts));
  }
  prune(before: number): void {
    for (const [k, ts] of this.m) if (ts < before) this.m.delete(k);
  }
}

function expectSame(s: DedupeSet, model: Model, universe: Iterable<string>): void {
  for (const k of universe) expect(s.has(k), k).toBe(model.m.has(k));
}

describe('DedupeSet', () => {
  it('has/add, with entries from the constructor', () => {
    const s = new DedupeSet([
      ['a', 1],
      ['b', 2],
    ]);
    expect(s.has('a')).toBe(true);
    expect(s.has('c')).toBe(false);
    s.add('c', 3);
    expect(s.has('c')).toBe(true);
    expect(s.has('')).toBe(false);
    expect(s.size).toBe(3);
  });

  it('prune in time order drops exactly the keys below the bound', () => {
    const s = new DedupeSet();
    for (let i = 0; i < 100; i++) s.add(`k${i}`, 1000 + i);
    expect(s.has('k0')).toBe(true);
    expect(s.prune(1050)).toBe(50);
    for (let i = 0; i < 100; i++) expect(s.has(`k${i}`), `k${i}`).toBe(i >= 50);
    expect(s.size).toBe(50);
    expect(s.prune(1050)).toBe(0);
    expect(s.prune(1051)).toBe(1);
    expect(s.has('k50')).toBe(false);
    expect(s.has('k51')).toBe(true);
    // Pruning does not lower the largest time.
    expect(s.prune(5000)).toBe(49);
    expect(s.size).toBe(0);
  });

  it('prune after out-of-order additions is exact', () => {
    const s = new DedupeSet();
    const model = new Model();
    const keys: string[] = [];
    let seed = 3;
    for (let i = 0; i < 500; i++) {
      seed = (seed * 48271) % 2147483647;
      const ts = seed % 1000;
      const k = `k${i}`;
      keys.push(k);
      s.add(k, ts);
      model.add(k, ts);
    }
    for (const bound of [100, 100, 400, 650, 999, 1000]) {
      const before = model.m.size;
      model.prune(bound);
      expect(s.prune(bound)).toBe(before - model.m.size);
      expectSame(s, model, keys);
      expect(s.size).toBe(model.m.size);
    }
  });

  it('stays right across add → has → prune → add → has, in and out of order', () => {
    const s = new DedupeSet();
    const model = new Model();
    const universe = new Set<string>();
    let seed = 11;
    const rnd = (n: number): number => {
      seed = (seed * 48271) % 2147483647;
      return seed % n;
    };
    let now = 0;
    for (let step = 0; step < 3000; step++) {
      const op = rnd(10);
      if (op < 5) {
        // Mostly forward in time, sometimes back; keys repeat with other times.
        now += rnd(4);
        const ts = rnd(8) === 0 ? now - rnd(50) : now;
        const k = `k${rnd(300)}`;
        universe.add(k);
        s.add(k, ts);
        model.add(k, ts);
      } else if (op < 8) {
        const k = `k${rnd(320)}`;
        expect(s.has(k), `step ${step}: ${k}`).toBe(model.m.has(k));
      } else {
        const bound = now - rnd(60);
        const before = model.m.size;
        model.prune(bound);
        const dropped = s.prune(bound);
        // Entries, not keys, are counted: at least the keys that went.
        expect(dropped).toBeGreaterThanOrEqual(before - model.m.size);
        if (rnd(3) === 0) expectSame(s, model, universe);
      }
    }
    expectSame(s, model, universe);
  });

  it('a key added twice with different times lives until its later time', () => {
    for (const lookFirst of [false, true]) {
      const s = new DedupeSet();
      s.add('a', 10);
      s.add('b', 15);
      if (lookFirst) expect(s.has('a')).toBe(true); // index built before the second addition
      s.add('a', 20);
      expect(s.has('a')).toBe(true);
      s.prune(16); // drops a@10 and b@15, not a@20
      expect(s.has('a')).toBe(true);
      expect(s.has('b')).toBe(false);
      s.prune(21);
      expect(s.has('a')).toBe(false);
      s.add('a', 25);
      expect(s.has('a')).toBe(true);
      // Added again at an earlier time than it already has (out of order): still its later time.
      s.add('a', 22);
      s.prune(23);
      expect(s.has('a')).toBe(true);
      s.prune(26);
      expect(s.has('a')).toBe(false);
    }
  });

  it('prunes without lookups in between, then finds only the live keys', () => {
    const s = new DedupeSet();
    s.add('a', 1);
    expect(s.has('a')).toBe(true);
    s.prune(0); // a lookup happened: index kept
    s.prune(0); // none since: index dropped
    s.add('b', 2); // not indexed now
    s.prune(2); // a@1 goes with no index to update
    expect(s.has('a')).toBe(false);
    expect(s.has('b')).toBe(true);
    s.add('c', 3); // indexed again
    expect(s.has('c')).toBe(true);
    s.prune(3);
    expect(s.has('b')).toBe(false);
    expect(s.has('c')).toBe(true);
  });

  it('keeps `bad:` keys of dead-lettered rows: found, pruned by their own time', () => {
    const s = new DedupeSet([[`${BAD_ROW_KEY_PREFIX}old`, 5]]);
    s.add('e1', 100);
    s.add(`${BAD_ROW_KEY_PREFIX}x`, 1_000_000);
    s.add(`${BAD_ROW_KEY_PREFIX}y`, 50);
    expect(s.has(`${BAD_ROW_KEY_PREFIX}x`)).toBe(true);
    expect(s.has(`${BAD_ROW_KEY_PREFIX}y`)).toBe(true);
    expect(s.has(`${BAD_ROW_KEY_PREFIX}old`)).toBe(true);
    expect(s.has(`${BAD_ROW_KEY_PREFIX}z`)).toBe(false);
    expect(s.size).toBe(4);
    // An event key added after a bad key with a large time is not taken as out of order.
    s.add('e2', 200);
    expect(s.prune(60)).toBe(2); // bad:old and bad:y
    expect(s.has(`${BAD_ROW_KEY_PREFIX}old`)).toBe(false);
    expect(s.has(`${BAD_ROW_KEY_PREFIX}y`)).toBe(false);
    expect(s.has(`${BAD_ROW_KEY_PREFIX}x`)).toBe(true);
    expect(s.has('e1')).toBe(true);
    expect(s.prune(150)).toBe(1); // e1
    expect(s.has('e1')).toBe(false);
    expect(s.has('e2')).toBe(true);
    expect(s.prune(999_999)).toBe(1); // e2
    expect(s.has(`${BAD_ROW_KEY_PREFIX}x`)).toBe(true);
    expect(s.prune(1_000_001)).toBe(1);
    expect(s.has(`${BAD_ROW_KEY_PREFIX}x`)).toBe(false);
    expect(s.size).toBe(0);
  });

  it('takePending / restorePending round trip, filtered by time, constructor entries not pending', () => {
    const s = new DedupeSet([['seed', 1]]);
    s.add('a', 10);
    s.add(`${BAD_ROW_KEY_PREFIX}r`, 5);
    s.add('b', 20);
    s.add('a', 30);
    const taken = s.takePending();
    expect(taken).toEqual([
      ['a', 10],
      [`${BAD_ROW_KEY_PREFIX}r`, 5],
      ['b', 20],
      ['a', 30],
    ]);
    expect(s.takePending()).toEqual([]);
    // A failed commit puts them back, before what was added since.
    s.add('c', 40);
    s.restorePending(taken);
    expect(s.takePending(15)).toEqual([
      ['b', 20],
      ['a', 30],
      ['c', 40],
    ]);
    expect(s.takePending()).toEqual([]);
    // Taking does not forget: the keys are still held.
    expect(s.has('a') && s.has('b') && s.has('c') && s.has('seed') && s.has(`${BAD_ROW_KEY_PREFIX}r`)).toBe(true);
  });

  it('prunes many keys in steps and keeps every live key', () => {
    const n = 12_000;
    for (const look of [true, false]) {
      const s = new DedupeSet();
      for (let i = 0; i < n; i++) s.add(`k${i}`, i);
      for (const bound of [1000, 4100, 5000, 9000, 9001, 11_999]) {
        if (look) s.has('k0'); // with and without an index kept across prunes
        expect(s.prune(bound)).toBeGreaterThan(0);
        expect(s.size).toBe(n - bound);
        for (let i = 0; i < n; i++)
          if (s.has(`k${i}`) !== i >= bound) throw new Error(`after prune(${bound}): k${i} ${i >= bound ? 'missing' : 'still held'}`);
      }
      // Additions after the compactions are found, and pruned in their turn.
      s.add(`k${n - 1}`, n - 1); // the one live key again: still one key
      s.add('late', n + 5);
      expect(s.size).toBe(2);
      expect(s.has('late') && s.has(`k${n - 1}`)).toBe(true);
      expect(s.prune(n)).toBe(1);
      expect(s.has(`k${n - 1}`)).toBe(false);
      expect(s.has('late')).toBe(true);
      expect(s.size).toBe(1);
    }
  });
});
