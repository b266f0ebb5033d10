/**
 * Offset paging (RFC 7644 §3.4.2.4) that survives real servers: capped or lying page sizes,
 * a totalResults that moves while we read, repeated resources, empty pages, a first page
 * served again past the end, and objects created or deleted behind our back. It never loops
 * forever and never returns a silently short list: the reconcile engine plans deletions
 * from what this returns.
 *
 * Semantics of one listing:
 * - A pass walks startIndex forward by the resources actually received (never by `count`
 *   or `itemsPerPage`), de-duplicating by id.
 * - Pages overlap by one: after a page of two or more, the next request starts at the
 *   previous page's last resource. Finding it again proves that nothing before our offset
 *   moved; missing it means the collection shifted under us (a deletion before our offset
 *   moves every later object back by one, so one would be skipped — also when a creation
 *   elsewhere keeps totalResults unchanged, which no count can reveal). Found further on,
 *   the walk re-aligns after it. The final request (the overlap resource alone) both proves
 *   the end and checks the last page.
 * - A page that holds nothing past the overlap, before totalResults, is re-requested
 *   (`emptyPageProbes` times, with a growing pause); if it stays so the listing fails with
 *   E_BAD_RESPONSE. A page past totalResults that holds only resources already read is the
 *   end (servers built on scimmy answer a startIndex past the end with the first page).
 * - A pass is suspect when totalResults went down during it, when an overlap was not found
 *   (shifted), or when it found fewer unique objects than the final totalResults (an
 *   insertion before our offset). A suspect pass is followed by a fresh verification pass;
 *   the first clean pass wins, as does a pass that found exactly the same ids as the pass
 *   before it. After `maxPasses` suspect passes the listing fails (transient: the next run
 *   tries again) rather than return a partial list.
 * - Limits: objects created during the last pass after we read past their offset can still
 *   be missed (the next run sees them); a server that caps pages at one resource cannot be
 *   overlapped, so there only the counts detect a shift.
 * - Bounds, whatever the server claims: a totalResults above `maxObjects`, more objects
 *   than that, or more than `maxPages` requests in one pass fail the listing
 *   (E_LISTING_TOO_LARGE, fatal: raise the limit or fix the server) before more is held.
 *   Fewer pages when the claim is small: pages past about twice the claim fail it
 *   (E_BAD_RESPONSE; a server that under-reports is read in full, one that keeps
 *   delivering is not). A claim larger than what the pages
 *   deliver fails it as above (short pass, empty page). The whole listing, every pass and
 *   every page request included, ends by `deadlineMs` (E_LISTING_DEADLINE).
 */
import { ErrorCodes, SyncError } from '../../errors.ts';
import { sleep } from '../retry.ts';

export interface Page<T> {
  resources: T[];
  totalResults: number;
}

/** `signal` ends the request when the listing is aborted or runs out of its deadline. */
export type FetchPage<T> = (startIndex: number, count: number, signal?: AbortSignal) => Promise<Page<T>>;

export interface PagingLimits {
  /** Passes (first + verification passes) before a listing that kept moving fails. */
  maxPasses: number;
  /** Re-requests of an empty page that should not be empty. */
  emptyPageProbes: number;
  /** Pause before the first re-request, milliseconds; doubles each time. */
  probeDelayMs: number;
  /** Consecutive pages holding only already-seen ids before we conclude startIndex is ignored. */
  maxStalePages: number;
  /** Objects one listing may hold; a larger totalResults claim fails it at once. */
  maxObjects: number;
  /** Page requests in one pass, whatever totalResults claims. */
  maxPages: number;
  /** The whole listing (every pass, every page), milliseconds. */
  deadlineMs: number;
}

export const DEFAULT_PAGING_LIMITS: PagingLimits = {
  maxPasses: 3,
  emptyPageProbes: 2,
  probeDelayMs: 200, // ms
  maxStalePages: 3,
  maxObjects: 5_000_000,
  maxPages: 200_000,
  deadlineMs: 3_600_000, // ms
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
  /** An overlap resource was not where it had been: something before our offset moved. */
  shifted: boolean;
}

export async function listAllPages<T extends { id: string }>(run: PagingRun<T>): Promise<T[]> {
  const limits = { ...DEFAULT_PAGING_LIMITS, ...run.limits };
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(listingDeadline(run.what, limits.deadlineMs)), limits.deadlineMs);
  const signal = run.signal ? AbortSignal.any([run.signal, deadline.signal]) : deadline.signal;
  try {
    return await allPasses({ ...run, signal }, limits);
  } catch (e) {
    // The deadline's own error, not the abort it caused in a request or a pause.
    if (deadline.signal.aborted && !run.signal?.aborted) throw deadline.signal.reason;
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

function listingDeadline(what: string, ms: number): SyncError {
  return new SyncError(
    ErrorCodes.LISTING_DEADLINE,
    'transient',
    `${what}: listing took longer than ${Math.round(ms / 1000)}s (the listing's deadlineSeconds); refusing to return a partial list`,
  );
}

function tooLarge(what: string, detail: string): SyncError {
  return new SyncError(ErrorCodes.LISTING_TOO_LARGE, 'fatal', `${what}: ${detail}; refusing to return a partial list`);
}

async function allPasses<T extends { id: string }>(run: PagingRun<T>, limits: PagingLimits): Promise<T[]> {
  let previous: PassResult<T> | undefined;
  const history: string[] = [];
  for (let pass = 1; pass <= limits.maxPasses; pass++) {
    const result = await onePass(run, limits);
    const short = result.items.size < result.totalResults;
    const moved = result.totalDecreased || result.shifted;
    if (!short && (!moved || (previous !== undefined && sameIds(previous.items, result.items)))) {
      return [...result.items.values()];
    }
    history.push(
      `pass ${pass}: ${result.items.size} unique of totalResults ${result.totalResults}${result.totalDecreased ? ', totalResults decreased' : ''}${result.shifted ? ', pages shifted' : ''}`,
    );
    previous = result;
  }
  throw new SyncError(
    ErrorCodes.BAD_RESPONSE,
    'transient',
    `${run.what}: listing incomplete, the collection kept changing while it was read (${history.join('; ')}); refusing to return a possibly partial list`,
  );
}

async function onePass<T extends { id: string }>(run: PagingRun<T>, limits: PagingLimits): Promise<PassResult<T>> {
  const items = new Map<string, T>();
  /** 1-based position of the first resource not read yet. */
  let next = 1;
  /** The previous page's last resource, requested again as the first of the next page. */
  let overlapId: string | undefined;
  let total: number | undefined;
  let maxTotal = 0;
  let totalDecreased = false;
  let shifted = false;
  let pages = 0;
  let emptyStreak = 0;
  let staleStreak = 0;
  for (;;) {
    // Never more than maxPages, whatever totalResults claims.
    if (pages >= limits.maxPages) {
      throw tooLarge(run.what, `more than the listing's maxPages (${limits.maxPages}) page requests in one pass`);
    }
    // Every useful page advances by at least one, so a server that tells the truth about
    // its size finishes well within this; a liar is cut off here.
    const budget = 2 * (maxTotal + 1) + limits.emptyPageProbes + limits.maxStalePages + 10;
    if (pages >= budget) {
      throw new SyncError(
        ErrorCodes.BAD_RESPONSE,
        'transient',
        `${run.what}: listing did not terminate after ${pages} pages (totalResults ${total ?? 'unknown'})`,
      );
    }
    const startIndex = overlapId === undefined ? next : next - 1;
    const page = await run.fetchPage(startIndex, run.pageSize, run.signal);
    pages++;
    if (page.totalResults > limits.maxObjects) {
      throw tooLarge(run.what, `the server claims ${page.totalResults} objects, above the listing's maxObjects (${limits.maxObjects})`);
    }
    if (total !== undefined && page.totalResults < total) totalDecreased = true;
    total = page.totalResults;
    maxTotal = Math.max(maxTotal, total);
    const { resources } = page;

    let fresh = 0;
    for (const r of resources) if (!items.has(r.id)) fresh++;
    if (items.size + fresh > limits.maxObjects) {
      throw tooLarge(run.what, `more than the listing's maxObjects (${limits.maxObjects}) objects`);
    }
    // Past the end with nothing new: the end, however the server filled the page (scimmy repeats page 1).
    if (startIndex > total && fresh === 0) return { items, totalResults: total, totalDecreased, shifted };

    // Where the new positions begin: after the overlap resource when it is on the page.
    const at = overlapId === undefined ? -1 : resources.findIndex((r) => r.id === overlapId);
    if (overlapId !== undefined && at === -1 && resources.length > 0) shifted = true;
    const pos = at === -1 ? startIndex : startIndex + at + 1;
    const beyond = resources.length - (at + 1);
    for (const r of resources) items.set(r.id, r); // a later copy is the fresher one
    if (resources.length > 0) run.onPage?.(fresh);

    if (beyond === 0 && resources.length <= 1) {
      // Nothing at position `next` (an empty page, or the overlap resource alone).
      if (next > total) return { items, totalResults: total, totalDecreased, shifted };
      if (emptyStreak >= limits.emptyPageProbes) {
        throw new SyncError(
          ErrorCodes.BAD_RESPONSE,
          'transient',
          `${run.what}: listing incomplete, the page at startIndex ${next} stayed empty after ${emptyStreak + 1} requests although totalResults is ${total}; refusing to return a partial list`,
        );
      }
      await sleep(limits.probeDelayMs * 2 ** emptyStreak, run.signal);
      emptyStreak++;
      continue;
    }
    emptyStreak = 0;
    next = pos + beyond;
    overlapId = resources.length >= 2 && run.pageSize >= 2 ? resources[resources.length - 1]?.id : undefined;
    if (beyond === 0 && next > total) return { items, totalResults: total, totalDecreased, shifted };
    staleStreak = fresh === 0 ? staleStreak + 1 : 0;
    if (staleStreak >= limits.maxStalePages) {
      throw new SyncError(
        ErrorCodes.BAD_RESPONSE,
        'transient',
        `${run.what}: ${staleStreak} consecutive pages repeated resources already read (startIndex ${startIndex}); the server seems to ignore startIndex`,
      );
    }
  }
}

function sameIds<T>(a: Map<string, T>, b: Map<string, T>): boolean {
  if (a.size !== b.size) return false;
  for (const id of a.keys()) if (!b.has(id)) return false;
  return true;
}
