/**
 * Deterministic file-source directories of any size for benchmarks: realistic users
 * (names, e-mail, title/department attributes) and groups of ~`membersPerGroup` random
 * members. Written as JSON, which the file source parses with JSON.parse (fast at 100k).
 */
import { writeFile } from 'node:fs/promises';
import { mulberry32 } from '../../src/simulator/prng.ts';

const GIVEN = ['Ana', 'Bob', 'Chen', 'Dara', 'Emil', 'Fatima', 'Goran', 'Hana', 'Ivo', 'Jun', 'Kofi', 'Lea', 'Mateo', 'Nia', 'Omar', 'Pia'];
const FAMILY = [
  'Alves',
  'Berg',
  'Costa',
  'Dahl',
  'Eze',
  'Fischer',
  'Garcia',
  'Haddad',
  'Ito',
  'Jensen',
  'Kowalski',
  'Lopez',
  'Müller',
  'Nakamura',
  "O'Neil",
  'Petrov',
];
const DEPARTMENTS = ['Engineering', 'Sales', 'Finance', 'Support', 'Marketing', 'Operations', 'Legal', 'Data'];

export interface BenchUser {
  externalId: string;
  userName: string;
  givenName: string;
  familyName: string;
  displayName: string;
  emails: string;
  attributes: { title: string; department: string };
}

export interface BenchGroup {
  externalId: string;
  displayName: string;
  members: string[];
}

export interface BenchDirectory {
  users: BenchUser[];
  groups: BenchGroup[];
}

export function generateDirectory(userCount: number, groupCount: number, membersPerGroup: number, seed = 1): BenchDirectory {
  const rnd = mulberry32(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)] as T;
  const users: BenchUser[] = [];
  for (let n = 1; n <= userCount; n++) {
    const given = pick(GIVEN);
    const family = pick(FAMILY);
    const userName = `${given.toLowerCase()}.${family.toLowerCase().replace(/[^a-z]/g, '')}.${n}@bench.example.com`;
    users.push({
      externalId: `u-${n}`,
      userName,
      givenName: given,
      familyName: family,
      displayName: `${given} ${family}`,
      emails: userName,
      attributes: { title: `Level ${1 + (n % 5)}`, department: pick(DEPARTMENTS) },
    });
  }
  const groups: BenchGroup[] = [];
  for (let g = 1; g <= groupCount; g++) {
    const members = new Set<string>();
    const size = Math.min(userCount, membersPerGroup);
    while (members.size < size) members.add(`u-${1 + Math.floor(rnd() * userCount)}`);
    groups.push({ externalId: `g-${g}`, displayName: `${pick(DEPARTMENTS)} team ${g}`, members: [...members] });
  }
  return { users, groups };
}

export async function writeDirectory(path: string, d: BenchDirectory): Promise<void> {
  await writeFile(path, JSON.stringify(d));
}
