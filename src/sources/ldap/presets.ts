/**
 * Directory vendor quirks as data: which filters, attributes, id encoding, membership form
 * and disabled-account rule each vendor uses. Config values override a preset field by field,
 * so a typical config is a URL, a bind account and two base DNs.
 */

export type IdFormat = 'string' | 'guid';
export type MemberAttribute = 'member' | 'uniqueMember' | 'memberUid';

export interface DisabledRule {
  /** Active Directory: `userAccountControl` bit 0x2 (ACCOUNTDISABLE). */
  userAccountControl?: boolean;
  /** An attribute whose presence (no `values`) or one of whose `values` (case-insensitive) disables the account. */
  attribute?: string;
  values?: string[];
  /** An LDAP filter; users matching it (within the user scope) are disabled. */
  filter?: string;
}

export interface UserAttributeMap {
  externalId: string;
  externalIdFormat: IdFormat;
  userName: string;
  givenName: string;
  familyName: string;
  displayName: string;
  /** LDAP attributes holding addresses, in order; the first value found is primary. */
  emails: string[];
}

export interface GroupAttributeMap {
  externalId: string;
  externalIdFormat: IdFormat;
  displayName: string;
}

export interface LdapPreset {
  userFilter: string;
  groupFilter: string;
  user: UserAttributeMap;
  group: GroupAttributeMap;
  memberAttribute: MemberAttribute;
  /** For `memberUid`: the user attribute the values refer to. */
  memberUidAttribute: string;
  flattenNested: boolean;
  /** AD returns `member;range=0-1499` for large groups. */
  rangeRetrieval: boolean;
  disabled: DisabledRule;
}

export const PRESET_NAMES = ['openldap', 'active-directory', 'freeipa'] as const;
export type PresetName = (typeof PRESET_NAMES)[number];

export const LDAP_PRESETS: Readonly<Record<PresetName, Readonly<LdapPreset>>> = {
  openldap: {
    userFilter: '(objectClass=inetOrgPerson)',
    groupFilter: '(|(objectClass=groupOfNames)(objectClass=groupOfUniqueNames))',
    user: {
      externalId: 'entryUUID',
      externalIdFormat: 'string',
      userName: 'uid',
      givenName: 'givenName',
      familyName: 'sn',
      displayName: 'cn',
      emails: ['mail'],
    },
    group: { externalId: 'entryUUID', externalIdFormat: 'string', displayName: 'cn' },
    memberAttribute: 'member',
    memberUidAttribute: 'uid',
    flattenNested: true,
    rangeRetrieval: false,
    // OpenLDAP has no standard "disabled" flag; configure one (e.g. ppolicy's pwdAccountLockedTime).
    disabled: {},
  },
  'active-directory': {
    // Excludes computer accounts, which are also objectClass=user.
    userFilter: '(&(objectCategory=person)(objectClass=user))',
    groupFilter: '(objectClass=group)',
    user: {
      externalId: 'objectGUID',
      externalIdFormat: 'guid',
      userName: 'userPrincipalName',
      givenName: 'givenName',
      familyName: 'sn',
      displayName: 'displayName',
      emails: ['mail'],
    },
    group: { externalId: 'objectGUID', externalIdFormat: 'guid', displayName: 'cn' },
    memberAttribute: 'member',
    memberUidAttribute: 'sAMAccountName',
    flattenNested: true,
    rangeRetrieval: true,
    disabled: { userAccountControl: true },
  },
  freeipa: {
    userFilter: '(objectClass=person)',
    groupFilter: '(objectClass=groupOfNames)',
    user: {
      externalId: 'ipaUniqueID',
      externalIdFormat: 'string',
      userName: 'uid',
      givenName: 'givenName',
      familyName: 'sn',
      displayName: 'displayName',
      emails: ['mail'],
    },
    group: { externalId: 'ipaUniqueID', externalIdFormat: 'string', displayName: 'cn' },
    memberAttribute: 'member',
    memberUidAttribute: 'uid',
    flattenNested: true,
    rangeRetrieval: false,
    disabled: { attribute: 'nsAccountLock', values: ['TRUE'] },
  },
};
