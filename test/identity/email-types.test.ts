/** provisioning.emails: which `type` each address is sent with. */
import { describe, expect, it } from 'vitest';
import { emailsSchema } from '../../src/config/schema.ts';
import { mapUser, typedEmails } from '../../src/identity/mapping.ts';
import type { NormalizedUser } from '../../src/identity/model.ts';
import { normalizeDocument } from '../../src/sources/file/normalize.ts';

const user = (emails: string[], emailTypes?: Record<string, string>): NormalizedUser => ({
  externalId: 'e-1',
  userName: 'ann@x.io',
  emails,
  active: true,
  attributes: {},
  ...(emailTypes ? { emailTypes } : {}),
});

describe('e-mail types', () => {
  it('default: every address gets the source type, else `work` (what was always sent)', () => {
    const cfg = emailsSchema.parse({});
    expect(cfg).toEqual({ type: 'work', typeMode: 'default', uniqueTypes: ['work', 'home', 'other'] });
    expect(typedEmails(user(['a@x.io', 'b@x.io'], { 'b@x.io': 'home' }), cfg)).toEqual([
      { value: 'a@x.io', type: 'work', primary: true },
      { value: 'b@x.io', type: 'home', primary: false },
    ]);
    expect(mapUser(user(['a@x.io', 'b@x.io']), {}).resource.emails).toEqual([
      { value: 'a@x.io', type: 'work', primary: true },
      { value: 'b@x.io', type: 'work', primary: false },
    ]);
  });

  it('a configured default type', () => {
    const cfg = emailsSchema.parse({ type: 'other' });
    expect(mapUser(user(['a@x.io']), {}, cfg).resource.emails).toEqual([{ value: 'a@x.io', type: 'other', primary: true }]);
  });

  it('none: no type is sent', () => {
    const cfg = emailsSchema.parse({ typeMode: 'none' });
    expect(typedEmails(user(['a@x.io', 'b@x.io'], { 'a@x.io': 'home' }), cfg)).toEqual([
      { value: 'a@x.io', primary: true },
      { value: 'b@x.io', primary: false },
    ]);
  });

  it('unique: the primary first, then source types, then free types in order; no type is used twice', () => {
    const cfg = emailsSchema.parse({ typeMode: 'unique' });
    expect(typedEmails(user(['a@x.io', 'b@x.io', 'c@x.io'], { 'c@x.io': 'Work', 'b@x.io': 'other' }), cfg)).toEqual([
      // The primary claims `work` first, so c's own "Work" is taken and c gets the next free type.
      { value: 'a@x.io', type: 'work', primary: true },
      { value: 'b@x.io', type: 'other', primary: false },
      { value: 'c@x.io', type: 'home', primary: false },
    ]);
  });

  it('unique: an address left without a free type is not sent, the primary always is', () => {
    const cfg = emailsSchema.parse({ typeMode: 'unique', uniqueTypes: ['work', 'home'] });
    const sent = typedEmails(user(['a@x.io', 'b@x.io', 'c@x.io']), cfg);
    expect(sent.map((e) => `${e.value}:${e.type}`)).toEqual(['a@x.io:work', 'b@x.io:home']);
    expect(
      typedEmails(user(['p@x.io', 'q@x.io'], { 'q@x.io': 'work' }), emailsSchema.parse({ typeMode: 'unique', uniqueTypes: ['work'] })),
    ).toEqual([{ value: 'p@x.io', type: 'work', primary: true }]);
  });

  it('file source: addresses as objects {value, type, primary}; the one marked primary comes first', () => {
    const state = normalizeDocument(
      [
        {
          externalId: 'e-1',
          userName: 'ann@x.io',
          emails: ['a@x.io', { value: 'h@x.io', type: 'home', primary: true }, { value: 'o@x.io', type: 'other' }],
        },
      ],
      [],
    );
    expect(state.rejected).toEqual([]);
    const [u] = state.users;
    expect(u?.emails).toEqual(['h@x.io', 'a@x.io', 'o@x.io']);
    expect(u?.emailTypes).toEqual({ 'h@x.io': 'home', 'o@x.io': 'other' });
    expect(mapUser(u!, {}).resource.emails).toEqual([
      { value: 'h@x.io', type: 'home', primary: true },
      { value: 'a@x.io', type: 'work', primary: false },
      { value: 'o@x.io', type: 'other', primary: false },
    ]);
  });

  it('file source: a typed address with an unknown field is rejected with its reason', () => {
    const state = normalizeDocument([{ externalId: 'e-1', userName: 'ann@x.io', emails: [{ value: 'a@x.io', kind: 'home' }] }], []);
    expect(state.users).toEqual([]);
    expect(state.rejected[0]?.reason).toMatch(/kind/);
  });
});
