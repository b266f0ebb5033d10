/**
 * The effective settings of one LDAP source: the preset with the config's overrides applied,
 * and the exact attribute lists to request (operational attributes such as entryUUID are only
 * returned when asked for by name).
 */
import { LDAP_PRESETS, type DisabledRule, type GroupAttributeMap, type MemberAttribute, type UserAttributeMap } from './presets.ts';
import type { LdapSourceConfig } from './schema.ts';

export interface SearchSpec {
  baseDns: string[];
  filter: string;
  scope: 'sub' | 'one';
  attributes: string[];
}

export type ChangeMechanismName = 'modify-timestamp' | 'usn';

export interface ChangeSettings {
  /** undefined: no change reader. */
  mechanism: ChangeMechanismName | undefined;
  pollMs: number;
  overlapSeconds: number;
  deletedObjects: boolean;
  maxMemberLookups: number;
  /** undefined: the naming contexts holding the base DNs (from the root DSE). */
  baseDns: string[] | undefined;
}

export interface LdapSettings {
  url: string;
  startTls: boolean;
  bindDn: string;
  connectTimeoutMs: number;
  timeoutMs: number;
  timeoutSeconds: number;
  pageSize: number;
  allowEmpty: boolean;
  users: SearchSpec;
  userMap: UserAttributeMap;
  /** attributes.<key> ← LDAP attribute. */
  extra: Record<string, string>;
  groups: (SearchSpec & { map: GroupAttributeMap }) | undefined;
  memberAttribute: MemberAttribute;
  memberUidAttribute: string;
  flattenNested: boolean;
  rangeRetrieval: boolean;
  disabled: DisabledRule;
  /** Attributes to return as raw bytes (binary GUIDs). */
  binaryAttributes: string[];
  changes: ChangeSettings;
}

const uniq = (xs: string[]): string[] => [...new Map(xs.map((x) => [x.toLowerCase(), x])).values()];

export function resolveLdapSettings(c: LdapSourceConfig): LdapSettings {
  const p = LDAP_PRESETS[c.preset];
  const ua = c.users.attributes;
  const emails = ua.emails === undefined ? p.user.emails : Array.isArray(ua.emails) ? ua.emails : [ua.emails];
  const userMap: UserAttributeMap = {
    externalId: ua.externalId ?? p.user.externalId,
    // A custom id attribute is a string unless said otherwise; the preset's format belongs to its attribute.
    externalIdFormat: ua.externalIdFormat ?? (ua.externalId === undefined ? p.user.externalIdFormat : 'string'),
    userName: ua.userName ?? p.user.userName,
    givenName: ua.givenName ?? p.user.givenName,
    familyName: ua.familyName ?? p.user.familyName,
    displayName: ua.displayName ?? p.user.displayName,
    emails,
  };
  const memberAttribute = c.membership.attribute ?? p.memberAttribute;
  const memberUidAttribute = c.membership.uidAttribute ?? p.memberUidAttribute;
  const disabled = c.disabled ?? p.disabled;
  const binary = new Set<string>();
  if (userMap.externalIdFormat === 'guid') binary.add(userMap.externalId);

  const userAttrs = [
    userMap.externalId,
    userMap.userName,
    userMap.givenName,
    userMap.familyName,
    userMap.displayName,
    ...emails,
    ...Object.values(c.users.attributes.extra),
  ];
  if (memberAttribute === 'memberUid') userAttrs.push(memberUidAttribute);
  if (disabled.userAccountControl) userAttrs.push('userAccountControl');
  if (disabled.attribute) userAttrs.push(disabled.attribute);

  let groups: LdapSettings['groups'];
  if (c.groups) {
    const ga = c.groups.attributes;
    const map: GroupAttributeMap = {
      externalId: ga.externalId ?? p.group.externalId,
      externalIdFormat: ga.externalIdFormat ?? (ga.externalId === undefined ? p.group.externalIdFormat : 'string'),
      displayName: ga.displayName ?? p.group.displayName,
    };
    if (map.externalIdFormat === 'guid') binary.add(map.externalId);
    groups = {
      baseDns: c.groups.baseDn,
      filter: c.groups.filter ?? p.groupFilter,
      scope: c.groups.scope,
      attributes: uniq([map.externalId, map.displayName, memberAttribute]),
      map,
    };
  }

  return {
    url: c.url,
    startTls: c.startTls,
    bindDn: c.bindDn,
    connectTimeoutMs: Math.round(c.connectTimeoutSeconds * 1000),
    timeoutMs: Math.round(c.timeoutSeconds * 1000),
    timeoutSeconds: c.timeoutSeconds,
    pageSize: c.pageSize,
    allowEmpty: c.allowEmpty,
    users: { baseDns: c.users.baseDn, filter: c.users.filter ?? p.userFilter, scope: c.users.scope, attributes: uniq(userAttrs) },
    userMap,
    extra: { ...c.users.attributes.extra },
    groups,
    memberAttribute,
    memberUidAttribute,
    flattenNested: c.membership.flattenNested ?? p.flattenNested,
    rangeRetrieval: c.membership.rangeRetrieval ?? p.rangeRetrieval,
    disabled,
    binaryAttributes: [...binary],
    changes: {
      mechanism:
        c.changes.mechanism === 'off'
          ? undefined
          : c.changes.mechanism === 'auto'
            ? c.preset === 'active-directory'
              ? 'usn'
              : 'modify-timestamp'
            : c.changes.mechanism,
      pollMs: Math.round(c.changes.pollSeconds * 1000),
      overlapSeconds: c.changes.overlapSeconds,
      deletedObjects: c.changes.deletedObjects,
      maxMemberLookups: c.changes.maxMemberLookups,
      baseDns: c.changes.baseDn,
    },
  };
}
