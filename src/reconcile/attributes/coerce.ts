/**
 * Exact type coercion of source values into platform attribute values. A value that does not
 * fit its type is a rejection with a reason (reported per user and attribute), never a guess:
 * "12abc" is not a number, "yes" is not a boolean, two values are not one string.
 */
import type { AttributeValue, UserAttributeType } from '../../platform/user-attributes.ts';

export type Coerced = { ok: true; value: AttributeValue | null } | { ok: false; reason: string };

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

function show(v: unknown): string {
  const s = typeof v === 'string' ? JSON.stringify(v) : String(v);
  return s.length > 40 ? `${s.slice(0, 37)}…` : s;
}

function isEmpty(v: unknown): boolean {
  return v === undefined || v === null || (typeof v === 'string' && v.trim() === '') || (Array.isArray(v) && v.length === 0);
}

function toStr(v: unknown): { ok: true; value: string } | { ok: false; reason: string } {
  if (typeof v === 'string') return { ok: true, value: v };
  if (typeof v === 'number' && Number.isFinite(v)) return { ok: true, value: String(v) };
  if (typeof v === 'boolean') return { ok: true, value: String(v) };
  return { ok: false, reason: `${show(typeof v === 'object' ? JSON.stringify(v) : v)} is not a string` };
}

function toNum(v: unknown): { ok: true; value: number } | { ok: false; reason: string } {
  if (typeof v === 'number')
    return Number.isFinite(v) ? { ok: true, value: v } : { ok: false, reason: `${show(v)} is not a finite number` };
  if (typeof v !== 'string' || !DECIMAL.test(v.trim())) return { ok: false, reason: `${show(v)} is not a number` };
  const n = Number(v.trim());
  if (!Number.isFinite(n)) return { ok: false, reason: `${show(v)} is out of range` };
  if (Number.isInteger(n) && !Number.isSafeInteger(n) && !/[.eE]/.test(v))
    return { ok: false, reason: `${show(v)} cannot be represented exactly (beyond 2^53)` };
  return { ok: true, value: n };
}

function toBool(v: unknown): { ok: true; value: boolean } | { ok: false; reason: string } {
  if (typeof v === 'boolean') return { ok: true, value: v };
  if (typeof v === 'string') {
    const t = v.trim().toLowerCase();
    if (t === 'true') return { ok: true, value: true };
    if (t === 'false') return { ok: true, value: false };
  }
  return { ok: false, reason: `${show(v)} is not a boolean (expected true or false)` };
}

/** Source value → platform value of `type`; empty (undefined, null, blank, []) → null (no value). */
export function coerce(raw: unknown, type: UserAttributeType, opts: { split?: string | undefined } = {}): Coerced {
  if (isEmpty(raw)) return { ok: true, value: null };
  if (type === 'string_array' || type === 'number_array') {
    let list: unknown[] = Array.isArray(raw) ? raw : [raw];
    if (opts.split !== undefined) list = list.flatMap((v) => (typeof v === 'string' ? v.split(opts.split as string) : [v]));
    list = list.map((v) => (typeof v === 'string' ? v.trim() : v)).filter((v) => !isEmpty(v));
    const out: Array<string | number> = [];
    for (const [i, v] of list.entries()) {
      const c = type === 'string_array' ? toStr(v) : toNum(v);
      if (!c.ok) return { ok: false, reason: `element ${i + 1}: ${c.reason}` };
      if (!out.includes(c.value)) out.push(c.value);
    }
    return { ok: true, value: out.length === 0 ? null : (out as string[] | number[]) };
  }
  let v = raw;
  if (Array.isArray(raw)) {
    if (raw.length > 1) return { ok: false, reason: `${raw.length} values for a single-valued ${type} attribute` };
    v = raw[0];
  }
  const c = type === 'string' ? toStr(v) : type === 'number' ? toNum(v) : toBool(v);
  return c.ok ? { ok: true, value: c.value } : c;
}

/** Compare a desired value with the platform's: arrays as sets (the platform may reorder), scalars exactly. */
export function sameAttributeValue(a: AttributeValue | null, b: AttributeValue | null): boolean {
  if (a === null || b === null) return a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b)) return false;
    const sa = new Set<unknown>(a);
    const sb = new Set<unknown>(b);
    return sa.size === sb.size && [...sa].every((x) => sb.has(x));
  }
  return a === b;
}

/** True when `after` takes something away that `before` granted: a clear, a replaced scalar, or a dropped array element. */
export function takesAway(before: AttributeValue | null, after: AttributeValue | null): boolean {
  if (before === null) return false;
  if (after === null) return true;
  if (Array.isArray(before)) {
    const keep = new Set<unknown>(Array.isArray(after) ? after : [after]);
    return before.some((x) => !keep.has(x));
  }
  return !sameAttributeValue(before, after);
}
