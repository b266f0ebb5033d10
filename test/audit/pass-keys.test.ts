/**
 * PassKeys: identical rows are numbered over the whole pass whatever the row order, the table
 * grows past its first size without losing a count, and an id listed twice is spotted.
 */
import { hash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PassKeys } from '../../src/audit/event-key.ts';

const hex = (n: number): string => hash('sha256', `row ${n}`, 'hex');

/** The keys one pass gives to rows in this order, sorted (a set with multiplicity). */
function keysOf(rows: readonly string[]): string[] {
  const pass = new PassKeys();
  return rows.map((r) => pass.hashed(r)).sort();
}

describe('PassKeys', () => {
  it('numbers the second and third identical row #2 and #3, other rows keep their key', () => {
    const pass = new PassKeys();
    expect(pass.hashed(hex(1))).toBe(hex(1));
    expect(pass.hashed(hex(2))).toBe(hex(2));
    expect(pass.hashed(hex(1))).toBe(`${hex(1)}#2`);
    expect(pass.hashed(hex(1))).toBe(`${hex(1)}#3`);
    expect(new PassKeys().hashed(hex(1))).toBe(hex(1));
  });

  it('gives the same keys in any row order, past many table growths (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 1, max: 4 })), {
          minLength: 300,
          maxLength: 3000,
          size: 'max',
        }),
        fc.integer(),
        (spec, seed) => {
          const rows = spec.flatMap(([n, times]) => Array.from({ length: times }, () => hex(n)));
          // Fisher–Yates with a seeded generator: another order of the same rows.
          const shuffled = [...rows];
          let x = seed | 1;
          for (let i = shuffled.length - 1; i > 0; i--) {
            x = (Math.imul(x, 48271) + 11) | 0;
            const j = (x >>> 0) % (i + 1);
            [shuffled[i], shuffled[j]] = [shuffled[j] as string, shuffled[i] as string];
          }
          const a = keysOf(rows);
          expect(keysOf(shuffled)).toEqual(a);
          // Every key is unique, and a row repeated k times yields k, k#2 … k#k.
          expect(new Set(a).size).toBe(a.length);
          const counts = new Map<string, number>();
          for (const r of rows) counts.set(r, (counts.get(r) ?? 0) + 1);
          const expected = [...counts].flatMap(([k, c]) => Array.from({ length: c }, (_, i) => (i === 0 ? k : `${k}#${i + 1}`))).sort();
          expect(a).toEqual(expected);
        },
      ),
      { numRuns: 30, endOnFailure: true },
    );
  });

  it('counts 100,000 distinct rows and their repeats exactly', () => {
    const pass = new PassKeys();
    for (let i = 0; i < 100_000; i++) {
      expect(pass.hashed(hex(i))).toBe(hex(i));
      // Repeats before the table grows again: their counts must survive each growth.
      if (i % 7 === 0) expect(pass.hashed(hex(i))).toBe(`${hex(i)}#2`);
    }
    for (let i = 0; i < 100_000; i += 997) expect(pass.hashed(hex(i))).toBe(`${hex(i)}#${i % 7 === 0 ? 3 : 2}`);
  });

  it('spots an id listed twice', () => {
    const pass = new PassKeys();
    expect(pass.id('evt-1')).toBe('evt-1');
    expect(pass.id('evt-2')).toBe('evt-2');
    expect(pass.id('evt-1')).toBeUndefined();
  });
});
