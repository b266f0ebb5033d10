/** Word lists for realistic generated people, shared by the user seed and the audit events. */
import { pick } from './prng.ts';

export const GIVEN_NAMES = [
  'Alice',
  'Bob',
  'Carla',
  'Dmitri',
  'Elena',
  'François',
  'Grace',
  'Hiroshi',
  'Ines',
  'Jamal',
  'Katarzyna',
  'Liam',
  'Maria',
  'Nikolai',
  'Olga',
  'Priya',
  'Quentin',
  'Rosa',
  'Søren',
  'Tomás',
  'Uma',
  'Victor',
  'Wei',
  'Ximena',
  'Yusuf',
  'Zoë',
  'Ahmed',
  'Beatriz',
  'Chen',
  'Dana',
] as const;

export const FAMILY_NAMES = [
  'Smith',
  'Müller',
  'García',
  "O'Brien",
  'Nguyen',
  'Kowalski',
  'Rossi',
  'Tanaka',
  'Okafor',
  'Johansson',
  'Dubois',
  'Silva',
  'Ivanova',
  'Patel',
  'Kim',
  'Andersen',
  'López',
  'Novak',
  'Cohen',
  'Schmidt',
  'Haddad',
  'Fernández',
  'Yilmaz',
  'Moreau',
  'Park',
  'Van der Berg',
  'Kuznetsov',
  'Nakamura',
  'Costa',
  'Wójcik',
] as const;

export const DEPARTMENTS = [
  'Engineering',
  'Sales',
  'Marketing',
  'Finance',
  'Support',
  'Operations',
  'Legal',
  'People',
  'Data',
  'Security',
] as const;

export const TITLES = ['Analyst', 'Engineer', 'Manager', 'Director', 'Specialist', 'Consultant', 'Lead', 'Associate'] as const;

/** ASCII local part for an e-mail address ("Søren O'Brien" → "soren.obrien"). */
export function emailLocal(given: string, family: string): string {
  const clean = (s: string): string =>
    s
      .normalize('NFKD')
      .replace(/[^\x00-\x7f]/g, '')
      .replace(/[^a-zA-Z]/g, '')
      .toLowerCase();
  return `${clean(given)}.${clean(family)}`;
}

export interface Person {
  given: string;
  family: string;
  email: string;
}

/** Person number `n` (unique e-mail for each n) drawn with `rnd`. */
export function person(rnd: () => number, n: number, domain = 'example.com'): Person {
  const given = pick(rnd, GIVEN_NAMES);
  const family = pick(rnd, FAMILY_NAMES);
  return { given, family, email: `${emailLocal(given, family)}${n}@${domain}` };
}
