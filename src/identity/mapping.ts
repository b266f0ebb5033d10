/**
 * Turns normalized source objects into the SCIM resources we want on the platform.
 * Core attributes are always mapped; `provisioning.mapping` adds or overrides attribute
 * paths (core, enterprise extension or a vendor URN) with simple transforms.
 */
import type { MappingRule } from '../config/schema.ts';
import type { NormalizedGroup, NormalizedUser } from './model.ts';
import { getField, setPath } from './paths.ts';
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

export function mapUser(user: NormalizedUser, rules: MappingRules): DesiredUser {
  const resource: Record<string, unknown> = { schemas: [SCHEMA_USER], externalId: user.externalId, userName: user.userName, active: user.active };
  const name: Record<string, string> = {};
  if (user.givenName) name['givenName'] = user.givenName;
  if (user.familyName) name['familyName'] = user.familyName;
  if (Object.keys(name).length > 0) resource['name'] = name;
  const displayName = user.displayName ?? ([user.givenName, user.familyName].filter(Boolean).join(' ') || undefined);
  if (displayName) resource['displayName'] = displayName;
  if (user.emails.length > 0) {
    resource['emails'] = user.emails.map((value, i) => ({ value, type: 'work', primary: i === 0 }));
  }
  const managedPaths = new Set(CORE_USER_PATHS);
  applyRules(resource, rules, user, managedPaths);
  return { source: user, resource: resource as unknown as NewResource<ScimUser>, managedPaths: [...managedPaths] };
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
