/**
 * The value a configured user attribute should have for one source user: taken from a path, a
 * template or a constant, transformed like `provisioning.mapping`, then coerced to the type.
 */
import { getField } from '../../identity/paths.ts';
import type { NormalizedUser } from '../../identity/model.ts';
import type { UserAttributeRule } from './config-schema.ts';
import { coerce, type Coerced } from './coerce.ts';

/** Like the SCIM mapping's template, except that any missing placeholder makes the whole value missing. */
function render(template: string, subject: unknown): string | undefined {
  let missing = false;
  const out = template.replace(/\{([A-Za-z0-9_.]+)\}/g, (_, field: string) => {
    const v = getField(subject, field);
    if (v === undefined || v === null || v === '' || typeof v === 'object') {
      missing = true;
      return '';
    }
    return String(v);
  });
  return missing ? undefined : out;
}

function transform(v: unknown, t: UserAttributeRule['transform']): unknown {
  if (t === undefined) return v;
  const one = (x: unknown): unknown =>
    typeof x !== 'string' ? x : t === 'lower' ? x.toLowerCase() : t === 'upper' ? x.toUpperCase() : x.trim();
  return Array.isArray(v) ? v.map(one) : one(v);
}

export function desiredValue(rule: UserAttributeRule, user: NormalizedUser): Coerced {
  let raw: unknown;
  if (rule.value !== undefined) raw = rule.value;
  else if (rule.template !== undefined) raw = render(rule.template, user);
  else if (rule.from !== undefined) raw = getField(user, rule.from);
  return coerce(transform(raw, rule.transform), rule.type, { split: rule.split });
}
