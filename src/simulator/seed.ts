/**
 * Realistic pre-seeded directory content: users with names, work e-mails, the enterprise
 * extension, ~5% inactive, and about one group per 50 users with random members.
 * Content is a pure function of the seed; ids are random UUIDs like the real platform's.
 */
import { SCHEMA_ENTERPRISE_USER, SCHEMA_USER, type ScimUser } from '../platform/scim/types.ts';
import { DEPARTMENTS, TITLES, person } from './names.ts';
import { mulberry32, pick } from './prng.ts';
import type { SimStore } from './store.ts';

export function seedUsers(store: SimStore, count: number, seed: number): { users: number; groups: number } {
  const rnd = mulberry32(seed ^ 0x5eed);
  const created: ScimUser[] = [];
  for (let n = 1; n <= count; n++) {
    const p = person(rnd, n);
    created.push(
      store.createUser({
        schemas: [SCHEMA_USER, SCHEMA_ENTERPRISE_USER],
        externalId: `ext-${seed}-${n}`,
        userName: p.email,
        name: { givenName: p.given, familyName: p.family, formatted: `${p.given} ${p.family}` },
        displayName: `${p.given} ${p.family}`,
        title: pick(rnd, TITLES),
        emails: [{ value: p.email, type: 'work', primary: true }],
        active: rnd() >= 0.05,
        [SCHEMA_ENTERPRISE_USER]: { department: pick(rnd, DEPARTMENTS), employeeNumber: String(100000 + n) },
      }),
    );
  }
  const groupCount = count === 0 ? 0 : Math.max(1, Math.ceil(count / 50));
  for (let g = 1; g <= groupCount; g++) {
    const size = Math.min(created.length, 1 + Math.floor(rnd() * 60));
    const members = new Set<string>();
    for (let k = 0; k < size; k++) members.add((created[Math.floor(rnd() * created.length)] as ScimUser).id);
    store.createGroup({
      externalId: `grp-${seed}-${g}`,
      displayName: `${pick(rnd, DEPARTMENTS)} Team ${g}`,
      members: [...members].map((value) => ({ value })),
    });
  }
  return { users: count, groups: groupCount };
}
