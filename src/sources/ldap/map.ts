/**
 * Directory entries → the normalized model. A user without a usable id or login name is a
 * rejection with the DN and the reason; it never aborts the read and is never dropped silently.
 */
import type { NormalizedUser } from '../../identity/model.ts';
import type { EntryView } from './entry.ts';
import { decodeObjectGuid } from './guid.ts';
import type { DisabledRule, IdFormat } from './presets.ts';
import type { LdapSettings } from './settings.ts';

export type Mapped<T> = { ok: true; value: T } | { ok: false; reason: string };

/** AD userAccountControl ACCOUNTDISABLE. */
const UAC_ACCOUNTDISABLE = 0x2;

export function readId(e: EntryView, attribute: string, format: IdFormat): Mapped<string> {
  if (format === 'guid') {
    const b = e.buffers(attribute)[0];
    if (b === undefined) return { ok: false, reason: `missing ${attribute} (externalId)` };
    if (b.length !== 16) return { ok: false, reason: `${attribute} is ${b.length} bytes, expected a 16-byte GUID` };
    return { ok: true, value: decodeObjectGuid(b) };
  }
  const v = e.first(attribute);
  return v === undefined ? { ok: false, reason: `missing ${attribute} (externalId)` } : { ok: true, value: v };
}

export interface DisabledVerdict {
  disabled: boolean;
  /** The rule could not be evaluated for this entry (e.g. the attribute is not readable). */
  unknown: boolean;
}

/** `filterDisabled`: the entry matched the configured disabled filter (evaluated by the server). */
export function isDisabled(e: EntryView, rule: DisabledRule, filterDisabled: boolean): DisabledVerdict {
  let unknown = false;
  let disabled = filterDisabled;
  if (rule.userAccountControl) {
    const raw = e.first('userAccountControl');
    const uac = raw === undefined ? NaN : Number(raw);
    if (Number.isInteger(uac)) disabled ||= (uac & UAC_ACCOUNTDISABLE) !== 0;
    else unknown = true;
  }
  if (rule.attribute !== undefined) {
    const values = e.strings(rule.attribute).map((v) => v.trim().toLowerCase());
    if (rule.values === undefined || rule.values.length === 0) disabled ||= values.length > 0;
    else {
      const wanted = new Set(rule.values.map((v) => v.toLowerCase()));
      disabled ||= values.some((v) => wanted.has(v));
    }
  }
  return { disabled, unknown };
}

function emailsOf(e: EntryView, attributes: string[]): string[] {
  const out: string[] = [];
  for (const a of attributes) {
    for (const raw of e.strings(a)) {
      const v = raw.trim();
      if (v === '' || out.some((x) => x.toLowerCase() === v.toLowerCase())) continue;
      out.push(v);
    }
  }
  // Kept for every user: an exact-size copy, not push's spare capacity (~130 bytes a user).
  return out.slice();
}

export interface MappedUser {
  user: NormalizedUser;
  activeUnknown: boolean;
}

export function mapUser(e: EntryView, s: LdapSettings, filterDisabled: boolean): Mapped<MappedUser> {
  const m = s.userMap;
  const id = readId(e, m.externalId, m.externalIdFormat);
  if (!id.ok) return id;
  const userName = e.first(m.userName);
  if (userName === undefined) return { ok: false, reason: `missing ${m.userName} (userName)` };
  const verdict = isDisabled(e, s.disabled, filterDisabled);
  const attributes: Record<string, unknown> = { dn: e.dn };
  for (const key in s.extra) {
    const values = e.strings(s.extra[key] as string);
    if (values.length === 1) attributes[key] = values[0];
    else if (values.length > 1) attributes[key] = values;
  }
  const user: NormalizedUser = {
    externalId: id.value,
    userName,
    emails: emailsOf(e, m.emails),
    active: !verdict.disabled,
    attributes,
  };
  const given = e.first(m.givenName);
  const family = e.first(m.familyName);
  const display = e.first(m.displayName);
  if (given !== undefined) user.givenName = given;
  if (family !== undefined) user.familyName = family;
  if (display !== undefined) user.displayName = display;
  return { ok: true, value: { user, activeUnknown: verdict.unknown } };
}

export interface RawGroup {
  dn: string;
  externalId: string;
  displayName: string;
  /** Raw member values: DNs (member, uniqueMember) or login names (memberUid). */
  memberValues: string[];
}

export function mapGroup(e: EntryView, s: LdapSettings, memberValues: string[]): Mapped<RawGroup> {
  const g = s.groups;
  if (!g) return { ok: false, reason: 'groups are not configured' };
  const id = readId(e, g.map.externalId, g.map.externalIdFormat);
  if (!id.ok) return id;
  const displayName = e.first(g.map.displayName);
  if (displayName === undefined) return { ok: false, reason: `missing ${g.map.displayName} (displayName)` };
  return { ok: true, value: { dn: e.dn, externalId: id.value, displayName, memberValues } };
}
