/** The `audit` config section: defaults, and messages that name the fix. */
import { describe, expect, it } from 'vitest';
import { auditSchema } from '../../src/audit/config-schema.ts';

const sinks = [{ type: 'file', name: 'siem', path: 'audit.ndjson' }];
const issues = (input: unknown): string[] => {
  const r = auditSchema.safeParse(input);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe('audit config', () => {
  it('fills every default from a config that only names its sinks', () => {
    const c = auditSchema.parse({ sinks });
    expect(c).toMatchObject({
      precision: 'datetime',
      windowMinutes: 60,
      overlapMinutes: 15,
      settleSeconds: 120,
      batchSize: 500,
      checkpointEvents: 5000,
      fieldStyle: 'ecs',
      timestamp: { timezone: 'UTC' },
      columns: {},
      filters: {},
      backfill: { maxWindowsPerMinute: 0 },
      retry: { windowAttempts: 5, baseDelayMs: 1000, maxDelayMs: 60_000 },
    });
    expect(c.sinks[0]).toMatchObject({ type: 'file', name: 'siem' });
  });

  it('explains what is wrong', () => {
    expect(issues({})).toEqual([expect.stringMatching(/^sinks: /)]);
    expect(issues({ sinks: [] })).toEqual(['sinks: configure at least one audit sink']);
    expect(issues({ sinks: [...sinks, ...sinks] })).toEqual([expect.stringContaining('duplicate sink name "siem"')]);
    expect(issues({ sinks, precision: 'date' })).toEqual([
      expect.stringContaining('windowMinutes: with precision: date, windowMinutes must be whole days'),
    ]);
    expect(issues({ sinks, timestamp: { timezone: 'Mars/Olympus' } })).toEqual([expect.stringContaining('IANA zone')]);
    expect(issues({ sinks, backfill: { from: '01/02/2026' } })).toEqual([expect.stringContaining('ISO 8601 date')]);
    expect(issues({ sinks, backfill: { from: '2026-01-02T00:00:00' } })).toEqual([expect.stringContaining('with its zone')]);
    expect(issues({ sinks, windowMinute: 5 })).toEqual([expect.stringContaining('windowMinute')]);
  });

  it('accepts dates, instants with a zone, offsets and IANA zones', () => {
    expect(
      issues({ sinks, precision: 'date', windowMinutes: 2880, backfill: { from: '2026-01-02' }, timestamp: { timezone: '+05:30' } }),
    ).toEqual([]);
    expect(issues({ sinks, backfill: { from: '2026-01-02T08:00:00+01:00' }, timestamp: { timezone: 'America/New_York' } })).toEqual([]);
  });
});
