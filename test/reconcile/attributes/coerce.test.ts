/** Exact coercion of source values, the comparison used to decide a write, and the config rules. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.ts';
import { ConfigError } from '../../../src/errors.ts';
import { coerce, sameAttributeValue, takesAway } from '../../../src/reconcile/attributes/coerce.ts';

describe('coerce', () => {
  it.each([
    ['string', 'EU', 'EU'],
    ['string', 4711, '4711'],
    ['string', true, 'true'],
    ['string', ['only'], 'only'],
    ['number', '4711', 4711],
    ['number', ' -12.5 ', -12.5],
    ['number', '1e3', 1000],
    ['number', 7, 7],
    ['boolean', 'TRUE', true],
    ['boolean', 'false', false],
    ['boolean', false, false],
    ['string_array', 'a;b;a', ['a', 'b']],
    ['string_array', ['x', 2], ['x', '2']],
    ['number_array', ['1', 2, '3.5'], [1, 2, 3.5]],
  ] as const)('%s ← %j = %j', (type, raw, want) => {
    expect(coerce(raw, type, { split: ';' })).toEqual({ ok: true, value: want });
  });

  it.each([undefined, null, '', '   ', []])('an empty source value (%j) is no value', (raw) => {
    expect(coerce(raw, 'string')).toEqual({ ok: true, value: null });
    expect(coerce(raw, 'number_array')).toEqual({ ok: true, value: null });
  });

  it.each([
    ['number', '12abc', '"12abc" is not a number'],
    ['number', '0x10', '"0x10" is not a number'],
    ['number', '1,5', '"1,5" is not a number'],
    ['number', 'NaN', '"NaN" is not a number'],
    ['number', '12345678901234567890', '"12345678901234567890" cannot be represented exactly (beyond 2^53)'],
    ['number', true, 'true is not a number'],
    ['boolean', 'yes', '"yes" is not a boolean (expected true or false)'],
    ['boolean', 1, '1 is not a boolean (expected true or false)'],
    ['string', ['a', 'b'], '2 values for a single-valued string attribute'],
    ['string', { a: 1 }, '"{\\"a\\":1}" is not a string'],
    ['number_array', ['1', 'two'], 'element 2: "two" is not a number'],
  ] as const)('%s ← %j is rejected: %s', (type, raw, reason) => {
    expect(coerce(raw, type)).toEqual({ ok: false, reason });
  });

  it('a coerced value is a fixed point: coercing it again changes nothing (so platform values compare stably)', () => {
    const raw = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.boolean(),
      fc.array(fc.oneof(fc.string(), fc.integer()), { maxLength: 4 }),
    );
    const type = fc.constantFrom('string', 'number', 'boolean', 'string_array', 'number_array' as const);
    fc.assert(
      fc.property(raw, type, (r, t) => {
        const once = coerce(r, t);
        if (!once.ok) return;
        const twice = coerce(once.value, t);
        expect(twice).toEqual({ ok: true, value: once.value });
      }),
      { numRuns: 500, seed: 17 },
    );
  });
});

describe('comparison', () => {
  it('arrays compare as sets, scalars exactly (case matters: a region code is data)', () => {
    expect(sameAttributeValue(['b', 'a'], ['a', 'b'])).toBe(true);
    expect(sameAttributeValue(['a'], ['a', 'b'])).toBe(false);
    expect(sameAttributeValue('EU', 'eu')).toBe(false);
    expect(sameAttributeValue(null, 'x')).toBe(false);
    expect(sameAttributeValue(1, 1)).toBe(true);
  });

  it('takes away: a clear, a replaced scalar, a dropped array element; adding is not taking away', () => {
    expect(takesAway('EU', null)).toBe(true);
    expect(takesAway('EU', 'US')).toBe(true);
    expect(takesAway(['a', 'b'], ['a'])).toBe(true);
    expect(takesAway(['a'], ['a', 'b'])).toBe(false);
    expect(takesAway(null, 'EU')).toBe(false);
  });
});

describe('config', () => {
  const base = (attrs: unknown, platform: Record<string, unknown> = {}): string =>
    JSON.stringify({
      platform: { baseUrl: 'https://acme.example.com', token: 't', ...platform },
      provisioning: { source: { type: 'file', path: 'd.yaml' }, userAttributes: attrs },
    });
  const issues = async (text: string): Promise<string[]> => {
    try {
      await parseConfig(text, '/tmp', {});
    } catch (e) {
      if (e instanceof ConfigError) return e.issues;
      throw e;
    }
    return [];
  };

  it('defaults: whenMissing clear, accessRelevant true, reread every 24 h, guard limits 50 / 20 %', async () => {
    const { config } = await parseConfig(base([{ name: 'region', type: 'string', from: 'attributes.l' }]), '/tmp', {});
    expect(config.provisioning?.userAttributes).toEqual([
      { name: 'region', type: 'string', from: 'attributes.l', whenMissing: 'clear', accessRelevant: true },
    ]);
    expect(config.provisioning?.userAttributeSync).toEqual({ rereadAfterHours: 24 });
    expect(config.provisioning?.guards).toMatchObject({ maxAttributeClears: 50, maxAttributeClearPercent: 20 });
  });

  it('names the key and the fix for every mistake', async () => {
    expect((await issues(base([{ name: 'a', type: 'string' }]))).join('\n')).toContain(
      'a user attribute needs exactly one of `from`, `template` or `value`',
    );
    expect((await issues(base([{ name: 'a', type: 'date', from: 'x' }]))).join('\n')).toMatch(/provisioning\.userAttributes\[0\]\.type/);
    expect((await issues(base([{ name: 'a', type: 'string', from: 'x', split: ';' }]))).join('\n')).toContain(
      '`split` only applies to string_array and number_array',
    );
    expect(
      (
        await issues(
          base([
            { name: 'a', type: 'string', from: 'x' },
            { name: 'a', type: 'number', from: 'y' },
          ]),
        )
      ).join('\n'),
    ).toContain('duplicate user attribute "a"');
    expect((await issues(base([], { apiToken: 'x', apiTokenFile: '/nope' }))).join('\n')).toContain(
      'set at most one of platform.apiToken or platform.apiTokenFile',
    );
  });
});
