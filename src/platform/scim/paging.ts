/**
 * Offset paging (RFC 7644 §3.4.2.4) that survives real servers: capped or lying page sizes,
 * a totalResults that moves while we read, repeated resources, empty pages and objects
 * created or deleted behind our back. It never loops forever and never returns a silently
 * short list: the reconcile engine plans deletions from what this returns.
 *
 * Semantics of one listing:
 * - A pass walks startIndex forward by the number of resources actually received (never
 *   by `count` or `itemsPerPage`), de-duplicating by id, until a page is empty AND
 *   startIndex is past the latest totalResults.
 * - An empty page before totalResults is re-requested (`emptyPageProbes` times, with a
 *   growing pause); if it stays empty the listing fails with E_BAD_RESPONSE.
 * - A pass is suspect when totalResults went down during it (a deletion shifts later objects
 *   to offsets we already read, so one may have been skipped) or when it found fewer unique
 *   objects than the final totalResults (an insertion before our offset). A suspect pass is
 *   followed by a fresh verification pass; the first clean pass wins, as does a pass that
 *   found exactly the same ids as the pass before it. After `maxPasses` suspect passes the
 *   listing fails (transient: the next run tries again) rather than return a partial list.
 * - Objects created during the last pass after we read past their offset can still be
 *   missed; offset paging cannot see them, and the next run will.
 */
import { ErrorCodes, SyncError } from '../errors.ts';
import { sleep } from '../retry.ts';

export interface Page<T> {
  resources: T[];
  totalResults: number;
}

export type FetchPage<T> = (startIndex: number, count: number) => Promise<Page<T>>;

export interface PagingLimits {
  /** Passes (first + verification passes) before a listing that kept moving fails. */
  maxPasses: number;
  /** Re-requests of an empty page that should not be empty. */
  emptyPageProbes: number;
  /** Pause before the first re-request, milliseconds; doubles each time. */
  probeDelayMs: number;
  /** Consecutive pages holding only already-seen ids before we conclude startIndex is ignored. */
  maxStalePages: number;
}

export const DEFAULT_PAGING_LIMITS: PagingLimits = {
  maxPasses: 3,
  emptyPageProbes: 2,
  probeDelayMs: 200, // ms
  maxStalePages: 3,
};

export interface PagingRun<T> {
  fetchPage: FetchPage<T>;
  pageSize: number;
  /** Label for error messages, e.g. `list Users`. */
  what: string;
  limits?: Partial<PagingLimits>;
  signal?: AbortSignal;
  /** Called after each non-empty page with the number of ids not seen before in this pass. */
  onPage?: (fresh: number) => void;
}

interface PassResult<T> {
  items: Map<string, T>;
  totalResults: number;
  totalDecreased: boolean;
}

export async function listAllPages<T extends { id: string }>(run: PagingRun<T>): Promise<T[]> {
  const limits = { ...DEFAULT_PAGING_LIMITS, ...run.limits };
  let previous: PassResult<T> | undefined;
  const history: string[] = [];
  for (let pass = 1; pass <= limits.maxPasses; pass++) {
    const result = await onePass(run, limits);
    const short = result.items.size < result.totalResults;
    if (!short && (!result.totalDecreased || (previous !== undefined && sameIds(previous.items, result.items)))) {
      return [...result.items.values()];
    }
    history.push(`pass ${pass}: ${result.items.size} unique of totalResults ${result.totalResults}${result.totalDecreased ? ', totalResults decreased' : ''}`);
    previous = result;
  }
  throw new SyncError(ErrorCodes.BAD_RESPONSE, 'transient', `${run.what}: listing incomplete, the collection kept changing while it was read (${history.join('; ')}); refusing to return a possibly partial list`);
}

async function onePass<T extends { id: string }>(run: PagingRun<T>, limits: PagingLimits): Promise<PassResult<T>> {
  const items = new Map<string, T>();
  let startIndex = 1;
  let total: number | undefined;
  let maxTotal = 0;
  let totalDecreased = false;
  let pages = 0;
  let emptyStreak = 0;
  let staleStreak = 0;
  for (;;) {
    // Every non-empty page advances startIndex by at least one, so a server that tells the
    // truth about its size finishes well within this; a liar is cut off here.
    const budget = 2 * (maxTotal + 1) + limits.emptyPageProbes + 10;
    if (pages >= budget) {
      throw new SyncError(ErrorCodes.BAD_RESPONSE, 'transient', `${run.what}: listing did not terminate after ${pages} pages (totalResults ${total ?? 'unknown'})`);
    }
    const page = await run.fetchPage(startIndex, run.pageSize);
    pages++;
    if (total !== undefined && page.totalResults < total) totalDecreased = true;
    total = page.totalResults;
    maxTotal = Math.max(maxTotal, total);

    if (page.resources.length === 0) {
      if (startIndex > total) return { items, totalResults: total, totalDecreased };
      if (emptyStreak >= limits.emptyPageProbes) {
        throw new SyncError(ErrorCodes.BAD_RESPONSE, 'transient', `${run.what}: listing incomplete, the page at startIndex ${startIndex} stayed empty after ${emptyStreak + 1} requests although totalResults is ${total}; refusing to return a partial list`);
      }
      await sleep(limits.probeDelayMs * 2 ** emptyStreak, run.signal);
      emptyStreak++;
      continue;
    }
    emptyStreak = 0;

    let fresh = 0;
    for (const r of page.resources) {
      if (!items.has(r.id)) fresh++;
      // A later copy is the fresher one.
      items.set(r.id, r);
    }
    run.onPage?.(fresh);
    staleStreak = fresh === 0 ? staleStreak + 1 : 0;
    if (staleStreak >= limits.maxStalePages) {
      throw new SyncError(ErrorCodes.BAD_RESPONSE, 'transient', `${run.what}: ${staleStreak} consecutive pages repeated resources already read (startIndex ${startIndex}); the server seems to ignore startIndex`);
    }
    startIndex += page.resources.length;
  }
}

function sameIds<T>(a: Map<string, T>, b: Map<string, T>): boolean {
  if (a.size !== b.size) return false;
  for (const id of a.keys()) if (!b.has(id)) return false;
  return true;
}
