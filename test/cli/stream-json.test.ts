import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonPieces, streamJson } from '../../src/cli/output.ts';

const printed = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

describe('streamJson', () => {
  it('writes exactly what JSON.stringify(value, null, 2) prints, for any value but a top-level undefined', () => {
    fc.assert(
      fc.property(
        fc.anything({ withDate: true, withNullPrototype: false }).filter((v) => v !== undefined),
        (value) => {
          expect([...jsonPieces(value)].join('')).toBe(printed(value));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('handles the cases JSON.stringify treats specially', () => {
    const value = {
      dropped: undefined,
      fn: () => 1,
      list: [undefined, () => 1, Number.NaN, Number.POSITIVE_INFINITY, new Date(0)],
      nested: { empty: {}, none: [], deep: [[[]], [{}]] },
      'q"uote\n': 'line\nbreak',
      long: Array.from({ length: 300 }, (_, i) => ({ i, members: Array.from({ length: 300 }, (_, k) => ({ k })) })),
    };
    expect([...jsonPieces(value)].join('')).toBe(printed(value));
    for (const top of [1, 'x', null, true, [], {}, [1, [2, [3]]]]) expect([...jsonPieces(top)].join('')).toBe(printed(top));
  });

  it('writes a large value in pieces, never as one string, and waits for drain', async () => {
    const value = { users: Array.from({ length: 20_000 }, (_, i) => ({ userName: `user${i}@example.com`, externalId: `u-${i}` })) };
    const out = new PassThrough({ highWaterMark: 1024 });
    const chunks: string[] = [];
    out.on('data', (d: Buffer) => chunks.push(d.toString()));
    await streamJson(value, out);
    out.end();
    expect(chunks.join('')).toBe(printed(value));
    expect(Math.max(...chunks.map((c) => c.length))).toBeLessThan(printed(value).length / 10);
  });
});
