/**
 * Finding the object a create was about, when the server's answer does not say which one:
 * a 409 (it exists), a 201 without an id or body (it was created), a POST whose answer was
 * lost. Real servers make this hard: some compare `eq` case-sensitively, some refuse a
 * filter holding `"` or `\`, some ignore the filter. So the lookup goes step by step:
 *
 * 1. `externalId eq "…"` — an exact match is the object;
 * 2. `userName eq "…"` (groups: `displayName`) — matched case-insensitively, the exact
 *    spelling preferred;
 * 3. the same with the name lower-cased (servers comparing case-sensitively store the usual
 *    lower-case spelling);
 * 4. a full listing, matched the same way, when a filter was refused (400/501) or when the
 *    server said the object exists (`mustExist`) and no filter found it.
 *
 * Every candidate is re-checked here, whatever the server matched. More than one candidate
 * at the deciding step is E_AMBIGUOUS_MATCH: never guessed, the operator decides.
 */
import { nameKey } from '../../identity/canonical-name.ts';
import { ErrorCodes, SyncError, isSyncError } from '../../errors.ts';
import { eqFilter } from './filter.ts';
import type { ScimResource } from './types.ts';

export interface Wanted {
  externalId?: string | undefined;
  /** userName of a user, displayName of a group; undefined: by externalId only. */
  name?: string | undefined;
  nameAttr: 'userName' | 'displayName';
  /** e.g. `user alice@example.com`, for messages. */
  label: string;
}

export interface LookupIo<T extends ScimResource> {
  /** False when the server said it cannot filter: only the listing is used. */
  filterSupported: boolean;
  /** The candidates of one filter (every page of them). */
  query(filter: string): Promise<T[]>;
  listAll(): Promise<T[]>;
}

function ambiguous(who: Wanted, by: string, found: ScimResource[]): SyncError {
  const ids = found
    .slice(0, 5)
    .map((r) => r.id)
    .join(', ');
  return new SyncError(
    ErrorCodes.AMBIGUOUS_MATCH,
    'conflict',
    `${who.label}: ${found.length} platform objects match by ${by} (ids ${ids}); refusing to guess which one is meant — remove or rename the duplicates on the platform`,
  );
}

function nameOf(r: ScimResource, attr: string): string | undefined {
  const v = r[attr];
  return typeof v === 'string' ? v : undefined;
}

/** The one candidate that is the wanted object, undefined when none, E_AMBIGUOUS_MATCH when several. */
export function pickCandidate<T extends ScimResource>(candidates: readonly T[], who: Wanted): T | undefined {
  if (who.externalId !== undefined) {
    const byId = candidates.filter((r) => r.externalId === who.externalId);
    if (byId.length > 1) throw ambiguous(who, `externalId ${who.externalId}`, byId);
    if (byId[0] !== undefined) return byId[0];
  }
  if (who.name === undefined) return undefined;
  const want = nameKey(who.name);
  const byName = candidates.filter((r) => {
    const name = nameOf(r, who.nameAttr);
    return name !== undefined && nameKey(name) === want;
  });
  if (byName.length <= 1) return byName[0];
  const exact = byName.filter((r) => nameOf(r, who.nameAttr) === who.name);
  if (exact.length === 1) return exact[0];
  throw ambiguous(who, `${who.nameAttr} ${who.name} (by canonical name)`, exact.length > 1 ? exact : byName);
}

/** A filter the server refused or cannot run: fall back to listing. Anything else (auth, transient) propagates. */
function filterRefused(e: unknown): boolean {
  return isSyncError(e) && (e.code === ErrorCodes.REJECTED || e.code === ErrorCodes.UNSUPPORTED);
}

export async function resolveExisting<T extends ScimResource>(
  io: LookupIo<T>,
  who: Wanted,
  opts: { mustExist: boolean },
): Promise<T | undefined> {
  let refused = !io.filterSupported;
  const steps: string[] = [];
  if (who.externalId !== undefined) steps.push(eqFilter('externalId', who.externalId));
  if (who.name !== undefined) {
    steps.push(eqFilter(who.nameAttr, who.name));
    if (who.name.toLowerCase() !== who.name) steps.push(eqFilter(who.nameAttr, who.name.toLowerCase()));
  }
  for (const filter of refused ? [] : steps) {
    let candidates: T[];
    try {
      candidates = await io.query(filter);
    } catch (e) {
      if (!filterRefused(e)) throw e;
      refused = true;
      continue;
    }
    const hit = pickCandidate(candidates, who);
    if (hit !== undefined) return hit;
  }
  if (!refused && !opts.mustExist) return undefined;
  return pickCandidate(await io.listAll(), who);
}
