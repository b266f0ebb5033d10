import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.ts';

let sim: Simulator;
const BASE_AUDIT = { startAt: '2026-11-01T00:00:00Z', eventsPerHour: 60, multilineDetailsRate: 0.2 };

beforeAll(async () => {
  sim = await startSimulator({ seed: 11, audit: BASE_AUDIT });
});
afterAll(() => sim.close());
beforeEach(() => {
  sim.setFaults([]);
  sim.audit.setOptions({
    ...BASE_AUDIT,
    idColumn: false,
    bom: false,
    crlf: false,
    order: 'asc',
    dropColumns: [],
    extraColumns: [],
    headers: {},
    timestampPrecision: 'ms',
    timestampSuffix: 'Z',
    endInclusive: false,
    maxRows: undefined,
  });
});

async function exportCsv(query: Record<string, string>, s: Simulator = sim): Promise<{ res: Response; text: string }> {
  const res = await fetch(`${s.url}/api/v1/audit-logs/export?${new URLSearchParams(query)}`, {
    headers: { authorization: 'Bearer test-token' },
  });
  return { res, text: await res.text() };
}

function rows(text: string): Array<Record<string, string>> {
  return parse(text, { columns: true, bom: true }) as Array<Record<string, string>>;
}

describe('audit export: windows', () => {
  it('a date-only window covers that whole day, streamed as a CSV attachment', async () => {
    const { res, text } = await exportCsv({ start: '2026-11-01', end: '2026-11-01' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="audit-logs-2026-11-01-2026-11-01.csv"');
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    const r = rows(text);
    expect(r).toHaveLength(24 * 60);
    expect(r).toHaveLength(sim.audit.countEvents('2026-11-01', '2026-11-01'));
    expect(r.every((x) => x['Timestamp']!.startsWith('2026-11-01T'))).toBe(true);
    expect(Object.keys(r[0]!)).toEqual(['Timestamp', 'Event Name', 'User Email', 'IP Address', 'Deployment ID', 'Details']);
  });

  it('datetime windows: start inclusive, end exclusive (inclusive with endInclusive), adjacent windows partition', async () => {
    const hour = rows((await exportCsv({ start: '2026-11-01T10:00:00Z', end: '2026-11-01T11:00:00Z' })).text);
    expect(hour).toHaveLength(60);
    const t = hour[5]!['Timestamp']!;
    expect(rows((await exportCsv({ start: t, end: t })).text)).toHaveLength(0);
    expect(rows((await exportCsv({ start: t, end: '2026-11-01T11:00:00Z' })).text)[0]!['Timestamp']).toBe(t);
    sim.audit.setOptions({ endInclusive: true });
    expect(rows((await exportCsv({ start: t, end: t })).text).map((x) => x['Timestamp'])).toEqual([t]);
    sim.audit.setOptions({ endInclusive: false });
    const a = rows((await exportCsv({ start: '2026-11-01T10:00:00Z', end: t })).text);
    const b = rows((await exportCsv({ start: t, end: '2026-11-01T11:00:00Z' })).text);
    expect([...a, ...b]).toEqual(hour);
  });

  it('rejects invalid dates and reversed windows with 400 { error }', async () => {
    const bad: Array<Record<string, string>> = [
      { start: '2026-13-01' },
      { start: 'yesterday' },
      { start: '2026-11-02', end: '2026-11-01T00:00:00Z' },
    ];
    for (const q of bad) {
      const { res, text } = await exportCsv(q);
      expect(res.status, JSON.stringify(q)).toBe(400);
      expect(typeof (JSON.parse(text) as { error: unknown }).error).toBe('string');
    }
  });

  it('a missing end means "up to now"; a missing start means "from the beginning"', async () => {
    const s = await startSimulator({
      seed: 1,
      audit: { startAt: '2026-11-01T00:00:00Z', eventsPerHour: 60, clock: () => Date.parse('2026-11-01T02:00:00Z') },
    });
    try {
      expect(rows((await exportCsv({}, s)).text)).toHaveLength(120);
      expect(s.audit.countEvents()).toBe(120);
    } finally {
      await s.close();
    }
  });
});

describe('audit export: content', () => {
  it('is well-formed CSV with JSON details containing commas, quotes and newlines, equal to eventsIn()', async () => {
    const { text } = await exportCsv({ start: '2026-11-02', end: '2026-11-02' });
    const parsed = rows(text);
    const expected = [...sim.audit.eventsIn('2026-11-02', '2026-11-02')];
    expect(parsed).toEqual(expected.map((e) => e.fields));
    const details = parsed.map((r) => r['Details']!);
    expect(details.some((d) => d.includes('\n'))).toBe(true);
    expect(details.some((d) => d.includes(',') && d.includes('"'))).toBe(true);
    for (const d of details) expect(() => JSON.parse(d)).not.toThrow();
    expect(parsed.some((r) => r['IP Address']!.includes(':'))).toBe(true); // IPv6 present
    expect(parsed.some((r) => /^\d+\.\d+\.\d+\.\d+$/.test(r['IP Address']!))).toBe(true);
    expect(new Set(parsed.map((r) => r['Event Name'])).size).toBeGreaterThan(5);
  });

  it('is deterministic for a seed and different for another seed', async () => {
    const again = await startSimulator({ seed: 11, audit: BASE_AUDIT });
    const other = await startSimulator({ seed: 12, audit: BASE_AUDIT });
    try {
      const q = { start: '2026-11-03T00:00:00Z', end: '2026-11-03T03:00:00Z' };
      const mine = (await exportCsv(q)).text;
      expect((await exportCsv(q, again)).text).toBe(mine);
      expect((await exportCsv(q, other)).text).not.toBe(mine);
    } finally {
      await again.close();
      await other.close();
    }
  });

  it('filters by eventName, userEmail and full-text search', async () => {
    const day = { start: '2026-11-01', end: '2026-11-01' };
    const logins = rows((await exportCsv({ ...day, eventName: 'Logged in' })).text);
    expect(logins.length).toBeGreaterThan(100);
    expect(logins.every((r) => r['Event Name'] === 'Logged in')).toBe(true);
    expect(logins).toHaveLength(sim.audit.countEvents('2026-11-01', '2026-11-01', { eventName: 'Logged in' }));
    const someone = logins[0]!['User Email']!;
    const theirs = rows((await exportCsv({ ...day, userEmail: someone.toUpperCase() })).text);
    expect(theirs.length).toBeGreaterThan(0);
    expect(theirs.every((r) => r['User Email'] === someone)).toBe(true);
    const searched = rows((await exportCsv({ ...day, search: 'xlsx' })).text);
    expect(searched.length).toBeGreaterThan(0);
    expect(searched.every((r) => Object.values(r).some((v) => v.includes('xlsx')))).toBe(true);
  });
});

describe('audit export: options', () => {
  it('id column, BOM and CRLF', async () => {
    sim.audit.setOptions({ idColumn: true, bom: true, crlf: true });
    const res = await fetch(`${sim.url}/api/v1/audit-logs/export?start=2026-11-01T00:00:00Z&end=2026-11-01T01:00:00Z`, {
      headers: { authorization: 'Bearer test-token' },
    });
    const bytes = Buffer.from(await res.arrayBuffer());
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = bytes.toString('utf8');
    expect(text.split('\r\n')[0]).toBe('\uFEFFEvent ID,Timestamp,Event Name,User Email,IP Address,Deployment ID,Details');
    expect(text.endsWith('\r\n')).toBe(true);
    const r = rows(text);
    expect(r).toHaveLength(60);
    expect(new Set(r.map((x) => x['Event ID'])).size).toBe(60);
  });

  it('schema drift: renamed, dropped and extra columns', async () => {
    sim.audit.setOptions({
      headers: { eventName: 'Event' },
      dropColumns: ['IP Address'],
      extraColumns: [
        { header: 'Tenant', value: 'acme' },
        { header: 'Len', value: (e) => String(e.details.length) },
      ],
    });
    expect(sim.audit.header()).toEqual(['Timestamp', 'Event', 'User Email', 'Deployment ID', 'Details', 'Tenant', 'Len']);
    const r = rows((await exportCsv({ start: '2026-11-01T00:00:00Z', end: '2026-11-01T00:30:00Z' })).text);
    expect(Object.keys(r[0]!)).toEqual(sim.audit.header());
    expect(r.every((x) => x['Tenant'] === 'acme' && Number(x['Len']) === x['Details']!.length)).toBe(true);
  });

  it('descending order, second precision and +00:00 offsets', async () => {
    sim.audit.setOptions({ order: 'desc', timestampPrecision: 's', timestampSuffix: '+00:00' });
    const r = rows((await exportCsv({ start: '2026-11-01T00:00:00Z', end: '2026-11-01T02:00:00Z' })).text);
    const ts = r.map((x) => x['Timestamp']!);
    expect(ts.every((t) => /^2026-11-01T0[01]:\d\d:\d\d\+00:00$/.test(t))).toBe(true);
    expect([...ts].sort().reverse()).toEqual(ts);
    expect(ts).toHaveLength(120);
  });

  it('maxRows silently caps an export', async () => {
    sim.audit.setOptions({ maxRows: 7 });
    expect(rows((await exportCsv({ start: '2026-11-01', end: '2026-11-01' })).text)).toHaveLength(7);
  });
});

describe('audit export: late events', () => {
  it('an event inserted into an already exported window shows up in order on re-export', async () => {
    const s = await startSimulator({ seed: 5, audit: BASE_AUDIT });
    try {
      const q = { start: '2026-11-01T05:00:00Z', end: '2026-11-01T06:00:00Z' };
      const before = rows((await exportCsv(q, s)).text);
      const late = s.audit.insertLateEvent({
        timestamp: '2026-11-01T05:30:00.000Z',
        eventName: 'Exported data',
        userEmail: 'late@example.com',
        details: { note: 'arrived "late", sorry' },
      });
      const after = rows((await exportCsv(q, s)).text);
      expect(after).toHaveLength(before.length + 1);
      const at = after.findIndex((r) => r['User Email'] === 'late@example.com');
      expect(after[at]).toEqual(late.fields);
      expect(after[at - 1]!['Timestamp']! <= '2026-11-01T05:30:00.000Z').toBe(true);
      expect(after[at + 1]!['Timestamp']! >= '2026-11-01T05:30:00.000Z').toBe(true);
      expect([...after.slice(0, at), ...after.slice(at + 1)]).toEqual(before);
      expect(s.audit.countEvents(q.start, q.end)).toBe(before.length + 1);
    } finally {
      await s.close();
    }
  });
});

describe('audit export: faults', () => {
  const path = '/api/v1/audit-logs/export';

  it('truncate: the stream stops mid-row and the connection is destroyed', async () => {
    sim.setFaults([{ kind: 'truncate', pathPrefix: path, afterBytes: 20_000, times: 1 }]);
    const res = await fetch(`${sim.url}${path}?start=2026-11-01&end=2026-11-01`, { headers: { authorization: 'Bearer test-token' } });
    expect(res.status).toBe(200);
    let received = '';
    const decoder = new TextDecoder();
    await expect(
      (async () => {
        for await (const chunk of res.body!) received += decoder.decode(chunk, { stream: true });
      })(),
    ).rejects.toThrow();
    expect(received.length).toBeGreaterThan(15_000);
    expect(received.length).toBeLessThan(30_000);
    expect(received.endsWith('\n')).toBe(false);
    expect(() => parse(received, { columns: true })).toThrow(); // the last row is incomplete
    const full = (await exportCsv({ start: '2026-11-01', end: '2026-11-01' })).text; // rule spent
    expect(full.startsWith(received)).toBe(true);
  });

  it('drip: tiny delayed chunks, same bytes', async () => {
    const q = { start: '2026-11-01T00:00:00Z', end: '2026-11-01T00:10:00Z' };
    const normal = (await exportCsv(q)).text;
    sim.setFaults([{ kind: 'drip', pathPrefix: path, chunkBytes: 256, delayMs: 2 }]);
    const res = await fetch(`${sim.url}${path}?${new URLSearchParams(q)}`, { headers: { authorization: 'Bearer test-token' } });
    let pieces = 0;
    const parts: Uint8Array[] = [];
    for await (const chunk of res.body!) {
      pieces++;
      parts.push(chunk);
    }
    expect(Buffer.concat(parts).toString('utf8')).toBe(normal);
    expect(pieces).toBeGreaterThan(2);
  });

  it('reset before headers and 503 with Retry-After', async () => {
    sim.setFaults([
      { kind: 'reset', pathPrefix: path, times: 1 },
      { kind: 'status', status: 503, retryAfterSeconds: 4, pathPrefix: path },
    ]);
    await expect(exportCsv({ start: '2026-11-01' })).rejects.toThrow();
    const { res, text } = await exportCsv({ start: '2026-11-01' });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('4');
    expect(JSON.parse(text)).toEqual({ error: expect.any(String) });
  });
});
