/**
 * The attribute step of planning, run right after the user plan from the same inputs: list
 * the definitions (one request), read the values of the users whose ledger copy is missing or
 * older than `userAttributeSync.rereadAfterHours` (one request each, bounded concurrency),
 * diff, and add the `attributes` section, the guard figures and the summary counts to the plan.
 * Only GET requests are made here. A refused or failing attribute API never stops the user
 * plan: it becomes an error of the attributes section (and of the run).
 */
import type { ProvisioningConfig } from '../../config/schema.ts';
import type { DesiredState } from '../../identity/model.ts';
import { isSyncError } from '../../errors.ts';
import type { ScimUser } from '../../platform/scim/types.ts';
import type { AttributeValue, StoredAttributeValue, UserAttributeTarget, UserAttributeType } from '../../platform/user-attributes.ts';
import type { Ledger } from '../ledger.ts';
import type { DeleteApproval, Plan } from '../plan-types.ts';
import { coerce } from './coerce.ts';
import { decideDefinitions, diffUsers, type UserValues } from './diff.ts';
import { mergeAttributeGuard } from './guard.ts';
import { attributeSubjects } from './subjects.ts';
import type { AttributePlan } from './types.ts';

export interface AttributePlanInput {
  target: UserAttributeTarget;
  desired: DesiredState;
  platformUsers: ScimUser[];
  ledger: Ledger;
  config: ProvisioningConfig;
  allowDeletes: boolean;
  /** An operator's approval bound to the held plan (daemon `approve-deletes`). */
  approval?: DeleteApproval | undefined;
  now: number;
  signal?: AbortSignal | undefined;
  /**
   * Users whose attributes the whole tenant syncs, when this plan covers only part of it (a
   * targeted reconcile): the base of `maxAttributeClearPercent`. Absent: the users planned here.
   */
  guardUsers?: number | undefined;
}

const HOUR_MS = 3_600_000;

export function emptyAttributePlan(): AttributePlan {
  return {
    definitions: { existing: [], create: [], update: [] },
    users: [],
    movers: [],
    rejected: [],
    skipped: [],
    errors: [],
    reads: { platform: 0, fromLedger: 0, newUsers: 0 },
    summary: {
      definitionsCreate: 0,
      definitionsUpdate: 0,
      usersChanged: 0,
      valuesSet: 0,
      valuesClear: 0,
      takeAways: 0,
      movers: 0,
      rejected: 0,
      skipped: 0,
      errors: 0,
    },
  };
}

export async function addAttributePlan(plan: Plan, input: AttributePlanInput): Promise<void> {
  const { config, ledger, target } = input;
  const attrs = emptyAttributePlan();
  const subjects = attributeSubjects(plan, input.desired, input.platformUsers, ledger, config);
  try {
    const decision = decideDefinitions(config.userAttributes, await target.listDefinitions(input.signal), (n) =>
      ledger.attributes.definition(n),
    );
    for (const name of decision.forget) ledger.attributes.forgetDefinition(name);
    // Remember every definition's id: if one is replaced on the platform (deleted and made again
    // under the same name), the values the ledger holds for it are stale and are read again.
    for (const e of decision.existing) {
      if (ledger.attributes.definition(e.name)?.id !== e.id)
        ledger.attributes.recordDefinition(e.name, { id: e.id, created: e.createdByTool });
    }
    const replaced = new Set(decision.forget);
    attrs.definitions = { existing: decision.existing, ...decision.plan };
    attrs.errors.push(...decision.errors);
    const typeOf = new Map(decision.synced.map((r) => [r.name, r.type]));
    const idToName = new Map(decision.existing.map((e) => [e.id, e.name]));
    const readable = decision.synced.filter((r) => !decision.fresh.has(r.name)).map((r) => r.name);
    const rereadMs = config.userAttributeSync.rereadAfterHours * HOUR_MS;

    const users: UserValues[] = [];
    const toRead: typeof subjects = [];
    for (const subject of subjects) {
      const nulls = Object.fromEntries(decision.synced.map((r) => [r.name, null]));
      if (subject.id === undefined) {
        users.push({ subject, current: nulls });
        attrs.reads.newUsers++;
        continue;
      }
      const state = ledger.attributes.state(subject.id);
      const fresh =
        state !== undefined && input.now - state.readAt < rereadMs && readable.every((n) => n in state.values && !replaced.has(n));
      if (readable.length > 0 && !fresh) {
        toRead.push(subject);
        continue;
      }
      const current = { ...nulls, ...pick(state?.values ?? {}, readable) };
      // Definitions created in this run are known to be unset: remember that, so the next run need not read.
      if (decision.fresh.size > 0) ledger.attributes.recordState(subject.id, { readAt: state?.readAt ?? input.now, values: current });
      users.push({ subject, current });
      attrs.reads.fromLedger++;
    }

    await forEachBounded(toRead, config.apply.concurrency, async (subject) => {
      const id = subject.id as string;
      let stored: StoredAttributeValue[];
      try {
        stored = await target.getValues(id, input.signal);
      } catch (e) {
        if (input.signal?.aborted || (isSyncError(e) && e.kind === 'fatal')) throw e;
        attrs.skipped.push({
          externalId: subject.user.externalId,
          userName: subject.user.userName,
          reason: `values could not be read: ${e instanceof Error ? e.message : String(e)}`,
        });
        return;
      }
      attrs.reads.platform++;
      const values: Record<string, AttributeValue | null> = Object.fromEntries(decision.synced.map((r) => [r.name, null]));
      for (const v of stored) {
        // By id; by name only when the platform gave no id (assumption 5 in docs/user-attributes.md).
        const name = v.attributeId !== undefined ? idToName.get(v.attributeId) : v.name;
        if (name === undefined || !readable.includes(name)) continue;
        values[name] = normalize(v.value, typeOf.get(name) as UserAttributeType);
      }
      ledger.attributes.recordState(id, { readAt: input.now, values });
      users.push({ subject, current: values });
    });

    const diff = diffUsers(decision.synced, users);
    attrs.users = diff.users;
    attrs.movers = diff.movers;
    attrs.rejected = diff.rejected;
  } catch (e) {
    if (input.signal?.aborted) throw e;
    // Fatal (401/403) or a failed definitions list: no attribute is synced this run; the user plan stands.
    const code = isSyncError(e) ? ` [${e.code}]` : '';
    attrs.definitions = { existing: [], create: [], update: [] };
    attrs.users = [];
    attrs.movers = [];
    attrs.rejected = [];
    attrs.errors.push({
      attribute: null,
      reason: `user attributes are not synced this run${code}: ${e instanceof Error ? e.message : String(e)}${isSyncError(e) && e.kind === 'fatal' ? ' (check platform.apiToken / platform.apiTokenFile)' : ''}`,
    });
  }
  // Stable order for people reading the plan and for tests.
  attrs.users.sort((a, b) => a.userName.localeCompare(b.userName));
  attrs.movers.sort((a, b) => a.userName.localeCompare(b.userName));
  attrs.summary = summarizeAttributes(attrs);
  plan.attributes = attrs;
  plan.guard = mergeAttributeGuard(plan.guard, {
    clears: attrs.summary.takeAways,
    usersAffected: attrs.users.filter((u) => u.changes.some((c) => c.takesAway)).length,
    users: input.guardUsers ?? subjects.length,
    limits: config.guards,
    allowDeletes: input.allowDeletes,
    approval: input.approval,
  });
  const values = attrs.summary.valuesSet + attrs.summary.valuesClear;
  plan.summary = {
    ...plan.summary,
    attributeDefinitions: attrs.summary.definitionsCreate + attrs.summary.definitionsUpdate,
    attributeUsers: attrs.summary.usersChanged,
    changes: plan.summary.changes + attrs.summary.definitionsCreate + attrs.summary.definitionsUpdate + values,
  };
}

export function summarizeAttributes(a: AttributePlan): AttributePlan['summary'] {
  const changes = a.users.flatMap((u) => u.changes);
  return {
    definitionsCreate: a.definitions.create.length,
    definitionsUpdate: a.definitions.update.length,
    usersChanged: a.users.length,
    valuesSet: changes.filter((c) => c.after !== null).length,
    valuesClear: changes.filter((c) => c.after === null).length,
    takeAways: changes.filter((c) => c.takesAway).length,
    movers: a.movers.length,
    rejected: a.rejected.length,
    skipped: a.skipped.length,
    errors: a.errors.length,
  };
}

/** A platform value in the form desired values take (so "42" and 42 of a number attribute compare equal). */
function normalize(raw: unknown, type: UserAttributeType): AttributeValue | null {
  const c = coerce(raw, type);
  return c.ok ? c.value : (raw as AttributeValue);
}

function pick(values: Record<string, AttributeValue | null>, names: string[]): Record<string, AttributeValue | null> {
  return Object.fromEntries(names.filter((n) => n in values).map((n) => [n, values[n] ?? null]));
}

/** Runs `fn` over `items`, at most `limit` at once; the first thrown error stops new work and is rethrown. */
async function forEachBounded<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed: unknown;
  const worker = async (): Promise<void> => {
    while (failed === undefined && next < items.length) {
      const item = items[next++] as T;
      try {
        await fn(item);
      } catch (e) {
        failed ??= e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failed !== undefined) throw failed;
}
