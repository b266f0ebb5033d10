import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SourceError } from '../../src/errors.ts';
import { csvSourceSchema, type CsvSourceInput } from '../../src/sources/csv/schema.ts';
import { CsvSource, csvGroupId } from '../../src/sources/csv/source.ts';

const dir = mkdtempSync(join(tmpdir(), 'csv-src-'));
let n = 0;
function source(text: string, over: Partial<CsvSourceInput> = {}): CsvSource {
  const file = `hr-${n++}.csv`;
  writeFileSync(join(dir, file), text);
  const cfg = csvSourceSchema.parse({
    type: 'csv',
    path: file,
    columns: {
      externalId: 'Employee ID',
      userName: 'Email',
      givenName: 'First Name',
      familyName: 'Last Name',
      emails: ['Email', 'Alt Email'],
      active: 'Status',
      groups: 'Groups',
      attributes: { department: 'Department' },
    },
    ...over,
  });
  return new CsvSource(cfg, { configDir: dir });
}

const HEADER = 'Employee ID,Email,First Name,Last Name,Alt Email,Status,Groups,Department';

describe('CSV source', () => {
  it('maps rows, derives groups from the groups column, handles BOM, quotes and non-ASCII', async () => {
    const s = await source(
      '\ufeff' +
        [
          HEADER,
          'E1,alice@example.com,Alice,Doe,alice.doe@example.com,Active,Finance; Data Platform,Finance',
          'E2,jose@example.com,José,"Ñúñez, Jr.",,terminated,Finance,"Sales, EMEA"',
          '',
          'E3,bob@example.com,Bob,"O\'Brien ""Bobby""",,yes,,',
        ].join('\r\n') +
        '\r\n',
    ).read();
    expect(s.rejected).toEqual([]);
    expect(s.users).toEqual([
      {
        externalId: 'E1',
        userName: 'alice@example.com',
        givenName: 'Alice',
        familyName: 'Doe',
        emails: ['alice@example.com', 'alice.doe@example.com'],
        active: true,
        attributes: { department: 'Finance' },
      },
      {
        externalId: 'E2',
        userName: 'jose@example.com',
        givenName: 'José',
        familyName: 'Ñúñez, Jr.',
        emails: ['jose@example.com'],
        active: false,
        attributes: { department: 'Sales, EMEA' },
      },
      {
        externalId: 'E3',
        userName: 'bob@example.com',
        givenName: 'Bob',
        familyName: 'O\'Brien "Bobby"',
        emails: ['bob@example.com'],
        active: true,
        attributes: {},
      },
    ]);
    expect(s.groups).toEqual([
      { externalId: 'csv:finance', displayName: 'Finance', members: ['E1', 'E2'] },
      { externalId: 'csv:data platform', displayName: 'Data Platform', members: ['E1'] },
    ]);
    expect(csvGroupId('Finance')).toBe(csvGroupId('FINANCE'));
  });

  it('a configurable separator and truthy/falsy values', async () => {
    const s = await source([HEADER, 'E1,a@x.io,A,B,,Oui,G1|G2,D', 'E2,b@x.io,A,B,,Non,G2,D'].join('\n'), {
      groupSeparator: '|',
      activeValues: { true: ['oui'], false: ['non'] },
    }).read();
    expect(s.users.map((u) => u.active)).toEqual([true, false]);
    expect(s.groups.map((g) => [g.displayName, g.members])).toEqual([
      ['G1', ['E1']],
      ['G2', ['E1', 'E2']],
    ]);
  });

  it('bad rows are rejected with their line number and reason; the others are read', async () => {
    const s = await source(
      [
        HEADER,
        'E1,a@x.io,A,B,,active,G,D', // line 2: ok
        ',b@x.io,A,B,,active,G,D', // 3: no id
        'E3,,A,B,,active,G,D', // 4: no userName
        'E4,d@x.io,A,B,,maybe,G,D', // 5: unknown status
        'E5,e@x.io,A,B', // 6: too few fields
        'E6,f@x.io,A,bad"quote,,active,G,D', // 7: malformed quoting
        'E1,g@x.io,A,B,,active,G,D', // 8: duplicate id
        'E8,A@X.IO,A,B,,active,G,D', // 9: duplicate userName (case-insensitive)
        'E9,i@x.io,"multi',
        'line",B,,active,G,D', // 10-11: a quoted newline parses, but a name may not hold a control character
      ].join('\n') + '\n',
    ).read();
    const file = (s.rejected[0]?.ref ?? '').replace(/:\d+$/, '');
    expect(s.rejected.map((r) => [r.ref.slice(file.length + 1), r.reason.slice(0, 40)])).toEqual(
      [
        ['3', 'empty Employee ID (externalId)'],
        ['4', 'empty Email (userName)'],
        ['5', 'Status (active) is "maybe": expected one'],
        ['6', 'expected 8 fields like the header, got 4'],
        ['7', 'Invalid Opening Quote: a quote is found '],
        ['8', `duplicate externalId "E1": already used by ${file}:2; the first entry is kept`],
        [
          '9',
          `duplicate userName "A@X.IO" (the same name as "a@x.io" after Unicode normalization and case folding): already used by ${file}:2; the first entry is kept`,
        ],
        ['11', 'givenName "multi\\u{A}line": contains a control character (U+000A)'],
      ].map(([l, r]) => [l, (r as string).slice(0, 40)]),
    );
    expect(s.rejected.every((r) => r.kind === 'row')).toBe(true);
    // What each rejected row still shows, so the planner protects that account and its groups;
    // rows whose fields cannot be trusted (wrong count, broken quoting) show nothing.
    expect(s.rejected.map((r) => [r.externalId, r.userName, r.memberOf])).toEqual([
      [undefined, 'b@x.io', ['csv:g']],
      ['E3', undefined, ['csv:g']],
      ['E4', 'd@x.io', ['csv:g']],
      [undefined, undefined, undefined],
      [undefined, undefined, undefined],
      ['E1', 'g@x.io', ['csv:g']],
      ['E8', 'A@X.IO', ['csv:g']],
      ['E9', 'i@x.io', ['csv:g']],
    ]);
    expect(s.users.map((u) => u.externalId)).toEqual(['E1']);
    expect(s.stats).toEqual({ rows: 9, rowsRejected: 8 });
  });

  it('a missing mapped column fails with the column, its key and the columns found', async () => {
    const err = await source('Employee ID,Mail,First Name,Last Name,Alt Email,Status,Groups,Department\nE1,a@x.io,A,B,,active,G,D\n')
      .read()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SourceError);
    expect((err as Error).message).toMatch(
      /header has no column "Email" \(columns\.userName\), "Email" \(columns\.emails\[0\]\); columns found: "Employee ID", "Mail", "First Name"/,
    );
  });

  it('fails the whole read on what would lose rows silently', async () => {
    await expect(source(`${HEADER}\nE1,a@x.io,"unterminated,B,,active,G,D\nE2,b@x.io,A,B,,active,G,D\n`).read()).rejects.toThrow(
      /unterminated quoted field/,
    );
    await expect(source('').read()).rejects.toThrow(/empty \(no header row\)/);
    await expect(source(`${HEADER}\n`).read()).rejects.toThrow(/no usable rows.*allowEmpty/);
    expect((await source(`${HEADER}\n`, { allowEmpty: true }).read()).users).toEqual([]);
    await expect(
      new CsvSource(csvSourceSchema.parse({ type: 'csv', path: 'nope.csv', columns: { externalId: 'a', userName: 'b' } }), {
        configDir: dir,
      }).read(),
    ).rejects.toThrow(/nope\.csv: cannot read the CSV file \(ENOENT\)/);
  });

  it('check() summarises the file', async () => {
    expect(await source(`${HEADER}\nE1,a@x.io,A,B,,active,G,D\n`).check()).toBe('1 users, 1 groups, 0 rejected rows');
  });
});
