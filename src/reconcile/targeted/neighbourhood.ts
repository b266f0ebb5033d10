/**
 * The neighbourhood of a change: every platform object and every desired record the plan of
 * the changed identities depends on, read without listing the platform.
 *
 * It is closed under the relations the planner's matching follows (match.ts):
 * - an identity (a source externalId) → its platform object: the ledger's id (GET by id),
 *   else `externalId eq` (a create sent but not confirmed, an object carrying the id);
 * - a desired user or group → the platform objects holding its name (`userName eq` /
 *   `displayName eq`, and the lower-cased name for servers comparing case-exactly);
 * - a platform object → the identities owning it (ledger, platform externalId) and the
 *   desired object whose name it holds;
 * - a group → the users whose membership in it differs between the source and the platform
 *   (members mapped through the ledger).
 * So each platform object read meets its true desired counterpart, or truly none, and each
 * desired record meets every platform object that could be matched to it.
 */
import { nameKey } from '../../identity/canonical-name.ts';
import { ErrorCodes, isSyncError } from '../../errors.ts';
import { eqFilter, orFilter } from '../../platform/scim/filter.ts';
import type { ResourceType, ScimGroup, ScimUser } from '../../platform/scim/types.ts';
import type { Ledger, ObjectKind } from '../ledger.ts';
import type { ScimTarget } from '../target.ts';
import type { DesiredLookup } from './desired-cache.ts';
import type { DeferReason, TargetedReads } from './types.ts';

/** Thrown inside the targeted planner when it cannot decide locally. */
export class Deferral extends Error {
  readonly reason: DeferReason;
  readonly detail: string;
  constructor(reason: DeferReason, detail: string) {
    super(detail);
    this.reason = reason;
    this.detail = detail;
  }
}

export interface Neighbourhood {
  /** Platform users and groups read, by id. */
  users: Map<string, ScimUser>;
  groups: Map<string, ScimGroup>;
  /** Source externalIds whose platform objects and names were looked up. */
  userIdentities: Set<string>;
  groupIdentities: Set<string>;
  reads: TargetedReads;
}

export interface NeighbourhoodInput {
  target: ScimTarget;
  ledger: Ledger;
  desired: DesiredLookup;
  affected: { users: readonly string[]; groups: readonly string[] };
  maxGroupMembers: number;
  maxIdentities: number;
  signal?: AbortSignal | undefined;
}

/** Lookups run at once within one round of the closure. */
const READ_CONCURRENCY = 8;

type Bucket = keyof TargetedReads;

export function emptyNeighbourhood(): Neighbourhood {
  return {
    users: new Map(),
    groups: new Map(),
    userIdentities: new Set(),
    groupIdentities: new Set(),
    reads: { users: 0, memberships: 0 },
  };
}

/** Fills `n` (given by the caller, so the reads spent are known when this throws). */
export async function readNeighbourhood(input: NeighbourhoodInput, n: Neighbourhood): Promise<void> {
  const { ledger, desired } = input;
  const io = reader(input, n);

  // 1. Groups: the affected ones, and the groups of a joiner (no account yet: its memberships are all new).
  const groupSeeds = new Set(input.affected.groups);
  for (const u of input.affected.users) if (ledger.idFor('user', u) === undefined) for (const g of desired.groupsOf(u)) groupSeeds.add(g);
  await close(groupSeeds, n.groupIdentities, n, input, (ext) => lookUpGroup(ext, io, n, desired, ledger, input.maxGroupMembers));

  // 2. The changed users.
  await close(new Set(input.affected.users), n.userIdentities, n, input, (ext) => lookUpUser(ext, io, n, desired, ledger, 'users'));

  // 3. Users whose membership in one of these groups differs between the source and the platform.
  const movers = membershipDifferences(n, desired, ledger);
  await close(movers, n.userIdentities, n, input, (ext) => lookUpUser(ext, io, n, desired, ledger, 'memberships'));
}

interface Reader {
  get<T extends ScimUser | ScimGroup>(type: ResourceType, id: string, bucket: Bucket): Promise<T | undefined>;
  query<T extends ScimUser | ScimGroup>(type: ResourceType, filter: string, bucket: Bucket): Promise<T[]>;
}

function reader(input: NeighbourhoodInput, n: Neighbourhood): Reader {
  return {
    get: async (type, id, bucket) => {
      n.reads[bucket]++;
      return input.target.get(type, id, input.signal);
    },
    query: async (type, filter, bucket) => {
      n.reads[bucket]++;
      return input.target.query(type, filter, input.signal);
    },
  };
}

/**
 * Looks up identities until no new one turns up: each lookup returns the identities it
 * reached, which are looked up in the next round.
 */
async function close(
  seeds: Set<string>,
  done: Set<string>,
  n: Neighbourhood,
  input: NeighbourhoodInput,
  lookUp: (ext: string) => Promise<Iterable<string>>,
): Promise<void> {
  let round = [...seeds].filter((x) => !done.has(x));
  const total = (): number => n.userIdentities.size + n.groupIdentities.size;
  while (round.length > 0) {
    for (const ext of round) done.add(ext);
    if (total() > input.maxIdentities) {
      throw new Deferral('neighbourhood-too-large', `the change reaches more than ${input.maxIdentities} identities`);
    }
    const next = new Set<string>();
    let i = 0;
    const worker = async (): Promise<void> => {
      while (i < round.length) {
        const ext = round[i++] as string;
        for (const x of await lookUp(ext)) if (!done.has(x)) next.add(x);
      }
    };
    await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, round.length) }, worker));
    round = [...next];
  }
}

/** The platform object(s) of an identity: the ledger's, else whatever carries its externalId. */
async function objectsOf<T extends ScimUser | ScimGroup>(
  kind: ObjectKind,
  ext: string,
  io: Reader,
  ledger: Ledger,
  bucket: Bucket,
): Promise<T[]> {
  const type: ResourceType = kind === 'user' ? 'Users' : 'Groups';
  const id = ledger.idFor(kind, ext);
  if (id !== undefined) {
    const found = await io.get<T>(type, id, bucket);
    if (found !== undefined) return [found];
  }
  return (await io.query<T>(type, eqFilter('externalId', ext), bucket)).filter((p) => p.externalId === ext);
}

/**
 * The spellings a server's `eq` might need to find a name held under the same `nameKey`:
 * composed and decomposed (NFC/NFD), as given, lower- and upper-cased (`straße` and
 * `STRASSE` are one name; a case-insensitive `eq` finds `Strasse` from `STRASSE`).
 */
export function nameSpellings(name: string): string[] {
  const cased = [name, name.toLowerCase(), name.toUpperCase(), name.toUpperCase().toLowerCase()];
  return [...new Set(cased.flatMap((s) => [s.normalize('NFC'), s.normalize('NFD')]))];
}

/**
 * Platform objects whose name has the same key as `name`: one request asking for every
 * spelling (`or`); a server that refuses `or` is asked once per spelling.
 */
async function holdersOf<T extends ScimUser | ScimGroup>(
  type: ResourceType,
  attr: 'userName' | 'displayName',
  name: string,
  io: Reader,
  bucket: Bucket,
): Promise<T[]> {
  const key = nameKey(name);
  const spellings = nameSpellings(name);
  let found: T[];
  try {
    found = await io.query<T>(
      type,
      spellings.length === 1 ? eqFilter(attr, name) : orFilter(...spellings.map((s) => eqFilter(attr, s))),
      bucket,
    );
  } catch (e) {
    if (spellings.length === 1 || !isSyncError(e) || e.code !== ErrorCodes.REJECTED) throw e;
    found = [];
    for (const s of spellings) found.push(...(await io.query<T>(type, eqFilter(attr, s), bucket)));
  }
  const seen = new Set<string>();
  return found.filter((p) => {
    const v = (p as Record<string, unknown>)[attr];
    if (seen.has(p.id) || typeof v !== 'string' || nameKey(v) !== key) return false;
    seen.add(p.id);
    return true;
  });
}

function ownersOf(kind: ObjectKind, p: ScimUser | ScimGroup, ledger: Ledger): string[] {
  const out: string[] = [];
  const l = ledger.get(kind, p.id)?.externalId;
  if (l !== undefined) out.push(l);
  if (typeof p.externalId === 'string' && p.externalId !== '') out.push(p.externalId);
  return out;
}

async function lookUpUser(
  ext: string,
  io: Reader,
  n: Neighbourhood,
  desired: DesiredLookup,
  ledger: Ledger,
  bucket: Bucket,
): Promise<string[]> {
  const found = await objectsOf<ScimUser>('user', ext, io, ledger, bucket);
  const d = desired.user(ext);
  if (d !== undefined) found.push(...(await holdersOf<ScimUser>('Users', 'userName', d.userName, io, bucket)));
  const reached: string[] = [];
  for (const p of found) {
    if (n.users.has(p.id)) continue;
    n.users.set(p.id, p);
    reached.push(...ownersOf('user', p, ledger));
    const byName = desired.userByNameKey(nameKey(p.userName));
    if (byName !== undefined) reached.push(byName);
  }
  return reached;
}

async function lookUpGroup(
  ext: string,
  io: Reader,
  n: Neighbourhood,
  desired: DesiredLookup,
  ledger: Ledger,
  maxMembers: number,
): Promise<string[]> {
  const found = await objectsOf<ScimGroup>('group', ext, io, ledger, 'memberships');
  const d = desired.group(ext);
  if (d !== undefined) found.push(...(await holdersOf<ScimGroup>('Groups', 'displayName', d.displayName, io, 'memberships')));
  const reached: string[] = [];
  for (const p of found) {
    if (n.groups.has(p.id)) continue;
    const size = p.members?.length ?? 0;
    if (size > maxMembers || (d?.members.length ?? 0) > maxMembers) {
      throw new Deferral('group-too-large', `group ${p.displayName} has ${size} members, more than the bound of ${maxMembers}`);
    }
    n.groups.set(p.id, p);
    reached.push(...ownersOf('group', p, ledger));
    const byName = desired.groupByNameKey(nameKey(p.displayName));
    if (byName !== undefined) reached.push(byName);
  }
  return reached;
}

/**
 * Users whose membership differs between a desired group and the platform groups it may be
 * matched to (by ledger, externalId or name): platform members (through the ledger) the
 * source does not list, and source members the platform group does not hold. A member the
 * ledger does not know is not planned here (it is kept, as by a full plan that cannot place it).
 */
function membershipDifferences(n: Neighbourhood, desired: DesiredLookup, ledger: Ledger): Set<string> {
  const out = new Set<string>();
  const related = new Map<string, Set<string>>(); // desired group ext → platform member exts
  const relatedTo = (p: ScimGroup): string[] => {
    const exts = new Set(ownersOf('group', p, ledger));
    const byName = desired.groupByNameKey(nameKey(p.displayName));
    if (byName !== undefined) exts.add(byName);
    return [...exts].filter((e) => desired.group(e) !== undefined);
  };
  for (const p of n.groups.values()) {
    const memberExts = (p.members ?? []).map((m) => ledger.get('user', m.value)?.externalId).filter((x): x is string => x !== undefined);
    const groups = relatedTo(p);
    const wanted = new Set(groups.flatMap((g) => desired.group(g)?.members ?? []));
    for (const e of memberExts) if (!wanted.has(e)) out.add(e);
    for (const g of groups) {
      const set = related.get(g) ?? new Set<string>();
      for (const e of memberExts) set.add(e);
      related.set(g, set);
    }
  }
  for (const g of n.groupIdentities) {
    const d = desired.group(g);
    if (d === undefined) continue;
    const held = related.get(g) ?? new Set<string>();
    for (const m of d.members) if (!held.has(m)) out.add(m);
  }
  return out;
}
