/**
 * Attribute-level comparison of a desired resource with the platform's copy, producing
 * the changes (for the plan) and the RFC 7644 PATCH operations (for apply).
 */
import { nameKey } from '../identity/canonical-name.ts';
import { getPath } from '../identity/paths.ts';
import type { PatchOperation } from '../platform/scim/types.ts';
import type { AttributeChange } from './plan-types.ts';

/**
 * Every path is compared exactly, userName included: matching is case-insensitive (match.ts),
 * but a write is decided by the exact value, so a case-only rename (`Bob@Example.com` →
 * `bob@example.com`) is applied.
 */
/** Handled by deactivate/reactivate, not by attribute updates. */
const SKIP = new Set(['active']);

export function diffAttributes(
  desired: Record<string, unknown>,
  actual: Record<string, unknown>,
  paths: string[],
): { changes: AttributeChange[]; ops: PatchOperation[] } {
  const changes: AttributeChange[] = [];
  const ops: PatchOperation[] = [];
  for (const path of paths) {
    if (SKIP.has(path)) continue;
    const after = getPath(desired, path);
    const before = getPath(actual, path);
    if (path === 'emails' ? sameEmails(after, before) : sameValue(after, before)) continue;
    changes.push({ path, before: before ?? null, after: after ?? null });
    ops.push(isEmpty(after) ? { op: 'remove', path } : { op: 'replace', path, value: after });
  }
  return { changes, ops };
}

function isEmpty(v: unknown): boolean {
  return v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);
}

export function sameValue(a: unknown, b: unknown, caseInsensitive = false): boolean {
  if (isEmpty(a) && isEmpty(b)) return true;
  if (typeof a === 'string' && typeof b === 'string') return caseInsensitive ? nameKey(a) === nameKey(b) : a === b;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].every((k) => sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return a === b;
}

/** E-mails compare by address (`nameKey`: NFC and case folded) and which one is primary; type labels are ignored. */
function sameEmails(desired: unknown, actual: unknown): boolean {
  const norm = (v: unknown): string[] => {
    if (!Array.isArray(v)) return [];
    const list = v
      .filter(
        (e): e is { value: string; primary?: boolean } =>
          typeof e === 'object' && e !== null && typeof (e as { value?: unknown }).value === 'string',
      )
      .map((e) => ({ value: nameKey(e.value), primary: e.primary === true }));
    const primary = list.find((e) => e.primary)?.value ?? list[0]?.value;
    return [
      primary ?? '',
      ...list
        .map((e) => e.value)
        .filter((x) => x !== primary)
        .sort(),
    ];
  };
  const a = norm(desired);
  const b = norm(actual);
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
