/**
 * `fieldStyle: ocsf`: every audit row becomes an OCSF 1.3.0 event of the class its event name
 * fits, and validates against the published OCSF 1.3.0 schema (test/audit/ocsf-schema/1.3.0, compiled by support/ocsf-compile.ts) — the
 * simulator's export over a socket with its edge shapes, a hand-written export of hostile rows,
 * and any row a property test makes up.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { EventBuilder } from '../../src/audit/build-event.ts';
import { uniqueColumnNames } from '../../src/audit/columns.ts';
import { eventDoc } from '../../src/audit/event.ts';
import { OCSF_VERSION } from '../../src/audit/ocsf/classes.ts';
import { encodeCef } from '../../src/audit/sinks/syslog/cef.ts';
import { syslogSinkSchema } from '../../src/audit/sinks/syslog/config.ts';
import { createTimestampParser } from '../../src/audit/timestamp.ts';
import { recordEvent } from '../../src/provisioning-log/sink-delivery.ts';
import type { ProvisioningRecord } from '../../src/provisioning-log/record.ts';
import { HOUR, T0, createHarness, type Harness } from './support/harness.ts';
import { startCsvServer, type CsvServer } from './support/csv-server.ts';
import { OCSF_SCHEMA, ocsfProblems } from './support/ocsf-validate.ts';

let h: Harness | undefined;
let csv: CsvServer | undefined;
afterEach(async () => {
  await h?.close();
  await csv?.close();
  h = csv = undefined;
});

const parseTimestamp = createTimestampParser('UTC');

function builder(columns: readonly string[]): EventBuilder {
  return new EventBuilder(columns, { fieldStyle: 'ocsf', overrides: {}, parseTimestamp });
}

function ocsfOf(columns: readonly string[], values: readonly string[], key = 'k1'): Record<string, unknown> {
  const b = builder(columns);
  const ts = b.timestampOf(values);
  if (typeof ts !== 'number') throw new Error(ts.reason);
  return eventDoc(b.build(values, ts, key));
}

/** A file-sink line without the sink's own `_key`/`_ts`. */
function withoutSinkFields(line: Record<string, unknown>): Record<string, unknown> {
  const { _key, _ts, ...doc } = line;
  return doc;
}

const SIM_HEADER = ['Event ID', 'Timestamp', 'Event Name', 'User Email', 'IP Address', 'Deployment ID', 'User Agent', 'Details'];

describe('class per event name (docs/audit.md#ocsf)', () => {
  // The table in docs/audit.md, row by row: the simulator's event names and the fallback.
  const TABLE: Array<[string, number, number, number, string]> = [
    ['Logged in', 3002, 1, 1, '{"method":"sso"}'],
    ['Logged out', 3002, 2, 1, '{}'],
    ['Failed login attempt', 3002, 1, 2, '{}'],
    ['Created user via SCIM', 3001, 1, 1, '{"target":"t@example.com"}'],
    ['Updated user via SCIM', 3001, 99, 1, '{"target":"t@example.com"}'],
    ['Deactivated user via SCIM', 3001, 5, 1, '{"target":"t@example.com"}'],
    ['Added user to group via SCIM', 3006, 3, 1, '{"target":"t@example.com","group":"Sales, EMEA"}'],
    ['Added user to group via SCIM', 3001, 99, 1, '{"target":"t@example.com"}'],
    ['Assigned role to user', 3001, 7, 1, '{"target":"t@example.com","role":"Admin"}'],
    ['Exported data', 6003, 2, 1, '{}'],
    ['Viewed dashboard', 6003, 2, 1, '{}'],
    ['Changed tenant settings', 6003, 3, 1, '{}'],
    ['Updated data model', 6003, 3, 1, '{}'],
    ['Created API key', 6003, 1, 1, '{}'],
    ['Revoked API key', 6003, 4, 1, '{}'],
    ['Sign-in', 3002, 1, 1, '{}'],
    ['Login denied', 3002, 1, 2, '{}'],
    ['Sign out', 3002, 2, 1, '{}'],
    ['Provisioned account', 3001, 1, 1, '{}'],
    ['Activated user', 3001, 2, 1, '{}'],
    ['Deleted user', 3001, 6, 1, '{}'],
    ['Reset password', 3001, 4, 1, '{}'],
    ['Changed password', 3001, 3, 1, '{}'],
    ['Revoked role', 3001, 8, 1, '{}'],
    ['Locked user', 3001, 9, 1, '{}'],
    ['Unlocked user', 3001, 99, 1, '{}'],
    ['Removed user from group', 3006, 4, 1, '{"group":"g"}'],
    ['Downloaded report', 6003, 2, 1, '{}'],
    ['Rotated the moon', 6003, 99, 0, '{}'],
    ['', 6003, 99, 0, '{}'],
  ];
  for (const [name, classUid, activityId, statusId, details] of TABLE) {
    it(`"${name}" (${details}) is class ${classUid}, activity ${activityId}, status ${statusId}, and validates`, () => {
      const e = ocsfOf(SIM_HEADER, ['e1', '2026-11-01T10:00:00.123Z', name, 'a@example.com', '203.0.113.7', '1234', 'curl/8', details]);
      expect(ocsfProblems(e)).toEqual([]);
      expect([e['class_uid'], e['activity_id'], e['status_id']]).toEqual([classUid, activityId, statusId]);
      expect(e['type_uid']).toBe(classUid * 100 + activityId);
    });
  }

  it('places the platform fields where OCSF puts them and keeps the original row', () => {
    const row = [
      'e1',
      '2026-11-01T10:00:00.123Z',
      'Created user via SCIM',
      'a@example.com',
      '2001:db8::1',
      '1234',
      'curl/8',
      '{"target":"t@example.com"}',
    ];
    const e = ocsfOf(SIM_HEADER, row, 'e1') as Record<string, unknown>;
    expect(e['time']).toBe(Date.parse('2026-11-01T10:00:00.123Z'));
    expect(e['metadata']).toEqual({
      version: OCSF_VERSION,
      product: { name: 'audit-log', vendor_name: 'analytics-platform' },
      uid: 'e1',
      log_name: 'platform.audit',
      event_code: 'Created user via SCIM',
      original_time: '2026-11-01T10:00:00.123Z',
    });
    expect(e['actor']).toEqual({ user: { name: 'a@example.com', email_addr: 'a@example.com' } });
    expect(e['user']).toEqual({ name: 't@example.com', email_addr: 't@example.com' });
    expect(e['src_endpoint']).toEqual({ ip: '2001:db8::1' });
    expect(e['severity_id']).toBe(1);
    // Account Change has no http_request: the user agent stays with the other unplaced columns.
    expect(e['unmapped']).toEqual({ 'Deployment ID': '1234', 'User Agent': 'curl/8', Details: '{"target":"t@example.com"}' });
    expect(JSON.parse(e['raw_data'] as string)).toEqual(Object.fromEntries(SIM_HEADER.map((c, i) => [c, row[i]])));
    expect(Object.keys(JSON.parse(e['raw_data'] as string))).toEqual(SIM_HEADER);

    const api = ocsfOf(SIM_HEADER, [
      'e2',
      '2026-11-01T10:00:00Z',
      'Exported data',
      'a@example.com',
      'not-an-ip',
      '1',
      'curl/8',
      '',
    ]) as Record<string, unknown>;
    expect(api['http_request']).toEqual({ user_agent: 'curl/8' });
    expect(api['api']).toEqual({ operation: 'Exported data', service: { name: 'audit-log' } });
    expect(api['src_endpoint']).toEqual({ name: 'not-an-ip' });
    expect(api['unmapped']).toEqual({ 'Deployment ID': '1', Details: '' });
  });

  it('reads a severity column; an unknown severity is Other with its text', () => {
    const cols = ['time', 'action', 'severity'];
    expect(ocsfOf(cols, ['2026-11-01T10:00:00Z', 'Logged in', 'High'])).toMatchObject({ severity_id: 4, severity: 'High' });
    expect(ocsfOf(cols, ['2026-11-01T10:00:00Z', 'Logged in', '5'])).toMatchObject({ severity_id: 5, severity: 'Critical' });
    const other = ocsfOf(cols, ['2026-11-01T10:00:00Z', 'Logged in', 'spicy']);
    expect(other).toMatchObject({ severity_id: 99, severity: 'spicy' });
    expect(ocsfProblems(other)).toEqual([]);
  });

  it('a severity cell "__proto__" is an Other severity, not the prototype of the name table', () => {
    const e = ocsfOf(['time', 'action', 'level'], ['2026-11-01T10:00:00Z', 'Logged in', '__proto__']);
    expect(e).toMatchObject({ severity_id: 99, severity: '__proto__' });
    expect(ocsfProblems(e)).toEqual([]);
  });

  it('the validator rejects what the schema forbids (it can fail)', () => {
    const good = ocsfOf(SIM_HEADER, ['e1', '2026-11-01T10:00:00Z', 'Logged in', 'a@example.com', '203.0.113.7', '1', 'x', '']);
    expect(ocsfProblems(good)).toEqual([]);
    const { user: _user, ...noUser } = good;
    expect(ocsfProblems(noUser)).toContain('event.user: required');
    expect(ocsfProblems({ ...good, type_uid: 300202 })).toContain('type_uid: not class_uid * 100 + activity_id');
    expect(ocsfProblems({ ...good, activity_id: 7 })).toContainEqual(expect.stringMatching(/^event\.activity_id: 7 is not one of/));
    expect(ocsfProblems({ ...good, activity_name: 'Logoff' })).toContainEqual(expect.stringMatching(/^event\.activity_name/));
    expect(ocsfProblems({ ...good, time: '2026-11-01' })).toContain('event.time: not a 64-bit integer');
    expect(ocsfProblems({ ...good, src_endpoint: { ip: 'nope' } })).toContain('event.src_endpoint.ip: not an IP address');
    expect(ocsfProblems({ ...good, actor: { user: { email_addr: 'x' } } })).toContain('event.actor.user.email_addr: not an e-mail address');
    expect(ocsfProblems({ ...good, category_uid: 6 })).toContainEqual(expect.stringMatching(/^category_uid/));
    expect(ocsfProblems({ ...good, colour: 'red' })).toContain('event.colour: not in the schema');
    expect(ocsfProblems({ ...good, class_uid: 4001 })).toEqual(['class_uid: 4001 is not a class of the vendored schema']);
    expect(ocsfProblems({ ...good, user: { email_addr: 'a@example.com' } })).toContain(
      'event.user: needs at least one of account, name, uid',
    );
  });

  it('the schema is the published OCSF 1.3.0 (compiled from its source files), not a hand-written list', () => {
    expect(OCSF_SCHEMA.version).toBe('1.3.0');
    const accountChange = OCSF_SCHEMA.classes.get(3001)!;
    // 1.3.0 ends Account Change at 11 MFA Factor Disable: Unlock (12) came with 1.4.0.
    expect(
      Object.keys(accountChange.attributes['activity_id']!.enum!)
        .map(Number)
        .sort((a, b) => a - b),
    ).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 99]);
    expect(accountChange.attributes['user']!.requirement).toBe('required');
    expect([...OCSF_SCHEMA.classes.keys()].sort()).toEqual([3001, 3002, 3006, 6003]);
    const unlocked = ocsfOf(SIM_HEADER, ['e1', '2026-11-01T10:00:00Z', 'Unlocked user', 'a@example.com', '203.0.113.7', '1', 'x', '']);
    expect(unlocked).toMatchObject({ activity_id: 99, activity_name: 'Unlock', type_name: 'Account Change: Unlock' });
    expect(ocsfProblems({ ...unlocked, activity_id: 12, type_uid: 300112 })).toContainEqual(
      expect.stringMatching(/^event\.activity_id: 12 is not one of/),
    );
  });

  it("Group Management's actor comes with the Host profile, which the event applies", () => {
    const e = ocsfOf(SIM_HEADER, [
      'e1',
      '2026-11-01T10:00:00Z',
      'Added user to group via SCIM',
      'a@example.com',
      '203.0.113.7',
      '1',
      'x',
      '{"group":"g"}',
    ]);
    expect(e['metadata']).toMatchObject({ profiles: ['host'] });
    expect(ocsfProblems(e)).toEqual([]);
    const { profiles: _p, ...metadata } = e['metadata'] as Record<string, unknown>;
    expect(ocsfProblems({ ...e, metadata })).toContain('event.actor: not in the schema');
  });
});

describe('every row maps to an event that validates (property)', () => {
  const anyText = fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 20 }),
    fc.string({ unit: 'binary', maxLength: 20 }),
    fc.constantFrom(
      '',
      ' ',
      '\u0000',
      '\r\n',
      '\u2028',
      '\u0085',
      'a@b.co',
      '::1',
      '10.0.0.1',
      '{"target":"x@y.z","group":"g"}',
      '{"group":""}',
      '__proto__',
    ),
  );
  const eventName = fc.oneof(
    anyText,
    fc.constantFrom('Logged in', 'Failed login attempt', 'Added user to group via SCIM', 'Deactivated user via SCIM', 'Revoked API key'),
  );
  const extraNames = fc.array(
    fc.oneof(anyText, fc.constantFrom('Details', 'User Agent', 'severity', 'level', '__proto__', 'constructor', '1')),
    {
      maxLength: 6,
    },
  );

  it('any header and row (Unicode, control characters, odd names): a valid OCSF event whose raw_data is the row', () => {
    fc.assert(
      fc.property(
        extraNames,
        fc.integer({ min: -8_640_000_000_000_000, max: 8_640_000_000_000_000 }),
        eventName,
        anyText,
        anyText,
        fc.array(anyText, { minLength: 6, maxLength: 6 }),
        fc.string({ minLength: 1, maxLength: 70 }),
        (extra, ts, name, email, ip, cells, key) => {
          const columns = uniqueColumnNames(['Timestamp', 'Event Name', 'User Email', 'IP Address', ...extra]);
          const values = [new Date(0).toISOString(), name, email, ip, ...cells.slice(0, extra.length)];
          const b = builder(columns);
          const event = b.build(values, ts, key);
          const text = event.json;
          expect(text).not.toMatch(/[\u0085\u2028\u2029]/);
          const e = JSON.parse(text) as Record<string, unknown>;
          expect(ocsfProblems(e)).toEqual([]);
          expect(e['time']).toBe(ts);
          expect((e['metadata'] as Record<string, unknown>)['uid']).toBe(key);
          const raw = JSON.parse(e['raw_data'] as string) as Record<string, unknown>;
          expect(Object.keys(raw)).toHaveLength(columns.length);
          columns.forEach((c, i) => expect(Object.getOwnPropertyDescriptor(raw, c)?.value).toBe(values[i]));
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe('the export peer’s rows as OCSF, through the engine into the file sink', () => {
  it('the simulator’s export with its edge shapes (BOM, CRLF, multi-line details, extra Unicode columns, renamed header): every event validates', async () => {
    h = await createHarness({
      nowMs: T0 + 3 * HOUR,
      audit: { fieldStyle: 'ocsf' },
      plain: false,
      sim: {
        audit: {
          bom: true,
          crlf: true,
          userAgentColumn: true,
          multilineDetailsRate: 0.3,
          headers: { userEmail: 'Actor' },
          extraColumns: [
            { header: 'Région ✓', value: (e) => `zone \u2028 ${e.index} \u0000 "q", ä` },
            { header: 'severity', value: (e) => ['low', 'High', '', 'weird'][Math.abs(e.index) % 4]! },
          ],
        },
      },
    });
    const summary = await h.run();
    expect(summary.eventsRead).toBeGreaterThan(1000);
    const lines = (await h.sinkLines()).map(withoutSinkFields);
    expect(lines).toHaveLength(summary.eventsRead);
    const classes = new Set<number>();
    for (const e of lines) {
      expect(ocsfProblems(e)).toEqual([]);
      classes.add(e['class_uid'] as number);
      const raw = JSON.parse(e['raw_data'] as string) as Record<string, string>;
      expect(Object.keys(raw)).toEqual([
        'Event ID',
        'Timestamp',
        'Event Name',
        'Actor',
        'IP Address',
        'Deployment ID',
        'User Agent',
        'Details',
        'Région ✓',
        'severity',
      ]);
      expect(e['time']).toBe(Date.parse(raw['Timestamp']!));
      expect((e['metadata'] as Record<string, unknown>)['uid']).toBe(raw['Event ID']);
      expect((e['unmapped'] as Record<string, string>)['Région ✓']).toBe(raw['Région ✓']);
    }
    expect([...classes].sort()).toEqual([3001, 3002, 3006, 6003]);
  });

  it('hand-written edge rows (no user, no address, a hostname, control characters, an unknown event, an empty event name): each one event that validates', async () => {
    const rows = [
      'Timestamp,Event Name,User Email,IP Address,Details,level',
      '2026-11-01T00:01:00Z,Logged in,,,,',
      '2026-11-01T00:02:00Z,Failed login attempt,not an address,host.example.com,"{""reason"":""bad""}",warning',
      '2026-11-01T00:03:00Z,Quantum event ✨,"a@example.com",198.51.100.1,"multi\r\nline\u0001",',
      '2026-11-01T00:04:00Z,,"",::ffff:192.0.2.1,"{""target"":5}",7',
      '2026-11-01T00:05:00Z,Added user to group via SCIM,admin@example.com,203.0.113.9,"{""target"":""Bob"",""group"":""Ops \u2029 EMEA""}",critical',
      '2026-11-01T00:06:00Z,Deleted user,admin@example.com,203.0.113.9,"{""target"":""c@example.com""}",info',
    ];
    csv = await startCsvServer(() => ({ body: rows.join('\r\n') }));
    h = await createHarness({ platformUrl: csv.url, nowMs: T0 + HOUR, audit: { fieldStyle: 'ocsf' }, plain: false });
    const summary = await h.run();
    expect(summary.eventsRead).toBe(6);
    const lines = (await h.sinkLines()).map(withoutSinkFields);
    expect(lines).toHaveLength(6);
    for (const e of lines) expect(ocsfProblems(e)).toEqual([]);
    const byCode = new Map(
      lines.map((e) => [String((e['metadata'] as Record<string, unknown>)['event_code'] ?? ''), e as Record<string, unknown>]),
    );
    expect(byCode.get('Logged in')).toMatchObject({ class_uid: 3002, user: { type_id: 0 }, severity_id: 1 });
    expect(byCode.get('Failed login attempt')).toMatchObject({
      status_id: 2,
      severity_id: 3,
      user: { name: 'not an address' },
      src_endpoint: { name: 'host.example.com' },
    });
    expect(byCode.get('Quantum event ✨')).toMatchObject({ class_uid: 6003, activity_id: 99, api: { operation: 'Quantum event ✨' } });
    expect(byCode.get('')).toMatchObject({
      class_uid: 6003,
      activity_id: 99,
      severity_id: 99,
      severity: '7',
      api: { operation: 'Unknown' },
    });
    expect(byCode.get('Added user to group via SCIM')).toMatchObject({
      class_uid: 3006,
      user: { name: 'Bob' },
      group: { name: 'Ops \u2029 EMEA' },
    });
    expect(byCode.get('Deleted user')).toMatchObject({ class_uid: 3001, activity_id: 6, user: { email_addr: 'c@example.com' } });
  });
});

describe('outside the export', () => {
  it('a CEF line of an OCSF event takes its signature, name and extensions from the OCSF places', () => {
    const e = builder(SIM_HEADER).build(['e1', '', 'Logged in', 'a@example.com', '203.0.113.7', '1', 'x', ''], T0, 'e1');
    const cef = syslogSinkSchema.parse({ type: 'syslog', name: 's', host: '127.0.0.1', format: 'cef' }).cef;
    const line = encodeCef(e, { ...cef, includeDocument: false });
    expect(line).toBe(
      `CEF:0|analytics-platform|audit-log|1|Logged in|Logged in|3|rt=${T0} externalId=e1 act=Logged in suser=a@example.com src=203.0.113.7 outcome=Success`,
    );
  });

  it('provisioning records as OCSF: user changes are Account Change, group changes Group Management, and they validate', () => {
    const base = { time: '2026-11-01T10:00:00.000Z', tenant: 't', runId: 'r1' };
    const records: ProvisioningRecord[] = [
      { ...base, id: '1-0', action: 'user.create', result: 'ok', object: { type: 'user', name: 'a@example.com', externalId: 'x1' } },
      {
        ...base,
        id: '1-1',
        action: 'user.deactivate',
        result: 'failed',
        object: { type: 'user', id: 'u9' },
        error: { code: 'E_X', message: 'no' },
      },
      { ...base, id: '1-2', action: 'group.members', result: 'ok', object: { type: 'group', name: 'Sales' } },
      { ...base, id: '1-3', action: 'group.delete', result: 'held', object: { type: 'group' }, reason: 'guard' },
      { ...base, id: '1-4', action: 'attribute.create', result: 'ok', object: { type: 'attribute', name: 'dept' } },
    ];
    const docs = records.map((r) => eventDoc(recordEvent(r, 'ocsf')));
    for (const d of docs) expect(ocsfProblems(d)).toEqual([]);
    expect(docs.map((d) => [d['class_uid'], d['activity_id'], d['status_id']])).toEqual([
      [3001, 1, 1],
      [3001, 5, 2],
      [3006, 99, 1],
      [3006, 5, 0],
      [6003, 1, 1],
    ]);
    expect(JSON.parse(docs[0]!['raw_data'] as string)).toEqual(records[0]);
  });

  it('the vendored schema names the version the documents carry', () => {
    expect(OCSF_SCHEMA.version).toBe(OCSF_VERSION);
  });
});
