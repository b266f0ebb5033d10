/**
 * DedupeSet: the keys held for lookups are the store's (constructor or reload()), pruned by
 * time in and out of order; additions are pending until taken for a commit, and are held for
 * lookups only after a reload (a retried window); dead-lettered row keys live by their own time.
 */
import { describe, expect, it } from 'vitest';
import { BAD_ROW_KEY_PREFIX, DedupeSet } from '../../src/audit/dedupe-set.ts';

/** A plain model: key → largest time held, pruned by time. */
class Model {
  readonly m = new Map<string, number>();
  hold(k: string, ts: number): void {
    this.m.set(k, Math.max(ts, this.m.get(k) ?? ts));
  }
  prune(before: number): void {
    for (const [k, ts] of this.m) if (ts < before) this.m.delete(k);
  }
}

function expectSame(s: DedupeSet, model: Model, universe: Iterable<string>): void {
  for (const k of universe) expect(s.has(k), k).toBe(model.m.has(k));
  expect(s.size).toBe(model.m.size);
}

describe('DedupeSet', () => {
  it('holds the store keys it was given; an addition is pending, not held, until a reload', () => {
    const s = new DedupeSet([
      ['a', 1],
      ['b', 2],
    ]);
    expect(s.has('a')).toBe(true);
    expect(s.has('c')).toBe(false);
    s.add('c', 3);
    expect(s.has('c')).toBe(false);
    expect(s.size).toBe(2);
    expect(new DedupeSet().has('')).toBe(false);
  });

  it('prune after out-of-order entries is exact', () => {
    const model = new Model();
    const entries: Array<[string, number]> = [];
    let seed = 3;
    for (let i = 0; i < 500; i++) {
      seed = (seed * 48271) % 2147483647;
      const ts = seed % 1000;
      entries.push([`k${i % 400}`, ts]); // some keys twice, with another time
      model.hold(`k${i % 400}`, ts);
    }
    const s = new DedupeSet(entries);
    const keys = entries.map(([k]) => k);
    expectSame(s, model, keys);
    for (const bound of [100, 100, 400, 650, 999, 1000]) {
      const before = model.m.size;
      model.prune(bound);
      expect(s.prune(bound)).toBe(before - model.m.size);
      expectSame(s, model, keys);
    }
  });

  it('a retried window reloads: the store keys, and what was delivered but not committed', () => {
    const s = new DedupeSet([['old', 5]]);
    s.add('a', 10);
    s.add('b', 20);
    const committed = s.takePending(); // a commit took a and b
    s.add('c', 30); // delivered after that commit, not committed yet
    expect(s.has('a') || s.has('b') || s.has('c')).toBe(false);
    s.reload([['old', 5], ...committed]);
    for (const k of ['old', 'a', 'b', 'c']) expect(s.has(k), k).toBe(true);
    expect(s.has('d')).toBe(false);
    // c is still pending: the next commit carries it.
    expect(s.takePending()).toEqual([['c', 30]]);
    // A reload replaces the held keys (the store pruned `old`).
    s.reload(committed);
    expect(s.has('old')).toBe(false);
    expect(s.has('a')).toBe(true);
  });

  it('a key held twice with different times lives until its later time', () => {
    const s = new DedupeSet([
      ['a', 20],
      ['b', 15],
      ['a', 10],
    ]);
    s.prune(16); // drops b@15, not a@20
    expect(s.has('a')).toBe(true);
    expect(s.has('b')).toBe(false);
    s.prune(21);
    expect(s.has('a')).toBe(false);
    s.add('a', 25);
    s.add('a', 22);
    s.reload([]);
    s.prune(23);
    expect(s.has('a')).toBe(true);
    s.prune(26);
    expect(s.has('a')).toBe(false);
  });

  it('keeps `bad:` keys of dead-lettered rows: found, pruned by their own time', () => {
    const s = new DedupeSet([
      [`${BAD_ROW_KEY_PREFIX}old`, 5],
      ['e1', 100],
      [`${BAD_ROW_KEY_PREFIX}x`, 1_000_000],
      [`${BAD_ROW_KEY_PREFIX}y`, 50],
      ['e2', 200],
    ]);
    expect(s.has(`${BAD_ROW_KEY_PREFIX}x`) && s.has(`${BAD_ROW_KEY_PREFIX}y`) && s.has(`${BAD_ROW_KEY_PREFIX}old`)).toBe(true);
    expect(s.has(`${BAD_ROW_KEY_PREFIX}z`)).toBe(false);
    expect(s.prune(60)).toBe(2); // bad:old and bad:y
    expect(s.has(`${BAD_ROW_KEY_PREFIX}x`) && s.has('e1')).toBe(true);
    expect(s.prune(150)).toBe(1); // e1
    expect(s.prune(999_999)).toBe(1); // e2
    expect(s.has(`${BAD_ROW_KEY_PREFIX}x`)).toBe(true);
    expect(s.prune(1_000_001)).toBe(1);
    expect(s.size).toBe(0);
  });

  it('carries any id-column key to the commit exactly as delivered, however many and however long', () => {
    // Ids with accents, CJK, emoji, quotes and long ones reach the commit unchanged, in delivery order.
    const s = new DedupeSet();
    const keys = ['évt-1', '事件-2', 'id "3" \\ 🙂', 'x'.repeat(100_000), '', `${BAD_ROW_KEY_PREFIX}ß`, 'lone \ud800 surrogate', '\udfff'];
    for (let i = 0; i < 3_000; i++) keys.push(`k-${i}-${'ü'.repeat(i % 7)}`);
    keys.forEach((k, i) => s.add(k, i * 1.5));
    expect(s.takePending()).toEqual(keys.map((k, i) => [k, i * 1.5]));
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
    expect(s.has('seed')).toBe(true);
  });
});
