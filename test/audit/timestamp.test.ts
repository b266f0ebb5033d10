import { describe, expect, it } from 'vitest';
import { createTimestampParser, isValidTimeZone } from '../../src/audit/timestamp.ts';

const utc = (s: string): number => Date.parse(s);

describe('createTimestampParser', () => {
  it('reads ISO forms with and without offsets, fractions and a space separator (UTC default)', () => {
    const p = createTimestampParser();
    expect(p('2026-11-01T10:00:00Z')).toBe(utc('2026-11-01T10:00:00Z'));
    expect(p('2026-11-01T10:00:00.123456Z')).toBe(utc('2026-11-01T10:00:00.123Z'));
    expect(p('2026-11-01 10:00:00')).toBe(utc('2026-11-01T10:00:00Z'));
    expect(p('2026-11-01T12:00:00+02:00')).toBe(utc('2026-11-01T10:00:00Z'));
    expect(p('2026-11-01T05:30:00-0430')).toBe(utc('2026-11-01T10:00:00Z'));
    expect(p('2026-11-01')).toBe(utc('2026-11-01T00:00:00Z'));
    expect(p(' 1793527200 ')).toBe(1793527200_000);
    expect(p('1793527200123')).toBe(1793527200123);
  });

  it('rejects what it cannot place on the time line', () => {
    const p = createTimestampParser();
    for (const v of ['', 'yesterday', '11/01/2026 10:00', '2026-13-45T99:00:00Z', 'Sun Nov 01 2026 10:00:00']) expect(p(v)).toBeUndefined();
  });

  it('refuses days a month does not have instead of rolling them into the next month', () => {
    const p = createTimestampParser();
    for (const v of ['2026-02-29', '2026-02-31T00:00:00.000Z', '2026-04-31 10:00:00', '2100-02-29T00:00:00Z']) expect(p(v)).toBeUndefined();
    expect(p('2028-02-29')).toBe(utc('2028-02-29T00:00:00Z'));
    expect(p('2000-02-29T00:00:00.000Z')).toBe(utc('2000-02-29T00:00:00.000Z'));
    expect(p('2026-12-31T23:59:59.999Z')).toBe(utc('2026-12-31T23:59:59.999Z'));
  });

  it('reads years below 100 as themselves, not as 19xx', () => {
    const p = createTimestampParser();
    expect(p('0050-01-01')).toBe(utc('0050-01-01T00:00:00Z'));
    expect(p('0004-02-29T12:00:00.000Z')).toBe(utc('0004-02-29T12:00:00.000Z'));
    expect(new Date(p('0099-12-31 23:59:59') as number).toISOString()).toBe('0099-12-31T23:59:59.000Z');
  });

  it('applies a fixed offset or an IANA zone (with DST) to values without an offset', () => {
    expect(createTimestampParser('+05:30')('2026-11-01 15:30:00')).toBe(utc('2026-11-01T10:00:00Z'));
    const paris = createTimestampParser('Europe/Paris');
    expect(paris('2026-07-01 12:00:00')).toBe(utc('2026-07-01T10:00:00Z')); // CEST, UTC+2
    expect(paris('2026-12-01 12:00:00')).toBe(utc('2026-12-01T11:00:00Z')); // CET, UTC+1
    expect(paris('2026-12-01T12:00:00Z')).toBe(utc('2026-12-01T12:00:00Z')); // explicit zone wins
    const ny = createTimestampParser('America/New_York');
    expect(ny('2026-03-08 03:30:00')).toBe(utc('2026-03-08T07:30:00Z')); // just after the spring-forward gap
  });

  it('validates zone names', () => {
    expect(isValidTimeZone('UTC')).toBe(true);
    expect(isValidTimeZone('-08:00')).toBe(true);
    expect(isValidTimeZone('Asia/Kolkata')).toBe(true);
    expect(isValidTimeZone('Mars/Olympus')).toBe(false);
  });

  it('reads the exact toISOString form by position with the same result and the same range checks', () => {
    const parse = createTimestampParser('+05:00');
    for (let i = 0; i < 500; i++) {
      const ms = Math.floor(Math.random() * 4_102_444_800_000);
      const iso = new Date(ms).toISOString();
      expect(parse(iso)).toBe(ms);
      // The same instant through the general path (space separator) agrees.
      expect(parse(iso.replace('T', ' '))).toBe(ms);
    }
    for (const bad of [
      '2026-13-01T00:00:00.000Z',
      '2026-01-01T24:00:00.000Z',
      '2026-01-01T23:59:60.000Z',
      '2026-01-0aT00:00:00.000Z',
      '2026-01-01T00:00:00.0a0Z',
    ]) {
      expect(parse(bad)).toBeUndefined();
    }
  });
});
