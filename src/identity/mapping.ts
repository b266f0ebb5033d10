/**
 * Turns normalized source objects into the SCIM resources we want on the platform.
 * Core attributes are always mapped; `provisioning.mapping` adds or overrides attribute
 * paths (core, enterprise extension or a vendor URN) with simple transforms.
 */
import type { EmailsConfig, MappingRule } from '../config/schema.ts';
import type { NormalizedGroup, NormalizedUser } from './model.ts';
import { getField, parsePath, setPath } from './paths.ts';
import { SCHEMA_GROUP, SCHEMA_USER, type NewResource, type ScimGroup, type ScimUser } from '../platform/scim/types.ts';

export interface DesiredUser {
  source: NormalizedUser;
  /** The full body for a create. */
  resource: NewResource<ScimUser>;
  /** Attribute paths compared against the platform on every run (excludes create-only ones). */
  managedPaths: string[];
}

export interface DesiredGroup {
  source: NormalizedGroup;
  resource: NewResource<ScimGroup>;
  managedPaths: string[];
}

export type MappingRules = Record<string, MappingRule>;

const CORE_USER_PATHS = ['userName', 'externalId', 'name.givenName', 'name.familyName', 'displayName', 'emails', 'active'];
const CORE_GROUP_PATHS = ['displayName', 'externalId'];

/**
 * The top-level attributes of a platform user that the mapping compares or reads (core paths and
 * every mapped path: `name` for `name.givenName`, the URN for an extension path). A listed user
 * is kept with `id` and only these (ScimClient.listUsers `attributes`), so the platform snapshot
 * holds what planning reads and nothing else.
 */
export function comparedUserAttributes(rules: MappingRules): string[] {
  return topLevel([...CORE_USER_PATHS, ...Object.keys(rules)]);
}

export function comparedGroupAttributes(rules: MappingRules): string[] {
  return topLevel([...CORE_GROUP_PATHS, 'members', ...Object.keys(rules)]);
}

function topLevel(paths: string[]): string[] {
  return [
    ...new Set(
      paths.map((path) => {
        const { urn, segments } = parsePath(path);
        return urn ?? (segments[0] as string);
      }),
    ),
  ];
}

export function evaluateRule(rule: MappingRule, subject: unknown): unknown {
  let value: unknown;
  if (rule.value !== undefined) value = rule.value;
  else if (rule.template !== undefined) value = renderTemplate(rule.template, subject);
  else if (rule.from !== undefined) value = getField(subject, rule.from);
  if (typeof value === 'string') {
    if (rule.transform === 'lower') value = value.toLowerCase();
    else if (rule.transform === 'upper') value = value.toUpperCase();
    else if (rule.transform === 'trim') value = value.trim();
    if (value === '') value = undefined;
  }
  return value;
}

/** `{givenName}.{familyName}@example.com`; a missing field renders as an empty string. */
export function renderTemplate(template: string, subject: unknown): string {
  return template.replace(/\{([A-Za-z0-9_.]+)\}/g, (_, field: string) => {
    const v = getField(subject, field);
    return v === undefined || v === null ? '' : String(v);
  });
}

/** `emails` (provisioning.emails) decides the `type` labels; default: the source's type, else `work`. */
export function mapUser(user: NormalizedUser, rules: MappingRules, emails?: EmailsConfig): DesiredUser {
  const resource: Record<string, unknown> = {
    schemas: [SCHEMA_USER],
    externalId: user.externalId,
    userName: user.userName,
    active: user.active,
  };
  const name: Record<string, string> = {};
  if (user.givenName) name['givenName'] = user.givenName;
  if (user.familyName) name['familyName'] = user.familyName;
  if (Object.keys(name).length > 0) resource['name'] = name;
  const displayName = user.displayName ?? ([user.givenName, user.familyName].filter(Boolean).join(' ') || undefined);
  if (displayName) resource['displayName'] = displayName;
  if (user.emails.length > 0) {
    resource['emails'] = typedEmails(user, emails);
  }
  const managedPaths = new Set(CORE_USER_PATHS);
  applyRules(resource, rules, user, managedPaths);
  return { source: user, resource: resource as unknown as NewResource<ScimUser>, managedPaths: [...managedPaths] };
}

/**
 * The addresses with their `type`. `unique` claims types in the order primary, addresses with a
 * source type, the rest; an address left without a free type is not sent (the primary always is).
 */
export function typedEmails(
  user: NormalizedUser,
  cfg: EmailsConfig = { type: 'work', typeMode: 'default', uniqueTypes: ['work', 'home', 'other'] },
): Array<{ value: string; type?: string; primary: boolean }> {
  const own = (value: string): string | undefined => user.emailTypes?.[value];
  if (cfg.typeMode === 'none') return user.emails.map((value, i) => ({ value, primary: i === 0 }));
  if (cfg.typeMode === 'default') return user.emails.map((value, i) => ({ value, type: own(value) ?? cfg.type, primary: i === 0 }));
  const taken = new Set<string>();
  const typeOf = new Map<number, string>();
  const order = user.emails.map((_, i) => i).sort((a, b) => rank(a) - rank(b));
  function rank(i: number): number {
    return i === 0 ? 0 : own(user.emails[i] as string) !== undefined ? 1 : 2;
  }
  for (const i of order) {
    const type = [own(user.emails[i] as string), cfg.type, ...cfg.uniqueTypes].find((t) => t !== undefined && !taken.has(t.toLowerCase()));
    if (type === undefined) continue;
    taken.add(type.toLowerCase());
    typeOf.set(i, type);
  }
  return user.emails.flatMap((value, i) => {
    const type = typeOf.get(i);
    return type === undefined ? [] : [{ value, type, primary: i === 0 }];
  });
}

export function mapGroup(group: NormalizedGroup, rules: MappingRules): DesiredGroup {
  const resource: Record<string, unknown> = { schemas: [SCHEMA_GROUP], externalId: group.externalId, displayName: group.displayName };
  const managedPaths = new Set(CORE_GROUP_PATHS);
  applyRules(resource, rules, group, managedPaths);
  return { source: group, resource: resource as unknown as NewResource<ScimGroup>, managedPaths: [...managedPaths] };
}

function applyRules(resource: Record<string, unknown>, rules: MappingRules, subject: unknown, managed: Set<string>): void {
  for (const [path, rule] of Object.entries(rules)) {
    const value = evaluateRule(rule, subject);
    if (rule.createOnly) managed.delete(path);
    else managed.add(path);
    if (value !== undefined) setPath(resource, path, value);
  }
}
