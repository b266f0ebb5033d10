/**
 * Renames that land in one run. A new userName (or group displayName) may be held by another
 * platform object: when that object is itself renaming away in the same plan (a swap, a
 * cycle, or the alice case where a new hire takes the name an existing employee leaves),
 * every object involved is first given a temporary name (apply phase `renames`), which frees
 * all their old names before any final name is written. When the holder is not moving, the
 * change cannot land: it is reported (skipped) instead of failing with a 409 on every run.
 * Pure.
 */
import { createHash } from 'node:crypto';
import { nameKey } from '../identity/canonical-name.ts';

export interface RenameRequest {
  /** Platform id of the object being renamed. */
  id: string;
  to: string;
}

export interface NameClaim {
  /** Source externalId of an object to create with this name. */
  ext: string;
  name: string;
}

export interface Holder {
  id: string;
}

export interface RenameOutcome {
  /** Platform id → temporary name to set first. */
  via: Map<string, string>;
  /** Platform id → holder that blocks its rename (the name change is left out). */
  blockedRenames: Map<string, Holder>;
  /** Source externalId → holder that blocks its create. */
  blockedCreates: Map<string, Holder>;
  /** Of the `freed` objects, those whose name a rename or create that lands takes (their delete must run first). */
  freedTaken: Set<string>;
}

/**
 * `freed`: ids of objects this run deletes; they do not hold their names against a rename or
 * create of the same run, and `freedTaken` says which of them one takes.
 */
export function planRenames<H extends Holder>(
  renames: RenameRequest[],
  creates: NameClaim[],
  allHoldersOf: (key: string) => H[],
  tempName: (id: string, to: string) => string,
  freed: ReadonlySet<string> = new Set(),
): RenameOutcome {
  const freedTaken = new Set<string>();
  const take = (key: string): void => {
    for (const h of allHoldersOf(key)) if (freed.has(h.id)) freedTaken.add(h.id);
  };
  const holdersOf = (key: string): H[] => allHoldersOf(key).filter((h) => !freed.has(h.id));
  const moving = new Set(renames.map((r) => r.id));
  const blockedRenames = new Map<string, Holder>();
  // A blocked rename does not move, which may block another: repeat until nothing changes.
  for (let changed = true; changed; ) {
    changed = false;
    for (const r of renames) {
      if (!moving.has(r.id)) continue;
      const stuck = holdersOf(nameKey(r.to)).find((h) => h.id !== r.id && !moving.has(h.id));
      if (stuck) {
        moving.delete(r.id);
        blockedRenames.set(r.id, stuck);
        changed = true;
      }
    }
  }
  const temp = new Set<string>();
  for (const r of renames) {
    if (!moving.has(r.id)) continue;
    take(nameKey(r.to));
    const others = holdersOf(nameKey(r.to)).filter((h) => h.id !== r.id);
    if (others.length > 0) {
      temp.add(r.id);
      for (const h of others) temp.add(h.id);
    }
  }
  const blockedCreates = new Map<string, Holder>();
  for (const c of creates) {
    const holders = holdersOf(nameKey(c.name));
    const stuck = holders.find((h) => !moving.has(h.id));
    if (stuck) blockedCreates.set(c.ext, stuck);
    else {
      for (const h of holders) temp.add(h.id);
      take(nameKey(c.name));
    }
  }
  const to = new Map(renames.map((r) => [r.id, r.to]));
  const via = new Map([...temp].map((id) => [id, tempName(id, to.get(id) ?? '')]));
  return { via, blockedRenames, blockedCreates, freedTaken };
}

function token(id: string): string {
  return createHash('sha256').update(id).digest('hex').slice(0, 8);
}

/** Deterministic (a crash between the two steps converges on the next run), and a valid e-mail when the name is one. */
export function tempUserName(id: string, to: string): string {
  return `renaming-${token(id)}.${to}`;
}

export function tempGroupName(id: string, to: string): string {
  return `${to} (renaming ${token(id)})`;
}
