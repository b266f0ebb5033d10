/**
 * The file source's fast path (src/sources/file/fast-entry.ts) accepts only entries the zod
 * schema accepts, and returns exactly what the schema returns; everything else falls back to
 * the schema and its messages. Checked on random entries, well formed and not.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { groupEntrySchema, userEntrySchema } from '../../src/sources/file/entry-schema.ts';
import { fastGroupEntry, fastUserEntry } from '../../src/sources/file/fast-entry.ts';

const text = fc.oneof(fc.constantFrom('Ana', 'ana@example.com', ' padded ', '', 'x\t', 'Ünïcode'), fc.string({ maxLength: 6 }));
const email = fc.oneof(fc.constantFrom('a@b.co', 'ana@example.com', 'not-an-email', ' a@b.co', 'a@b'), fc.emailAddress());
const value = fc.oneof(text, fc.integer(), fc.boolean(), fc.constant(null), fc.array(text, { maxLength: 2 }));
const maybe = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(arb, { nil: undefined });

const userLike = fc.record(
  {
    externalId: fc.oneof(text, fc.integer({ min: 1, max: 99 })),
    userName: text,
    givenName: maybe(text),
    familyName: maybe(text),
    displayName: text,
    name: fc.oneof(fc.record({ givenName: text, familyName: text }, { requiredKeys: [] }), value),
    emails: fc.oneof(email, fc.array(email, { maxLength: 3 }), value),
    active: fc.oneof(fc.boolean(), value),
    attributes: fc.oneof(fc.dictionary(fc.string({ maxLength: 4 }), value, { maxKeys: 3 }), value),
    emial: value,
  },
  { requiredKeys: [] },
);

const groupLike = fc.record(
  {
    externalId: fc.oneof(text, fc.integer()),
    displayName: text,
    members: fc.oneof(fc.array(fc.oneof(text, fc.integer()), { maxLength: 3 }), value),
    owner: value,
  },
  { requiredKeys: [] },
);

describe('file source fast path', () => {
  it('accepts a user entry only when the schema does, with the same result', () => {
    fc.assert(
      fc.property(userLike, (raw) => {
        const fast = fastUserEntry(raw);
        if (fast === undefined) return;
        const slow = userEntrySchema.safeParse(raw);
        expect(slow.success).toBe(true);
        expect(fast).toEqual(slow.data);
      }),
      { numRuns: 3000, seed: 42 },
    );
  });

  it('accepts a group entry only when the schema does, with the same result', () => {
    fc.assert(
      fc.property(groupLike, (raw) => {
        const fast = fastGroupEntry(raw);
        if (fast === undefined) return;
        const slow = groupEntrySchema.safeParse(raw);
        expect(slow.success).toBe(true);
        expect(fast).toEqual(slow.data);
      }),
      { numRuns: 3000, seed: 42 },
    );
  });

  it('takes the well-formed entries of a real directory (so the fast path is used at all)', () => {
    const user = {
      externalId: 'u-1',
      userName: 'ana@example.com',
      givenName: 'Ana',
      familyName: 'Lima',
      displayName: 'Ana Lima',
      emails: 'ana@example.com',
      attributes: { department: 'Sales' },
    };
    expect(fastUserEntry(user)).toEqual(userEntrySchema.parse(user));
    expect(fastGroupEntry({ externalId: 'g-1', displayName: 'Sales', members: ['u-1'] })).toEqual({
      externalId: 'g-1',
      displayName: 'Sales',
      members: ['u-1'],
    });
    // Not canonical: left to the schema (which trims, converts the number, or explains).
    expect(fastUserEntry({ ...user, userName: ' ana@example.com' })).toBeUndefined();
    expect(fastUserEntry({ ...user, externalId: 1001 })).toBeUndefined();
    expect(fastUserEntry({ ...user, emial: 'x' })).toBeUndefined();
  });
});
