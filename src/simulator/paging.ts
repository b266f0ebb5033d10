/**
 * Index-based paging (RFC 7644 §3.4.2.4) and the paging faults that make real SCIM servers
 * hard to list reliably: short pages, lying itemsPerPage, moving totals, repeats, empty pages.
 */
import type { FaultRule } from './types.ts';

export interface PageRequest {
  /** 1-based. */
  startIndex: number;
  count: number;
}

export interface Page<T> {
  resources: T[];
  totalResults: number;
  startIndex: number;
  itemsPerPage: number;
}

function intParam(raw: string | null | undefined, fallback: number): number {
  if (raw === null || raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  return Number.isFinite(n) ? Math.trunc(n) : fallback;
}

/** Out-of-range values are clamped as RFC 7644 says (startIndex < 1 → 1, count < 0 → 0). */
export function pageRequest(startIndex: string | null | undefined, count: string | null | undefined, maxPageSize: number): PageRequest {
  return {
    startIndex: Math.max(1, intParam(startIndex, 1)),
    count: Math.min(maxPageSize, Math.max(0, intParam(count, maxPageSize))),
  };
}

export function paginate<T>(all: readonly T[], req: PageRequest, faults: FaultRule[]): Page<T> {
  const has = (kind: FaultRule['kind']): FaultRule | undefined => faults.find((f) => f.kind === kind);
  let totalResults = all.length;
  const changing = has('changing-total');
  if (changing) totalResults = Math.max(0, totalResults + (changing.totalDelta ?? 1));
  if (req.count === 0) return { resources: [], totalResults, startIndex: req.startIndex, itemsPerPage: 0 };

  const from = req.startIndex - 1;
  let size = req.count;
  const short = has('capped-page') ?? has('lying-page');
  if (short) size = Math.max(1, Math.min(size, short.pageSize ?? Math.floor(req.count / 2)));
  const dup = has('duplicate-across-pages');
  let resources: T[];
  if (has('empty-page')) {
    resources = [];
  } else if (dup && from > 0 && from <= all.length) {
    if ((dup.duplicateMode ?? 'shift') === 'shift') {
      resources = all.slice(from - 1, from - 1 + size);
    } else {
      resources = [all[from - 1] as T, ...all.slice(from, from + size)];
    }
  } else {
    resources = all.slice(from, from + size);
  }
  // 'lying-page' claims the requested count although fewer resources came back.
  const itemsPerPage = has('lying-page') && resources.length > 0 ? req.count : resources.length;
  return { resources, totalResults, startIndex: req.startIndex, itemsPerPage };
}
