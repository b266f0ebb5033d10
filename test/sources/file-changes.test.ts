/**
 * File and CSV change detection on real files: an edit is seen as exactly the changed
 * records, an atomic replace (rename over the path) is seen, an unchanged file costs no
 * parse, and a cursor whose previous read is not in memory (a restart) gets a full read.
 */
import { mkdtempSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SourceChanges, SourceDelta } from '../../src/sources/changes.ts';
import { supportsChanges } from '../../src/sources/changes.ts';
import { CsvSource, csvGroupId } from '../../src/sources/csv/source.ts';
import { csvSourceSchema } from '../../src/sources/csv/schema.ts';
import { FileSource } from '../../src/sources/file/file-source.ts';

const dir = mkdtempSync(join(tmpdir(), 'scimsync-file-changes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Sets the file's mtime well in the past, so its metadata alone is trusted (the settled rule). */
function settle(path: string, secondsAgo = 60): void {
  const t = new Date(Date.now() - secondsAgo * 1000);
  utimesSync(path, t, t);
}

function delta(r: SourceChanges): SourceDelta {
  expect(r.kind).toBe('delta');
  if (r.kind !== 'delta') throw new Error(`expected a delta, got a full read (${r.reason})`);
  return r;
}

const yaml = (users: string[], members: string[]): string =>
  `users:\n${users.map((u) => `  - { externalId: ${u}, userName: ${u}@example.com }`).join('\n')}\ngroups:\n  - { externalId: g-1, displayName: Staff, members: [${members.join(', ')}] }\n`;

describe('file source change detection', () => {
  const path = join(dir, 'directory.yaml');
  const s = new FileSource({ type: 'file', path: 'directory.yaml' }, { configDir: dir });
  let cursor = '';

  it('the first call reads in full and hands out a cursor', async () => {
    writeFileSync(path, yaml(['u-1', 'u-2', 'u-3'], ['u-1', 'u-2']));
    settle(path);
    expect(supportsChanges(s)).toBe(true);
    const r = await s.changes(undefined);
    expect(r).toMatchObject({ kind: 'full', reason: 'no cursor' });
    if (r.kind !== 'full') return;
    expect(r.state.users).toHaveLength(3);
    cursor = r.cursor;
  });

  it('an unchanged file is an empty delta without a parse', async () => {
    const parses = s.tracker.parses;
    const r = delta(await s.changes(cursor));
    expect(r.cursor).toBe(cursor);
    expect(r.users).toEqual({ upserted: [], removed: [] });
    expect(s.tracker.parses).toBe(parses);
  });

  it('a touched file with the same bytes is an empty delta without a parse', async () => {
    settle(path, 30);
    const parses = s.tracker.parses;
    const r = delta(await s.changes(cursor));
    expect(r.users.upserted).toEqual([]);
    expect(s.tracker.parses).toBe(parses);
    expect(r.cursor).not.toBe(cursor);
    cursor = r.cursor;
  });

  it('an edit in place (a user renamed, one removed, a member added) is exactly that delta', async () => {
    writeFileSync(
      path,
      yaml(['u-1', 'u-2'], ['u-1', 'u-2']).replace('u-2@example.com', 'renamed@example.com').replace('[u-1, u-2]', '[u-2, u-1]'),
    );
    const r = delta(await s.changes(cursor));
    expect(r.users.upserted.map((u) => [u.externalId, u.userName])).toEqual([['u-2', 'renamed@example.com']]);
    expect(r.users.removed).toEqual(['u-3']);
    // Member order alone is no change.
    expect(r.groups).toEqual({ upserted: [], removed: [] });
    expect(typeof r.changedAt['u-2']).toBe('number');
    cursor = r.cursor;
  });

  it('an atomic replace (a new file renamed over the path) is seen, even with an older mtime', async () => {
    const tmp = join(dir, '.directory.yaml.tmp');
    writeFileSync(tmp, yaml(['u-1', 'u-2', 'u-4'], ['u-1', 'u-2', 'u-4']).replace('u-2@example.com', 'renamed@example.com'));
    settle(tmp, 3600); // prepared an hour ago: its mtime is older than the cursor's
    renameSync(tmp, path);
    const r = delta(await s.changes(cursor));
    expect(r.users.upserted.map((u) => u.externalId)).toEqual(['u-4']);
    expect(r.groups.upserted).toEqual([{ externalId: 'g-1', displayName: 'Staff', members: ['u-1', 'u-2', 'u-4'] }]);
    cursor = r.cursor;
  });

  it('a restart (the previous read is not in memory) answers with a full read', async () => {
    const restarted = new FileSource({ type: 'file', path: 'directory.yaml' }, { configDir: dir });
    writeFileSync(path, yaml(['u-1'], ['u-1']));
    const r = await restarted.changes(cursor);
    expect(r).toMatchObject({ kind: 'full', reason: 'cursor expired' });
    if (r.kind === 'full') expect(r.state.users.map((u) => u.externalId)).toEqual(['u-1']);
    expect(await restarted.changes('not a cursor')).toMatchObject({ kind: 'full', reason: 'cursor expired' });
  });

  it('a file that disappears fails the call, naming the file', async () => {
    const gone = new FileSource({ type: 'file', path: 'missing.yaml' }, { configDir: dir });
    await expect(gone.changes(undefined)).rejects.toThrow(/missing\.yaml \(no such file\)/);
  });
});

describe('CSV source change detection', () => {
  const path = join(dir, 'hr.csv');
  const s = new CsvSource(
    csvSourceSchema.parse({
      type: 'csv',
      path: 'hr.csv',
      columns: { externalId: 'id', userName: 'login', active: 'status', groups: 'groups' },
    }),
    { configDir: dir },
  );

  it('a leaver marked terminated in the export is upserted inactive; an unchanged export costs no parse', async () => {
    writeFileSync(path, 'id,login,status,groups\n1,ann@example.com,active,Eng\n2,bob@example.com,active,Eng;Ops\n');
    settle(path);
    const first = await s.changes(undefined);
    expect(first.kind).toBe('full');
    const idle = delta(await s.changes(first.cursor));
    expect(s.tracker.parses).toBe(1);
    writeFileSync(path, 'id,login,status,groups\n1,ann@example.com,active,Eng\n2,bob@example.com,terminated,Eng\n');
    const r = delta(await s.changes(idle.cursor));
    expect(r.users.upserted.map((u) => [u.externalId, u.active])).toEqual([['2', false]]);
    expect(r.groups.removed).toEqual([csvGroupId('Ops')]);
    expect(r.groups.upserted).toEqual([]);
    expect(s.tracker.parses).toBe(2);
  });
});
