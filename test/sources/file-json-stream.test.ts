/**
 * The streamed JSON read of the file source (src/sources/file/json-entries.ts): each list
 * entry it hands over is exactly what JSON.parse of the whole text gives, however the bytes
 * are split into chunks; the top level is checked as it arrives; a truncated or invalid file
 * fails the whole read, a bad entry is rejected alone.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { SourceError } from '../../src/errors.ts';
import { FileSource } from '../../src/sources/file/file-source.ts';
import { JsonEntryReader } from '../../src/sources/file/json-entries.ts';
import { normalizeDocument } from '../../src/sources/file/normalize.ts';

const dir = mkdtempSync(join(tmpdir(), 'scimsync-file-json-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function source(content: string | Buffer): FileSource {
  const name = `dir-${++n}.json`;
  writeFileSync(join(dir, name), content);
  return new FileSource({ type: 'file', path: name }, { configDir: dir });
}

/** Feeds `bytes` to a reader in chunks cut at `cuts`; returns the entries it handed over. */
function entriesOf(bytes: Buffer, cuts: number[]): { users: unknown[]; groups: unknown[] } {
  const out: { users: unknown[]; groups: unknown[] } = { users: [], groups: [] };
  const reader = new JsonEntryReader('test', (list, raw, index) => {
    expect(index).toBe(out[list].length);
    out[list].push(raw);
  });
  let at = 0;
  for (const cut of [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)) {
    reader.write(bytes.subarray(at, cut));
    at = cut;
  }
  reader.write(bytes.subarray(at));
  reader.end();
  return out;
}

async function failure(src: FileSource): Promise<SourceError> {
  const err = await src.read().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SourceError);
  return err as SourceError;
}

const users = [
  { externalId: 'u-1', userName: 'ann@example.com', emails: ['ann@example.com'], attributes: { title: 'CTO' } },
  { externalId: 'u-2', userName: 'bob@example.com', displayName: 'Bob "the builder, I say \\ Ñúñez 日本' },
  { externalId: 'u-3', userName: 'cy@example.com', emails: ['cy@example.com', 'cy@example.com', 'c2@example.com'] },
];
const groups = [{ externalId: 'g-1', displayName: 'Team {a,b} [c]', members: ['u-1', 'u-2', 'u-3'] }];

describe('file source, JSON: entries as JSON.parse gives them, however the bytes arrive', () => {
  // Strings that end a value where a scanner ignoring escapes or strings would not.
  const tricky = fc.constantFrom('say "yes, and no', 'a\\', '\\"]}', '{[,', '"', ']', '},{', '\\\\",', 'é日本\u2028');
  const entry = fc.oneof(
    fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' }),
    fc.dictionary(fc.oneof(tricky, fc.string()), fc.oneof(tricky, fc.array(tricky, { maxLength: 3 })), { maxKeys: 4 }),
  );
  it('hands over every entry of any document, in any chunking', () => {
    fc.assert(
      fc.property(
        fc.array(entry, { maxLength: 6 }),
        fc.array(entry, { maxLength: 4 }),
        fc.boolean(),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 8 }),
        (us, gs, groupsFirst, pretty, cuts) => {
          const doc = groupsFirst ? { groups: gs, users: us } : { users: us, groups: gs };
          const bytes = Buffer.from(JSON.stringify(doc, null, pretty ? 2 : undefined));
          // JSON.parse, not the generated values: -0 and the like are compared as parsed.
          const parsed = JSON.parse(bytes.toString('utf8')) as { users: unknown[]; groups: unknown[] };
          expect(entriesOf(bytes, cuts)).toEqual({ users: parsed.users, groups: parsed.groups });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads the same desired state as JSON.parse of the whole file, keys in either order, one byte at a time', async () => {
    const text = JSON.stringify({ users, groups });
    const expected = normalizeDocument(...(Object.values(JSON.parse(text)) as [unknown[], unknown[]]));
    expect(await source(text).read()).toEqual(expected);
    expect(await source(JSON.stringify({ groups, users }, null, 2)).read()).toEqual(expected);
    const bytes = Buffer.from(text);
    const oneByOne = entriesOf(
      bytes,
      Array.from({ length: bytes.length }, (_, i) => i),
    );
    expect(normalizeDocument(oneByOne.users, oneByOne.groups)).toEqual(expected);
  });

  it('skips a byte-order mark', async () => {
    const state = await source(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ users, groups }))])).read();
    expect(state.users.map((u) => u.externalId)).toEqual(['u-1', 'u-2', 'u-3']);
    expect(state.users.map((u) => u.emails)).toEqual([['ann@example.com'], [], ['cy@example.com', 'c2@example.com']]);
  });

  it('rejects a bad entry in the middle alone and reads the rest', async () => {
    const list = [...users.slice(0, 2), { externalId: 'u-x', userName: 'x', emial: 'x@example.com' }, users[2]];
    const state = await source(JSON.stringify({ users: list, groups })).read();
    expect(state.users.map((u) => u.externalId)).toEqual(['u-1', 'u-2', 'u-3']);
    expect(state.rejected).toEqual([
      {
        kind: 'user',
        ref: 'users[2] (externalId u-x)',
        reason: 'emial: unknown key — did you mean "emails"?',
        externalId: 'u-x',
        userName: 'x',
      },
    ]);
  });
});

describe('file source, JSON: whole-read failures', () => {
  const text = JSON.stringify({ users, groups });
  const failing: [string, string, RegExp][] = [
    [
      'a file cut inside an entry',
      text.slice(0, text.indexOf('bob@') + 3),
      /not valid JSON \(the file ends in users\[1\] before the document does\)/,
    ],
    [
      'a file cut between entries',
      text.slice(0, text.indexOf('{"externalId":"u-2"')),
      /the file ends in users\[1\] before the document does/,
    ],
    ['a file cut after the users', text.slice(0, text.indexOf('"groups"')), /the file ends before the document does/],
    ['a file without its last brace', text.slice(0, -1), /the file ends before the document does/],
    ['an empty file', '', /the file ends before the document does/],
    ['invalid JSON inside an entry', text.replace('"u-2",', '"u-2" '), /not valid JSON in users\[1\], before byte \d+ \(/],
    ['a trailing comma in a list', text.replace('}],"groups"', '},],"groups"'), /not valid JSON in users\[3\]/],
    ['content after the document', `${text} {}`, /not valid JSON at byte \d+ \(content after the end of the document\)/],
    [
      'garbage after a list',
      text.replace('}],"groups"', '}] x,"groups"'),
      /not valid JSON after users\[2\] at byte \d+ \(unexpected character\)/,
    ],
    ['garbage after an empty list', '{"users": [] x', /not valid JSON at byte 13 \(unexpected character\)/],
    ['an invalid escape in a top-level key', '{"us\\x": []}', /not valid JSON in a top-level key, before byte 7 \(/],
    ['a list at the top level', JSON.stringify([users]), /expected a mapping with `users:` and `groups:`/],
    ['a string at the top level', '"users"', /expected a mapping with `users:` and `groups:`/],
    ['a misspelled top-level key', JSON.stringify({ users, grups: groups }), /unknown top-level key "grups" — did you mean "groups"\?/],
    [
      'an unknown top-level key',
      JSON.stringify({ meta: {}, users, groups }),
      /unknown top-level key "meta"; only `users` and `groups` are allowed/,
    ],
    ['a top-level key twice', JSON.stringify({ users, groups }).replace('}]}', '}],"users":[]}'), /top-level key "users" appears twice/],
    ['users not a list', JSON.stringify({ users: {}, groups }), /`users` must be a list; refusing a partial read/],
    ['missing groups', JSON.stringify({ users }), /`groups` must be a list \(write `groups: \[\]` when there are none\)/],
    ['an empty mapping', '{}', /`users` must be a list/],
  ];
  for (const [what, content, message] of failing) {
    it(`throws SourceError for ${what}`, async () => {
      const err = await failure(source(content));
      expect(err.code).toBe('E_SOURCE_FAILED');
      expect(err.message).toMatch(message);
    });
  }

  it('throws SourceError for a missing or unreadable file', async () => {
    expect((await failure(new FileSource({ type: 'file', path: 'missing.json' }, { configDir: dir }))).message).toMatch(
      /cannot read .*missing\.json \(no such file\)/,
    );
    mkdirSync(join(dir, 'folder.json'));
    expect((await failure(new FileSource({ type: 'file', path: 'folder.json' }, { configDir: dir }))).message).toMatch(
      /cannot read .*folder\.json \(EISDIR\)/,
    );
  });
});
