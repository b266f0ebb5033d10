/**
 * Global matching of source objects to platform objects (users or groups alike). Pure.
 *
 * 1. externalId claims, all of them before any name is looked at: first the ledger's record
 *    (what this tool created or adopted for that source id), then the platform's externalId.
 * 2. Rejected source entries (present but invalid) claim the platform objects their
 *    externalId names: those are protected, never matched by name to someone else.
 * 3. Name claims (userName / displayName, compared by `nameKey`: NFC and full case folding) for
 *    the source objects left, only of a platform object that no other in-source object (valid or
 *    rejected) owns and, with `identityIsForever` (users), that no other externalId owns at all,
 *    present or absent (ledger or platform): the name of an account whose owner left is *held*
 *    (`heldByAbsent`), not given to a newcomer. `handOverByName` lets such a name claim through,
 *    reported as a handover.
 * 4. Rejected entries' names protect the platform objects still unclaimed.
 * An account therefore never passes from one in-source person to another, nor (users) from an
 * absent person to a present one, except on purpose.
 */
import { nameKey } from '../identity/canonical-name.ts';
import type { SourceRejection } from '../identity/model.ts';
import type { Ledger, ObjectKind } from './ledger.ts';

export interface PlatformObject {
  id: string;
  externalId?: string | undefined;
}

export interface MatchInput<S, P extends PlatformObject> {
  kind: ObjectKind;
  /** Valid source objects, in and out of scope. */
  source: S[];
  extOf: (s: S) => string;
  nameOf: (s: S) => string;
  platform: P[];
  platformNameOf: (p: P) => string | undefined;
  ledger: Ledger;
  /** Rejections of this kind that carry an identity. */
  rejected: SourceRejection[];
  rejectedNameOf: (r: SourceRejection) => string | undefined;
  /**
   * An object owned by an externalId (ledger or platform) is never matched to another
   * externalId, whether its owner is in the source or not. Users: on; groups: off (a group
   * that left the source gives its name to the next group of that name).
   */
  identityIsForever?: boolean;
  /** With identityIsForever: a name claim may still take an object whose owners are all absent (a handover). */
  handOverByName?: boolean;
}

export interface Match<P> {
  platform: P;
  via: 'externalId' | 'name';
}

export interface MatchResult<P> {
  /** Source externalId → matched platform object. */
  matched: Map<string, Match<P>>;
  /** Platform id → source externalId that claimed it. */
  claimedBy: Map<string, string>;
  /** Platform id → the rejection protecting it. */
  protectedBy: Map<string, SourceRejection>;
  /** Platform id → source externalId it also belongs to (a second account of a matched person). */
  duplicates: Map<string, string>;
  /** Source externalId → platform object holding its name that it may not take. */
  nameHeldBy: Map<string, P>;
  /** Platform objects by `nameKey` of their name (all of them). */
  byName: MultiIndex<P>;
  /** Source externalId → the object holding its name, owned by someone absent from the source (not taken). */
  heldByAbsent: Map<string, { platform: P; owner: string }>;
  /** Source externalId → the absent owner whose object it took by name (handOverByName). */
  handovers: Map<string, string>;
  /** The externalId that owns a platform object (ledger first, then platform), if any. */
  ownerOf(p: P): string | undefined;
}

export function matchObjects<S, P extends PlatformObject>(input: MatchInput<S, P>): MatchResult<P> {
  const { ledger, kind } = input;
  const ledgerExt = (p: P): string | undefined => ledger.get(kind, p.id)?.externalId;
  const platformExt = (p: P): string | undefined => (typeof p.externalId === 'string' && p.externalId !== '' ? p.externalId : undefined);
  const inSource = new Set(input.source.map(input.extOf));
  const rejectedIds = new Set(input.rejected.map((r) => r.externalId).filter((x): x is string => x !== undefined));

  const byLedgerExt = new MultiIndex(input.platform, ledgerExt);
  const byPlatformExt = new MultiIndex(input.platform, platformExt);
  const byName = new MultiIndex(input.platform, (p) => {
    const name = input.platformNameOf(p);
    return name === undefined ? undefined : nameKey(name);
  });

  const matched = new Map<string, Match<P>>();
  const claimedBy = new Map<string, string>();
  const protectedBy = new Map<string, SourceRejection>();
  const duplicates = new Map<string, string>();
  const nameHeldBy = new Map<string, P>();
  const heldByAbsent = new Map<string, { platform: P; owner: string }>();
  const handovers = new Map<string, string>();
  const forever = input.identityIsForever === true;
  const ownerOf = (p: P): string | undefined => ledgerExt(p) ?? platformExt(p);
  /** Owned by an externalId other than `ext` that is absent from the source (neither valid nor rejected). */
  const absentOwner = (p: P, ext: string): string | undefined =>
    [ledgerExt(p), platformExt(p)].find((x) => x !== undefined && x !== ext && !inSource.has(x) && !rejectedIds.has(x));
  const claim = (ext: string, p: P, via: Match<P>['via']): void => {
    matched.set(ext, { platform: p, via });
    claimedBy.set(p.id, ext);
  };
  const free = (p: P): boolean => !claimedBy.has(p.id) && !protectedBy.has(p.id);
  /** Owned by an in-source object (valid or rejected) other than `ext`. */
  const ownedByOther = (p: P, ext: string | undefined): boolean =>
    [ledgerExt(p), platformExt(p)].some((x) => x !== undefined && x !== ext && (inSource.has(x) || rejectedIds.has(x)));

  // 1a. The ledger's record wins: it is what we created or adopted for that source id.
  for (const s of input.source) {
    const ext = input.extOf(s);
    const p = byLedgerExt.find(ext, free);
    if (p) claim(ext, p, 'externalId');
  }
  // 1b. Then the platform's externalId, unless the ledger gives that object to another in-source
  // id (identityIsForever: to another id at all — the ledger is what this tool knows).
  const ledgerGivesAway = (c: P, ext: string): boolean => {
    const l = ledgerExt(c);
    return forever && l !== undefined && l !== ext;
  };
  for (const s of input.source) {
    const ext = input.extOf(s);
    if (matched.has(ext)) continue;
    const p = byPlatformExt.find(ext, (c) => free(c) && !ownedByOther(c, ext) && !ledgerGivesAway(c, ext));
    if (p) claim(ext, p, 'externalId');
  }
  // 2. Rejected entries keep what their externalId names.
  for (const r of input.rejected) {
    if (r.externalId === undefined || inSource.has(r.externalId)) continue;
    for (const p of [...byLedgerExt.get(r.externalId), ...byPlatformExt.get(r.externalId)]) {
      if (free(p)) protectedBy.set(p.id, r);
    }
  }
  // 3. Names, for what is left.
  for (const s of input.source) {
    const ext = input.extOf(s);
    if (matched.has(ext)) continue;
    const name = nameKey(input.nameOf(s));
    const p = byName.find(name, (c) => free(c) && !ownedByOther(c, ext) && (!forever || absentOwner(c, ext) === undefined));
    if (p) {
      claim(ext, p, 'name');
      continue;
    }
    const held = forever ? byName.find(name, (c) => free(c) && !ownedByOther(c, ext) && absentOwner(c, ext) !== undefined) : undefined;
    if (held !== undefined) {
      const owner = absentOwner(held, ext) as string;
      if (input.handOverByName === true) {
        claim(ext, held, 'name');
        handovers.set(ext, owner);
        continue;
      }
      heldByAbsent.set(ext, { platform: held, owner });
    }
    const holder = byName.get(name)[0];
    if (holder !== undefined) nameHeldBy.set(ext, holder);
  }
  // 4. Rejected entries' names protect what is still unclaimed.
  for (const r of input.rejected) {
    const name = input.rejectedNameOf(r);
    if (name === undefined) continue;
    for (const p of byName.get(nameKey(name))) if (free(p)) protectedBy.set(p.id, r);
  }
  // Second accounts of a matched person: left alone, never deprovisioned as strangers.
  for (const p of input.platform) {
    if (!free(p)) continue;
    const owner = [ledgerExt(p), platformExt(p)].find((x) => x !== undefined && inSource.has(x));
    if (owner !== undefined) duplicates.set(p.id, owner);
  }
  return { matched, claimedBy, protectedBy, duplicates, nameHeldBy, byName, heldByAbsent, handovers, ownerOf };
}

/**
 * Objects by a key, most keys naming one object: the first is kept in a plain map, arrays
 * exist only for keys shared by several (100,000 one-element arrays cost real time and memory).
 */
export class MultiIndex<T> {
  private readonly first = new Map<string, T>();
  private readonly more = new Map<string, T[]>();

  constructor(items: Iterable<T>, key: (t: T) => string | undefined) {
    for (const it of items) {
      const k = key(it);
      if (k === undefined || k === '') continue;
      if (!this.first.has(k)) this.first.set(k, it);
      else {
        const list = this.more.get(k);
        if (list) list.push(it);
        else this.more.set(k, [it]);
      }
    }
  }

  get(k: string): T[] {
    const one = this.first.get(k);
    if (one === undefined) return [];
    const rest = this.more.get(k);
    return rest ? [one, ...rest] : [one];
  }

  find(k: string, pred: (t: T) => boolean): T | undefined {
    const one = this.first.get(k);
    if (one === undefined) return undefined;
    if (pred(one)) return one;
    return this.more.get(k)?.find(pred);
  }
}
