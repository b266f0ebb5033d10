/**
 * The directory changes a change-propagation benchmark makes, and the platform writes each one
 * must cause. Independent of the directory: a mix of joiners, leavers disabled, leavers
 * deleted, renames, attribute changes and group moves over distinct users, in a seeded random
 * order; the directory-specific driver (e.g. bench/lib/ldap-change-driver.ts) carries them
 * out and fills in the effects. Effects are matched against the simulator's request log
 * (bench/lib/request-log.ts) by externalId.
 */
import { mulberry32 } from '../../src/simulator/prng.ts';
import type { LoggedRequest } from './request-log.ts';

export type ChangeKind = 'joiner' | 'leaver-disabled' | 'leaver-deleted' | 'rename' | 'attribute' | 'group-move';

/** Shares of each kind, in this order; they add up to 1. */
export const CHANGE_MIX: ReadonlyArray<readonly [ChangeKind, number]> = [
  ['joiner', 0.2],
  ['leaver-disabled', 0.1],
  ['leaver-deleted', 0.05],
  ['rename', 0.2],
  ['attribute', 0.25],
  ['group-move', 0.2],
];

export type Effect =
  | { type: 'create'; user: string }
  | { type: 'user-write'; user: string }
  | { type: 'deprovision'; user: string }
  | { type: 'member-add'; group: string; user: string }
  | { type: 'member-remove'; group: string; user: string };

export interface PlannedChange {
  seq: number;
  kind: ChangeKind;
  /** Index of the existing user it changes (joiners: the joiner's own number). */
  index: number;
}

export interface DoneChange extends PlannedChange {
  /** externalId of the user concerned. */
  user: string;
  /** Epoch ms before the first directory operation of the change. */
  startedAt: number;
  /** Epoch ms when the directory accepted its last operation: propagation is timed from here. */
  at: number;
  /** Platform writes the change must cause through the change path. */
  effects: Effect[];
  /** Writes only a full reconcile causes (what the directory's change mechanism cannot see). */
  blindEffects: Effect[];
}

/** Carries out planned changes on one kind of directory. */
export interface ChangeDriver {
  connect(): Promise<void>;
  apply(p: PlannedChange): Promise<DoneChange>;
  close(): Promise<void>;
}

/** `count` changes over distinct users drawn from [0, users), kinds in CHANGE_MIX proportions, shuffled. */
export function planChanges(count: number, users: number, seed = 42): PlannedChange[] {
  const rand = mulberry32(seed);
  const kinds: ChangeKind[] = [];
  let assigned = 0;
  CHANGE_MIX.forEach(([kind, share], k) => {
    const n = k === CHANGE_MIX.length - 1 ? count - assigned : Math.round(count * share);
    for (let j = 0; j < n; j++) kinds.push(kind);
    assigned += n;
  });
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [kinds[i], kinds[j]] = [kinds[j] as ChangeKind, kinds[i] as ChangeKind];
  }
  const used = new Set<number>();
  let joiners = 0;
  return kinds.map((kind, seq) => {
    if (kind === 'joiner') return { seq, kind, index: joiners++ };
    let index: number;
    do index = Math.floor(rand() * users);
    while (used.has(index));
    used.add(index);
    return { seq, kind, index };
  });
}

const ok = (r: LoggedRequest): boolean => r.status >= 200 && r.status < 300;

/** Whether a logged platform request is (one of) the write(s) an effect needs. */
export function satisfies(r: LoggedRequest, e: Effect): boolean {
  if (!ok(r)) return false;
  switch (e.type) {
    case 'create':
      return r.res === 'Users' && r.method === 'POST' && !r.item && r.user === e.user;
    case 'user-write':
      return r.res === 'Users' && r.item && (r.method === 'PATCH' || r.method === 'PUT') && r.user === e.user;
    case 'deprovision':
      return r.res === 'Users' && r.item && r.user === e.user && (r.method === 'DELETE' || r.active === false);
    case 'member-add':
      return r.res === 'Groups' && r.group === e.group && ((r.add?.includes(e.user) ?? false) || (r.members?.includes(e.user) ?? false));
    case 'member-remove':
      return (
        r.res === 'Groups' &&
        r.group === e.group &&
        ((r.remove?.includes(e.user) ?? false) || (r.members !== undefined && !r.members.includes(e.user)))
      );
  }
}

/**
 * Matches the log against the changes: for each effect, the first satisfying request at or
 * after the change began. Returns, per change, when its last effect was acknowledged
 * (undefined while any is missing).
 */
export class PropagationTracker {
  private readonly pending = new Map<number, { change: DoneChange; open: Effect[]; last: number }>();
  readonly done = new Map<number, number>();

  private readonly blind: boolean;
  /** Everything fed so far: a change added late still finds writes that preceded its add(). */
  private readonly history: LoggedRequest[] = [];

  constructor(blind: boolean) {
    this.blind = blind;
  }

  add(change: DoneChange): void {
    const open = [...(this.blind ? change.blindEffects : change.effects)];
    if (open.length === 0) return;
    this.pending.set(change.seq, { change, open, last: 0 });
    this.match(this.history, [change.seq]);
  }

  feed(requests: LoggedRequest[]): void {
    for (const r of requests) this.history.push(r);
    this.match(requests, [...this.pending.keys()]);
  }

  private match(requests: LoggedRequest[], seqs: number[]): void {
    for (const r of requests) {
      for (const seq of seqs) {
        const p = this.pending.get(seq);
        if (p === undefined) continue;
        if (r.t < p.change.startedAt) continue;
        const before = p.open.length;
        p.open = p.open.filter((e) => !satisfies(r, e));
        if (p.open.length < before) p.last = Math.max(p.last, r.t);
        if (p.open.length === 0) {
          this.done.set(seq, p.last);
          this.pending.delete(seq);
        }
      }
    }
  }

  get outstanding(): number {
    return this.pending.size;
  }

  /** The changes still waiting, with the effects they miss. */
  missing(): { change: DoneChange; open: Effect[] }[] {
    return [...this.pending.values()].map(({ change, open }) => ({ change, open }));
  }
}

export function percentile(sorted: number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}
