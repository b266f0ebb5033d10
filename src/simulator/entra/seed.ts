/**
 * A generated tenant for tests, benchmarks and `simulate-entra`: N users (every Nth
 * disabled, employee ids, on-premises extension attributes, a directory extension and a
 * custom security attribute), M groups (security and Microsoft 365) with users spread
 * round-robin, a nesting chain and one membership cycle.
 */
import type { EntraDirectory } from './directory.ts';

export interface SeedOptions {
  users: number;
  groups: number;
  /** Every Nth user has `accountEnabled: false` (0 = none). Default 50. */
  disabledEvery?: number;
  /** The app id (no dashes) directory extensions are registered under. */
  extensionAppId?: string;
}

export const SEED_EXTENSION_APP = 'b7f1c0de00004e1a9d2c5a6b7c8d9e0f';

export const userPrincipalName = (i: number, domain: string): string => `user${String(i).padStart(6, '0')}@${domain}`;
export const groupName = (g: number): string => `Group ${String(g).padStart(4, '0')}`;

export function seedDirectory(d: EntraDirectory, o: SeedOptions): void {
  const disabledEvery = o.disabledEvery ?? 50;
  const ext = `extension_${o.extensionAppId ?? SEED_EXTENSION_APP}_costCenter`;
  const ids: string[] = [];
  for (let i = 0; i < o.users; i++) {
    const u = d.addUser({
      userPrincipalName: userPrincipalName(i, d.domain),
      givenName: 'User',
      surname: `Number ${i}`,
      displayName: `User Number ${i}`,
      accountEnabled: !(disabledEvery > 0 && i % disabledEvery === 7),
      employeeId: `E${String(i).padStart(6, '0')}`,
      department: `dept-${i % 10}`,
      jobTitle: i % 3 === 0 ? 'Engineer' : 'Analyst',
      onPremisesExtensionAttributes: { extensionAttribute1: `site-${i % 4}` },
      extensions: { [ext]: `CC-${i % 20}` },
      customSecurityAttributes: {
        Analytics: { '@odata.type': '#microsoft.graph.customSecurityAttributeValue', clearance: i % 2 === 0 ? 'internal' : 'public' },
      },
    });
    ids.push(u.id);
  }
  const groupIds: string[] = [];
  for (let g = 0; g < o.groups; g++) {
    const unified = g % 3 === 2;
    const members = [];
    for (let i = g; i < o.users; i += o.groups) members.push({ type: 'user' as const, id: ids[i] as string });
    const grp = d.addGroup({
      displayName: groupName(g),
      securityEnabled: !unified,
      mailEnabled: unified,
      mail: unified ? `group${g}@${d.domain}` : null,
      groupTypes: unified ? ['Unified'] : [],
      members,
    });
    groupIds.push(grp.id);
  }
  // Nesting: Group 1 ⊂ Group 0, Group 2 ⊂ Group 1; a cycle between Group 3 and Group 4.
  const nest = (parent: number, child: number): void => {
    const p = groupIds[parent];
    const c = groupIds[child];
    if (p && c) d.addMember(p, { type: 'group', id: c });
  };
  if (o.groups >= 5) {
    nest(0, 1);
    nest(1, 2);
    nest(3, 4);
    nest(4, 3);
  }
}
