/**
 * Validates an event against the vendored OCSF schema subset (test/audit/ocsf-schema): the
 * class by `class_uid`, every required attribute present, no attribute the schema does not
 * list (except inside `unmapped`), each value of its type, enum ids among the listed values and
 * their caption siblings (`activity_name`, `severity`, `status`, `type` …) equal to the caption
 * (99 Other excepted: its caption is free text), `category_uid` and `category_name` of the
 * class, and `type_uid` = class_uid × 100 + activity_id with `type_name` "<class>: <activity>".
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';

interface AttributeSpec {
  type: string;
  requirement: 'required' | 'recommended' | 'optional';
  enum?: Record<string, string>;
  sibling?: string;
  object_type?: string;
  is_array?: boolean;
}
interface ClassSpec {
  uid: number;
  caption: string;
  category_uid: number;
  category_name?: string;
  attributes: Record<string, AttributeSpec>;
}
interface SchemaSubset {
  version: string;
  base_event: ClassSpec;
  classes: Record<string, ClassSpec>;
  objects: Record<string, { caption: string; attributes: Record<string, AttributeSpec> }>;
}

export const OCSF_SCHEMA = JSON.parse(
  readFileSync(new URL('../ocsf-schema/ocsf-1.3.0-subset.json', import.meta.url), 'utf8'),
) as SchemaSubset;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const INT32 = (v: unknown): boolean => Number.isInteger(v) && (v as number) >= -(2 ** 31) && (v as number) < 2 ** 31;
const LONG = (v: unknown): boolean => Number.isSafeInteger(v);

function typeProblem(type: string, v: unknown): string | undefined {
  switch (type) {
    case 'string_t':
      return typeof v === 'string' ? undefined : 'not a string';
    case 'integer_t':
      return INT32(v) ? undefined : 'not a 32-bit integer';
    case 'long_t':
    case 'timestamp_t':
      return LONG(v) ? undefined : 'not a 64-bit integer';
    case 'boolean_t':
      return typeof v === 'boolean' ? undefined : 'not a boolean';
    case 'email_t':
      return typeof v === 'string' && EMAIL.test(v) ? undefined : 'not an e-mail address';
    case 'ip_t':
      return typeof v === 'string' && isIP(v) !== 0 ? undefined : 'not an IP address';
    case 'url_t':
      return typeof v === 'string' && URL.canParse(v) ? undefined : 'not a URL';
    case 'object_t':
      return v !== null && typeof v === 'object' && !Array.isArray(v) ? undefined : 'not an object';
    default:
      return `unknown type ${type}`;
  }
}

function checkAttributes(where: string, value: Record<string, unknown>, attrs: Record<string, AttributeSpec>, problems: string[]): void {
  for (const [name, spec] of Object.entries(attrs)) {
    if (spec.requirement === 'required' && value[name] === undefined) problems.push(`${where}.${name}: required`);
  }
  for (const [name, v] of Object.entries(value)) {
    const spec = attrs[name];
    if (!spec) {
      problems.push(`${where}.${name}: not in the schema`);
      continue;
    }
    if (spec.is_array && !Array.isArray(v)) problems.push(`${where}.${name}: not an array`);
    const items = spec.is_array ? (Array.isArray(v) ? v : []) : [v];
    for (const item of items) {
      const p = typeProblem(spec.type, item);
      if (p) {
        problems.push(`${where}.${name}: ${p}`);
        continue;
      }
      if (spec.object_type) {
        const obj = OCSF_SCHEMA.objects[spec.object_type];
        if (!obj) problems.push(`${where}.${name}: no object ${spec.object_type} in the subset`);
        else checkAttributes(`${where}.${name}`, item as Record<string, unknown>, obj.attributes, problems);
      }
    }
    if (spec.enum) {
      const caption = spec.enum[String(v)];
      if (caption === undefined) problems.push(`${where}.${name}: ${String(v)} is not one of ${Object.keys(spec.enum).join(', ')}`);
      else if (spec.sibling && value[spec.sibling] !== undefined && String(v) !== '99' && value[spec.sibling] !== caption) {
        problems.push(
          `${where}.${spec.sibling}: ${JSON.stringify(value[spec.sibling])} is not the caption of ${name} ${String(v)} (${caption})`,
        );
      }
    }
  }
}

/** The problems of an event (an empty list: it validates). */
export function ocsfProblems(event: unknown): string[] {
  if (event === null || typeof event !== 'object' || Array.isArray(event)) return ['event: not an object'];
  const e = event as Record<string, unknown>;
  const cls = Object.values(OCSF_SCHEMA.classes).find((c) => c.uid === e['class_uid']);
  if (!cls) return [`class_uid: ${String(e['class_uid'])} is not a class of the subset`];
  const problems: string[] = [];
  checkAttributes('event', e, { ...OCSF_SCHEMA.base_event.attributes, ...cls.attributes }, problems);
  if (e['category_uid'] !== cls.category_uid)
    problems.push(`category_uid: ${String(e['category_uid'])}, the class's is ${cls.category_uid}`);
  if (e['category_name'] !== undefined && e['category_name'] !== cls.category_name)
    problems.push(`category_name: not ${cls.category_name}`);
  if (e['class_name'] !== undefined && e['class_name'] !== cls.caption) problems.push(`class_name: not ${cls.caption}`);
  if (e['type_uid'] !== cls.uid * 100 + (e['activity_id'] as number)) problems.push('type_uid: not class_uid * 100 + activity_id');
  if (e['type_name'] !== undefined && e['type_name'] !== `${cls.caption}: ${String(e['activity_name'])}`) {
    problems.push('type_name: not "<class>: <activity>"');
  }
  const metadata = e['metadata'] as Record<string, unknown> | undefined;
  if (metadata && metadata['version'] !== OCSF_SCHEMA.version) problems.push(`metadata.version: not ${OCSF_SCHEMA.version}`);
  return problems;
}
