/**
 * Validates an event against the published OCSF schema (test/audit/ocsf-schema/1.3.0, compiled
 * by ocsf-compile.ts): the class by `class_uid`, every required attribute present, no attribute
 * the schema does not define (except inside `unmapped`), each value of its type (with the
 * type's regex, range and length), `at_least_one` / `just_one` object constraints, enum ids among
 * the defined values and their caption siblings (`activity_name`, `severity`, `status` …) equal
 * to the caption (99 Other excepted: its caption is free text), `category_uid` and
 * `category_name` of the class, and `type_uid` = class_uid × 100 + activity_id with `type_name`
 * "<class>: <activity>".
 */
import { isIP } from 'node:net';
import { compileOcsfSchema, type ResolvedAttribute } from './ocsf-compile.ts';

export const OCSF_SCHEMA = compileOcsfSchema('1.3.0', [
  'events/iam/iam.json',
  'events/iam/account_change.json',
  'events/iam/authentication.json',
  'events/iam/group_management.json',
  'events/application/application.json',
  'events/application/api.json',
]);

const INT32 = (v: unknown): boolean => Number.isInteger(v) && (v as number) >= -(2 ** 31) && (v as number) < 2 ** 31;

/** What a value of a derived string type must be, in words (the type's regex decides, IPs by isIP). */
const TYPE_WORDS: Record<string, string> = { ip_t: 'an IP address', email_t: 'an e-mail address', url_t: 'a URL' };

function typeProblem(spec: ResolvedAttribute, v: unknown): string | undefined {
  switch (spec.baseType) {
    case 'string_t':
      if (typeof v !== 'string') return 'not a string';
      if (spec.maxLen !== undefined && v.length > spec.maxLen) return `longer than ${spec.maxLen}`;
      if (spec.type === 'ip_t') return isIP(v) !== 0 ? undefined : `not ${TYPE_WORDS['ip_t']}`;
      if (spec.regex && !spec.regex.test(v)) return `not ${TYPE_WORDS[spec.type] ?? `a ${spec.type}`}`;
      if (spec.type === 'url_t' && !URL.canParse(v)) return 'not a URL';
      return undefined;
    case 'integer_t':
      if (!INT32(v)) return 'not a 32-bit integer';
      if (spec.range && ((v as number) < spec.range[0] || (v as number) > spec.range[1])) return `outside ${spec.range.join('..')}`;
      return undefined;
    case 'long_t':
      return Number.isSafeInteger(v) ? undefined : 'not a 64-bit integer';
    case 'float_t':
      return typeof v === 'number' && Number.isFinite(v) ? undefined : 'not a number';
    case 'boolean_t':
      return typeof v === 'boolean' ? undefined : 'not a boolean';
    case 'json_t':
      return v === undefined ? 'not JSON' : undefined;
    case 'object_t':
      return v !== null && typeof v === 'object' && !Array.isArray(v) ? undefined : 'not an object';
    default:
      return `unknown type ${spec.baseType}`;
  }
}

function checkAttributes(
  where: string,
  value: Record<string, unknown>,
  attrs: Record<string, ResolvedAttribute>,
  problems: string[],
): void {
  for (const [name, spec] of Object.entries(attrs)) {
    if (spec.requirement === 'required' && value[name] === undefined) problems.push(`${where}.${name}: required`);
  }
  for (const [name, v] of Object.entries(value)) {
    const spec = attrs[name];
    if (!spec) {
      problems.push(`${where}.${name}: not in the schema`);
      continue;
    }
    if (spec.isArray && !Array.isArray(v)) problems.push(`${where}.${name}: not an array`);
    const items = spec.isArray ? (Array.isArray(v) ? v : []) : [v];
    for (const item of items) {
      const p = typeProblem(spec, item);
      if (p) {
        problems.push(`${where}.${name}: ${p}`);
        continue;
      }
      if (spec.objectType && spec.objectType !== 'object')
        checkObject(`${where}.${name}`, item as Record<string, unknown>, spec.objectType, problems);
    }
    if (spec.enum) {
      const caption = spec.enum[String(v)];
      if (caption === undefined) problems.push(`${where}.${name}: ${String(v)} is not one of ${Object.keys(spec.enum).join(', ')}`);
      else if (spec.sibling && value[spec.sibling] !== undefined && !isOther(name, v) && value[spec.sibling] !== caption) {
        problems.push(
          `${where}.${spec.sibling}: ${JSON.stringify(value[spec.sibling])} is not the caption of ${name} ${String(v)} (${caption})`,
        );
      }
    }
  }
}

/** `99 Other` (and a type of activity 99): the caption sibling is the source's own words. */
function isOther(name: string, v: unknown): boolean {
  return String(v) === '99' || (name === 'type_uid' && Number(v) % 100 === 99);
}

function checkObject(where: string, value: Record<string, unknown>, type: string, problems: string[]): void {
  const obj = OCSF_SCHEMA.object(type);
  checkAttributes(where, value, obj.attributes, problems);
  if (obj.atLeastOne && !obj.atLeastOne.some((n) => value[n] !== undefined)) {
    problems.push(`${where}: needs at least one of ${obj.atLeastOne.join(', ')}`);
  }
  if (obj.justOne && obj.justOne.filter((n) => value[n] !== undefined).length !== 1) {
    problems.push(`${where}: needs exactly one of ${obj.justOne.join(', ')}`);
  }
}

/** The problems of an event (an empty list: it validates). */
export function ocsfProblems(event: unknown): string[] {
  if (event === null || typeof event !== 'object' || Array.isArray(event)) return ['event: not an object'];
  const e = event as Record<string, unknown>;
  const cls = OCSF_SCHEMA.classes.get(e['class_uid'] as number);
  if (!cls) return [`class_uid: ${String(e['class_uid'])} is not a class of the vendored schema`];
  const problems: string[] = [];
  const metadata = e['metadata'] as Record<string, unknown> | undefined;
  const profiles = new Set(Array.isArray(metadata?.['profiles']) ? (metadata['profiles'] as unknown[]) : []);
  const attributes = Object.fromEntries(
    Object.entries(cls.attributes).filter(([, a]) => a.profile === undefined || profiles.has(a.profile)),
  );
  checkAttributes('event', e, attributes, problems);
  if (e['category_uid'] !== cls.categoryUid) problems.push(`category_uid: ${String(e['category_uid'])}, the class's is ${cls.categoryUid}`);
  if (e['category_name'] !== undefined && e['category_name'] !== cls.categoryName) problems.push(`category_name: not ${cls.categoryName}`);
  if (e['class_name'] !== undefined && e['class_name'] !== cls.caption) problems.push(`class_name: not ${cls.caption}`);
  if (e['type_uid'] !== cls.uid * 100 + (e['activity_id'] as number)) problems.push('type_uid: not class_uid * 100 + activity_id');
  if (e['type_name'] !== undefined && e['type_name'] !== `${cls.caption}: ${String(e['activity_name'])}`) {
    problems.push('type_name: not "<class>: <activity>"');
  }
  if (metadata && metadata['version'] !== OCSF_SCHEMA.version) problems.push(`metadata.version: not ${OCSF_SCHEMA.version}`);
  return problems;
}
