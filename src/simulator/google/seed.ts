/**
 * A generated workspace for tests, benchmarks and `simulate google`: N users (some
 * suspended, some archived, with aliases and an HR custom schema), an admin to impersonate,
 * M groups with users spread round-robin, a nesting chain and one membership cycle.
 */
import type { GoogleWorkspace } from './workspace.ts';

export interface SeedOptions {
  users: number;
  groups: number;
  /** Every Nth user is suspended (0 = none). Default 50. */
  suspendedEvery?: number;
  /** Every Nth user is archived (0 = none). Default 0. */
  archivedEvery?: number;
}

export const SEED_ADMIN = 'admin';

export function seedWorkspace(ws: GoogleWorkspace, o: SeedOptions): { adminEmail: string } {
  const d = ws.domain;
  const adminEmail = `${SEED_ADMIN}@${d}`;
  ws.addUser({ primaryEmail: adminEmail, givenName: 'Workspace', familyName: 'Admin', isAdmin: true, orgUnitPath: '/IT' });
  const suspendedEvery = o.suspendedEvery ?? 50;
  const archivedEvery = o.archivedEvery ?? 0;
  for (let i = 0; i < o.users; i++) {
    const n = String(i).padStart(5, '0');
    ws.addUser({
      primaryEmail: `user${n}@${d}`,
      givenName: 'User',
      familyName: `Number ${i}`,
      orgUnitPath: `/Dept${i % 10}`,
      suspended: suspendedEvery > 0 && i % suspendedEvery === 7,
      archived: archivedEvery > 0 && i % archivedEvery === 3,
      ...(i % 5 === 0 ? { aliases: [`u${n}@${d}`] } : {}),
      customSchemas: { HR: { costCenter: `CC-${i % 20}`, employeeNumber: `E${n}` } },
      organizations: [{ department: `dept-${i % 10}`, title: i % 3 === 0 ? 'Engineer' : 'Analyst', primary: true }],
    });
  }
  for (let g = 0; g < o.groups; g++) {
    const members: Array<{ key: string }> = [];
    for (let i = g; i < o.users; i += o.groups) members.push({ key: `user${String(i).padStart(5, '0')}@${d}` });
    ws.addGroup({ email: `group${String(g).padStart(4, '0')}@${d}`, name: `Group ${g}`, members });
  }
  // Nesting: group0001 ⊂ group0000, group0002 ⊂ group0001; a cycle between group0003 and group0004.
  const nest = (parent: number, child: number): void => {
    const email = `group${String(parent).padStart(4, '0')}@${d}`;
    const g = ws.group(email);
    if (!g) return;
    const current = ws.listMembers(g).map((m) => ({ key: m.email ?? m.id }));
    ws.setMembers(email, [...current, { key: `group${String(child).padStart(4, '0')}@${d}`, type: 'GROUP' }]);
  };
  if (o.groups >= 5) {
    nest(0, 1);
    nest(1, 2);
    nest(3, 4);
    nest(4, 3);
  }
  return { adminEmail };
}
