import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SourceError } from '../../src/errors.ts';
import { FileSource } from '../../src/sources/file/file-source.ts';
import { createSource } from '../../src/sources/registry.ts';
import { createLogger } from '../../src/observability/logger.ts';

const dir = mkdtempSync(join(tmpdir(), 'scimsync-file-source-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const examples = join(import.meta.dirname, '../../config/examples');

let n = 0;
function source(content: string, ext = 'yaml'): FileSource {
  const name = `dir-${++n}.${ext}`;
  writeFileSync(join(dir, name), content);
  return new FileSource({ type: 'file', path: name }, { configDir: dir });
}

describe('file source: the example directory', () => {
  it('reads every user and group of directory.yaml', async () => {
    const raw = parse(await import('node:fs').then((fs) => fs.readFileSync(join(examples, 'directory.yaml'), 'utf8'))) as {
      users: { externalId: string; active?: boolean }[];
      groups: { externalId: string; members: string[] }[];
    };
    const src = await createSource(
      { type: 'file', path: 'directory.yaml' },
      { configDir: examples, logger: createLogger({ level: 'silent' }) },
    );
    const state = await src.read();
    expect(state.rejected).toEqual([]);
    expect(state.users.map((u) => u.externalId)).toEqual(raw.users.map((u) => u.externalId));
    expect(state.groups.map((g) => g.members)).toEqual(raw.groups.map((g) => g.members));
    expect(state.users.filter((u) => !u.active).length).toBe(raw.users.filter((u) => u.active === false).length);
    expect(state.stats['membersUnknown']).toBe(0);
    expect(await src.check()).toBe(`${raw.users.length} users, ${raw.groups.length} groups`);
  });

  it('keeps non-ASCII names and apostrophes and accepts the name: {} form', async () => {
    const state = await new FileSource({ type: 'file', path: 'directory.yaml' }, { configDir: examples }).read();
    const jose = state.users.find((u) => u.givenName === 'José');
    expect(jose?.familyName).toBe('Ñúñez');
    expect(state.users.find((u) => u.familyName === "O'Brien")?.displayName).toBe("Liam O'Brien");
    expect(state.users.find((u) => u.givenName === 'Zoë')?.familyName).toBe('Åberg');
    const dmitri = state.users.find((u) => u.externalId === 'u-1004');
    expect(dmitri).toMatchObject({ givenName: 'Dmitri', familyName: 'Volkov' });
  });
});

describe('file source: entries', () => {
  it('normalizes one user (emails string → list, active default, numeric ids → strings)', async () => {
    const state = await source(
      'users:\n  - { externalId: 1001, userName: ann, emails: ann@example.com, attributes: { title: CTO } }\ngroups:\n  - { externalId: 7, displayName: Admins, members: [1001, 1001] }\n',
    ).read();
    expect(state.users).toEqual([
      { externalId: '1001', userName: 'ann', emails: ['ann@example.com'], active: true, attributes: { title: 'CTO' } },
    ]);
    expect(state.groups).toEqual([{ externalId: '7', displayName: 'Admins', members: ['1001'] }]);
  });

  it('rejects each invalid entry with its ref and the field, keeping all the others', async () => {
    const state = await source(
      [
        'users:',
        '  - { externalId: u-1, userName: ok1 }',
        '  - { externalId: u-2 }',
        '  - { externalId: u-3, userName: c, emails: [c@example.com, not-an-email] }',
        '  - { externalId: u-4, userName: d, emial: d@example.com }',
        '  - { externalId: u-5, userName: e, active: "yes" }',
        '  - just a string',
        '  - { externalId: u-7, userName: g, givenName: Gus, name: { givenName: Gustav } }',
        '  - { externalId: u-8, userName: ok2 }',
        'groups:',
        '  - { externalId: g-1, members: [u-1] }',
        '  - { externalId: g-2, displayName: Fine, members: [u-1, u-8] }',
      ].join('\n'),
    ).read();
    expect(state.users.map((u) => u.externalId)).toEqual(['u-1', 'u-8']);
    expect(state.groups.map((g) => g.externalId)).toEqual(['g-2']);
    expect(state.rejected).toEqual([
      // Each rejection carries the identity still readable, so the planner protects that account.
      {
        kind: 'user',
        ref: 'users[1] (externalId u-2)',
        reason: 'userName: required key is missing (expected a string)',
        externalId: 'u-2',
      },
      {
        kind: 'user',
        ref: 'users[2] (externalId u-3)',
        reason: 'emails "not-an-email": not an e-mail address (no @); expected one like alice@example.com',
        externalId: 'u-3',
        userName: 'c',
      },
      {
        kind: 'user',
        ref: 'users[3] (externalId u-4)',
        reason: 'emial: unknown key — did you mean "emails"?',
        externalId: 'u-4',
        userName: 'd',
      },
      {
        kind: 'user',
        ref: 'users[4] (externalId u-5)',
        reason: 'active: expected true or false, got "yes"',
        externalId: 'u-5',
        userName: 'e',
      },
      { kind: 'user', ref: 'users[5]', reason: '(top level): expected a mapping (key: value), got "just a string"' },
      {
        kind: 'user',
        ref: 'users[6] (externalId u-7)',
        reason: 'givenName and name.givenName differ ("Gus" vs "Gustav"); set only one',
        externalId: 'u-7',
        userName: 'g',
      },
      {
        kind: 'group',
        ref: 'groups[0] (externalId g-1)',
        reason: 'displayName: required key is missing (expected a string)',
        externalId: 'g-1',
      },
    ]);
    expect(state.stats).toMatchObject({ users: 2, groups: 1, usersRejected: 6, groupsRejected: 1 });
  });

  it('keeps the first of duplicate externalIds / userNames (case-insensitive) and rejects the later ones', async () => {
    const state = await source(
      [
        'users:',
        '  - { externalId: u-1, userName: Alice@Example.com }',
        '  - { externalId: u-1, userName: other }',
        '  - { externalId: u-3, userName: alice@example.COM }',
        '  - { externalId: u-4, userName: bob }',
        'groups:',
        '  - { externalId: g-1, displayName: Team }',
        '  - { externalId: g-1, displayName: Team 2 }',
        '  - { externalId: g-3, displayName: TEAM }',
      ].join('\n'),
    ).read();
    expect(state.users.map((u) => `${u.externalId}:${u.userName}`)).toEqual(['u-1:Alice@Example.com', 'u-4:bob']);
    expect(state.groups.map((g) => g.displayName)).toEqual(['Team']);
    expect(state.rejected).toEqual([
      {
        kind: 'user',
        ref: 'users[1] (externalId u-1)',
        reason: 'duplicate externalId "u-1": already used by users[0] (externalId u-1); the first entry is kept',
        externalId: 'u-1',
        userName: 'other',
      },
      {
        kind: 'user',
        ref: 'users[2] (externalId u-3)',
        reason:
          'duplicate userName "alice@example.COM" (the same name as "Alice@Example.com" after Unicode normalization and case folding): already used by users[0] (externalId u-1); the first entry is kept',
        externalId: 'u-3',
        userName: 'alice@example.COM',
      },
      {
        kind: 'group',
        ref: 'groups[1] (externalId g-1)',
        reason: 'duplicate externalId "g-1": already used by groups[0] (externalId g-1); the first entry is kept',
        externalId: 'g-1',
        displayName: 'Team 2',
      },
      {
        kind: 'group',
        ref: 'groups[2] (externalId g-3)',
        reason:
          'duplicate displayName "TEAM" (the same name as "Team" after Unicode normalization and case folding): already used by groups[0] (externalId g-1); the first entry is kept',
        externalId: 'g-3',
        displayName: 'TEAM',
      },
    ]);
  });

  it('leaves unknown and rejected members out of a group, counts them and reports them', async () => {
    const state = await source(
      [
        'users:',
        '  - { externalId: u-1, userName: a }',
        '  - { externalId: u-2 }',
        'groups:',
        '  - { externalId: g-1, displayName: G, members: [u-1, u-2, u-404] }',
      ].join('\n'),
    ).read();
    expect(state.groups).toEqual([{ externalId: 'g-1', displayName: 'G', members: ['u-1'] }]);
    expect(state.stats['membersUnknown']).toBe(2);
    expect(state.rejected.filter((r) => r.kind === 'group')).toEqual([
      {
        kind: 'group',
        ref: 'groups[0] (externalId g-1)',
        reason: 'member "u-2" is a rejected user (users[1] (externalId u-2)); the group is kept without it',
        externalId: 'g-1',
        displayName: 'G',
        member: 'u-2',
      },
      {
        kind: 'group',
        ref: 'groups[0] (externalId g-1)',
        reason: 'member "u-404" is not a user in this file; the group is kept without it',
        externalId: 'g-1',
        displayName: 'G',
        member: 'u-404',
      },
    ]);
  });

  it('reads JSON files', async () => {
    const state = await source(JSON.stringify({ users: [{ externalId: 'j1', userName: 'json' }], groups: [] }), 'json').read();
    expect(state.users.map((u) => u.userName)).toEqual(['json']);
  });
});

describe('file source: whole-read failures', () => {
  const failing: [string, string, RegExp][] = [
    ['missing file', '', /cannot read .*missing\.yaml \(no such file\)/],
    ['invalid YAML', 'users: [\n', /not valid YAML at line \d+/],
    ['invalid JSON', '{"users": [', /not valid JSON/],
    ['a list at the top level', '- a\n', /expected a mapping with `users:` and `groups:`/],
    ['a misspelled top-level key', 'users: []\ngroup: []\n', /unknown top-level key "group" — did you mean "groups"\?/],
    ['missing groups', 'users: []\n', /`groups` must be a list \(write `groups: \[\]` when there are none\); refusing a partial read/],
    ['users not a list', 'users: {}\ngroups: []\n', /`users` must be a list/],
  ];
  for (const [what, content, message] of failing) {
    it(`throws SourceError for ${what}`, async () => {
      const src =
        what === 'missing file'
          ? new FileSource({ type: 'file', path: 'missing.yaml' }, { configDir: dir })
          : source(content, what === 'invalid JSON' ? 'json' : 'yaml');
      const err = await src.read().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(SourceError);
      expect((err as SourceError).code).toBe('E_SOURCE_FAILED');
      expect((err as Error).message).toMatch(message);
      await expect(src.check()).rejects.toBeInstanceOf(SourceError);
    });
  }
});
