/**
 * The change path of one tenant: ask the source what changed since the cursor, coalesce what
 * arrives within a short window, apply it to the cached desired state, plan it with the
 * targeted reconcile, and apply that plan under the tenant's right to write (in the daemon its
 * reconcile lease with a fencing token). What cannot be decided locally, and every full read
 * the source answers with, is left to a full reconcile, which the loop requests.
 *
 * The cursor is saved only after the batch's writes were acknowledged (or a full reconcile
 * was requested for them): a crash before that reads the same changes again, which is safe
 * because they are complete records.
 */
import type { ProvisioningConfig } from '../../config/schema.ts';
import type { Logger } from '../../observability/logger.ts';
import { sleep } from '../../platform/retry.ts';
import type { UserAttributeTarget } from '../../platform/user-attributes.ts';
import { deltaSize, type ChangeSource, type SourceChanges, type SourceDelta } from '../../sources/changes.ts';
import { Ledger, type LedgerStore } from '../ledger.ts';
import type { Plan } from '../plan-types.ts';
import type { ScimTarget } from '../target.ts';
import {
  applyDelta,
  DesiredCache,
  planTargeted as defaultPlanTargeted,
  type TargetedInput,
  type TargetedOutcome,
} from '../targeted/index.ts';
import { checkBurst, destructiveCounts, holdDestructive, type BurstStore } from './burst-guard.ts';
import { mergeDeltas } from './coalesce.ts';
import { changeMetrics } from './metrics.ts';

/** What a batch may do while it writes: stop when `signal` aborts; `assertHeld` throws once the right to write is lost. */
export interface WriteScope {
  signal: AbortSignal;
  assertHeld(): Promise<void>;
}

export interface AppliedBatch {
  /** Tasks the platform acknowledged, and those that failed. */
  writes: number;
  failed: number;
}

/** How the host lets a batch write (the daemon: lease, fencing token, quarantine; `watch`: in-process). */
export interface ChangeWriter {
  /** Runs `work` while the tenant may be written; `busy` (a full reconcile runs) or `quarantined` otherwise. */
  exclusive<T>(work: (scope: WriteScope) => Promise<T>): Promise<T | 'busy' | 'quarantined'>;
  /** Applies a plan (write-ahead ledger, provisioning log) and reports what reached the platform. */
  apply(plan: Plan, ledger: Ledger, scope: WriteScope, runId: string): Promise<AppliedBatch>;
}

export interface CursorStore {
  load(): Promise<string | undefined>;
  save(cursor: string): Promise<void>;
}

export interface ChangeLoopDeps {
  tenant: string;
  source: ChangeSource;
  config: ProvisioningConfig;
  /** Read-only view of the platform, for planning. */
  target: ScimTarget;
  attributes?: UserAttributeTarget | undefined;
  ledgerStore: LedgerStore;
  cursor: CursorStore;
  burst: BurstStore;
  writer: ChangeWriter;
  /**
   * Asks for a full reconcile (the daemon queues one; `watch` runs one). `code` is stable (a
   * defer reason, a full-read reason in kebab case, `burst-held` or `apply-failed`); `detail`
   * may name people.
   */
  requestFull(code: string, detail?: string): Promise<void>;
  logger: Logger;
  planTargeted?: (input: TargetedInput) => Promise<TargetedOutcome>;
  now?: () => number;
}

export type BatchResult =
  | { kind: 'idle' }
  | { kind: 'full'; reason: string; detail?: string | undefined }
  | { kind: 'applied'; runId: string; identities: number; writes: number; failed: number; held: string[] }
  | { kind: 'deferred'; reason: string; detail: string; identities: number }
  | { kind: 'busy' }
  | { kind: 'quarantined' };

/**
 * How long a delta waits for more changes to the same people before it is applied: until its
 * newest change is `coalesceMs` old, by the time the directory gave it (`changedAt`), or from
 * now for a change without one. A change that waited for the poll already has had its window.
 */
export function coalesceWait(delta: SourceDelta, coalesceMs: number, now: number): number {
  if (deltaSize(delta) === 0 || coalesceMs <= 0) return 0;
  const ids = [
    ...delta.users.upserted.map((u) => u.externalId),
    ...delta.users.removed,
    ...delta.groups.upserted.map((g) => g.externalId),
    ...delta.groups.removed,
  ];
  let newest = -Infinity;
  for (const id of ids) {
    const at = delta.changedAt[id];
    if (at === undefined) return coalesceMs;
    if (at > newest) newest = at;
  }
  if (ids.length === 0) return coalesceMs;
  return Math.min(coalesceMs, Math.max(0, coalesceMs - (now - newest)));
}

/** Total changed identities of a delta (its users and groups). */
const sizeOf = (a: { users: readonly string[]; groups: readonly string[] }): number => a.users.length + a.groups.length;

export class ChangeLoop {
  private readonly deps: ChangeLoopDeps;
  private readonly now: () => number;
  private desired: DesiredCache | undefined;
  private cursor: string | undefined;
  private roundStartedAt: number | undefined;
  private loaded = false;
  private batches = 0;
  private pending: { delta: SourceDelta; detectedAt: number } | undefined;

  constructor(deps: ChangeLoopDeps) {
    this.deps = deps;
    this.now = deps.now ?? Date.now;
  }

  /** The mechanism's poll interval, or provisioning.changes.pollIntervalMs when set. */
  get pollIntervalMs(): number {
    return this.deps.config.changes.pollIntervalMs ?? this.deps.source.changeMechanism()?.pollIntervalMs ?? 5_000;
  }

  /**
   * How long to wait before the next round: polls start every interval, so a batch that took
   * a while is not followed by a whole interval more (a failed round waits the whole interval).
   */
  untilNextPoll(failed = false): number {
    if (failed || this.roundStartedAt === undefined) return this.pollIntervalMs;
    return Math.min(this.pollIntervalMs, Math.max(0, this.pollIntervalMs - (this.now() - this.roundStartedAt)));
  }

  /** One round: ask for changes (coalescing what follows within the window) and handle them. */
  async pollOnce(signal?: AbortSignal): Promise<BatchResult> {
    const { source, config, logger } = this.deps;
    this.roundStartedAt = this.now();
    if (!this.loaded) {
      this.cursor = await this.deps.cursor.load();
      this.loaded = true;
    }
    // A saved cursor without a cache (a restart): the deltas since the cursor need the whole
    // state to be planned against; a complete read gives it (records are current either way).
    if (this.cursor !== undefined && this.desired === undefined) this.desired = DesiredCache.from(await source.read(signal));
    const detectedAt = this.pending?.detectedAt ?? this.now();
    // A batch that could not be applied yet (busy, quarantined, failed) is kept and merged with
    // what changed since: the source is asked from the batch's cursor, the saved one stays put.
    const pending = this.pending?.delta;
    this.pending = undefined;
    let answer: SourceChanges = await source.changes(pending?.cursor ?? this.cursor, signal);
    if (answer.kind === 'delta' && pending) answer = mergeDeltas(pending, answer);
    const coalesce = answer.kind === 'delta' && !pending ? coalesceWait(answer, config.changes.coalesceMs, this.now()) : 0;
    if (answer.kind === 'delta' && coalesce > 0) {
      await sleep(coalesce, signal);
      const more = await source.changes(answer.cursor, signal);
      answer = more.kind === 'full' ? more : mergeDeltas(answer, more);
    }
    if (answer.kind === 'full') {
      this.desired = DesiredCache.from(answer.state);
      logger.info(
        { reason: answer.reason, detail: answer.detail },
        'change stream: the source answered with a full read; a full reconcile applies it',
      );
      const code = answer.reason.replaceAll(' ', '-');
      changeMetrics.deferred.inc({ tenant: this.deps.tenant, reason: code });
      await this.deps.requestFull(code, answer.detail);
      await this.saveCursor(answer.cursor);
      return { kind: 'full', reason: answer.reason, detail: answer.detail };
    }
    if (deltaSize(answer) === 0) {
      if (answer.cursor !== this.cursor) await this.saveCursor(answer.cursor);
      return { kind: 'idle' };
    }
    const delta = answer;
    try {
      const result = await this.applyDelta(delta, detectedAt, signal);
      if (result.kind === 'busy' || result.kind === 'quarantined') this.pending = { delta, detectedAt };
      return result;
    } catch (e) {
      this.pending = { delta, detectedAt };
      throw e;
    }
  }

  private async saveCursor(cursor: string): Promise<void> {
    await this.deps.cursor.save(cursor);
    this.cursor = cursor;
  }

  private async applyDelta(delta: SourceDelta, detectedAt: number, signal?: AbortSignal): Promise<BatchResult> {
    const { tenant, config, logger } = this.deps;
    this.desired ??= DesiredCache.from(await this.deps.source.read(signal));
    // Applying the same complete records again (a retried batch) changes nothing.
    const affected = applyDelta(this.desired, delta);
    const desired = this.desired.state;
    const identities = sizeOf(affected);
    const runId = `${this.now().toString(36)}-c${(++this.batches).toString(36)}`;
    const plan = this.deps.planTargeted ?? defaultPlanTargeted;
    const began = this.now();
    let planMs = 0;
    const outcome = await this.deps.writer.exclusive(async (scope) => {
      const planBegan = this.now();
      const ledger = await Ledger.load(this.deps.ledgerStore);
      const managed = ledger.count('user') + ledger.count('group');
      const targeted = await plan({
        tenant,
        source: this.deps.source.describe,
        config,
        target: this.deps.target,
        attributes: this.deps.attributes,
        ledger,
        desired,
        affected,
        managedAtLastFull: managed,
        maxGroupMembers: config.changes.maxGroupMembers,
        allowDeletes: false,
        now: this.now(),
        signal: AbortSignal.any([scope.signal, ...(signal ? [signal] : [])]),
      });
      if (targeted.kind === 'defer') return targeted;
      const counts = destructiveCounts(targeted.plan);
      const window = this.now() - config.changes.burstWindowMinutes * 60_000;
      const hold = await this.deps.burst.hold();
      const members = desired.groups.reduce((n, g) => n + g.members.length, 0);
      const verdict = checkBurst(counts, await this.deps.burst.appliedSince(window), { managed, members }, config, hold);
      if (verdict.held) holdDestructive(targeted.plan, verdict.reasons);
      await scope.assertHeld();
      planMs = this.now() - planBegan;
      const applied = await this.deps.writer.apply(targeted.plan, ledger, scope, runId);
      if (!verdict.held) await this.deps.burst.recordApplied(this.now(), counts);
      else await this.deps.burst.setHold({ ...verdict.window, reasons: verdict.reasons, at: hold?.at ?? this.now() });
      return { kind: 'plan' as const, applied, reads: targeted.reads, held: verdict.held ? verdict.reasons : [] };
    });
    if (outcome === 'busy' || outcome === 'quarantined') return { kind: outcome };
    if (outcome.kind === 'defer') {
      changeMetrics.changes.inc({ tenant, outcome: 'deferred' }, identities);
      changeMetrics.deferred.inc({ tenant, reason: outcome.reason });
      logger.info({ reason: outcome.reason, detail: outcome.detail, identities }, 'change stream: a change is left to a full reconcile');
      await this.deps.requestFull(outcome.reason, outcome.detail);
      await this.saveCursor(delta.cursor);
      return { kind: 'deferred', reason: outcome.reason, detail: outcome.detail, identities };
    }
    const ackAt = this.now();
    if (outcome.held.length > 0) {
      changeMetrics.changes.inc({ tenant, outcome: 'held' }, identities);
      logger.warn(
        { reasons: outcome.held, identities },
        'change stream: destructive changes held by the guard (rolling window) until approve-deletes',
      );
      await this.deps.requestFull('burst-held', outcome.held.join('; '));
    } else changeMetrics.changes.inc({ tenant, outcome: outcome.applied.failed > 0 ? 'failed' : 'applied' }, identities);
    // A write that failed is not retried batch after batch: the full reconcile plans it again.
    if (outcome.applied.failed > 0) await this.deps.requestFull('apply-failed', `${outcome.applied.failed} writes failed`);
    // Timed for what reached the platform: a held batch's removals have not.
    if (outcome.held.length === 0)
      for (const id of [...affected.users, ...affected.groups])
        changeMetrics.propagation.observe({ tenant }, Math.max(0, ackAt - (delta.changedAt[id] ?? detectedAt)) / 1000);
    changeMetrics.requestsPerChange.observe(
      { tenant },
      (outcome.reads + outcome.applied.writes + outcome.applied.failed) / Math.max(1, identities),
    );
    await this.saveCursor(delta.cursor);
    logger.info(
      {
        runId,
        identities,
        writes: outcome.applied.writes,
        failed: outcome.applied.failed,
        reads: outcome.reads,
        held: outcome.held.length > 0,
        // Where the batch's time went: the targeted plan (platform reads), then the writes.
        planMs,
        batchMs: ackAt - began,
      },
      'change stream: changes applied',
    );
    return { kind: 'applied', runId, identities, writes: outcome.applied.writes, failed: outcome.applied.failed, held: outcome.held };
  }
}
