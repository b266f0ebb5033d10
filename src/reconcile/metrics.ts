/**
 * Provisioning metrics on the shared registry. They are updated only through
 * observability/instrument.ts, so a metric and its log line never drift apart.
 * Labels are closed sets (see the unions below) plus the configured tenant id.
 */
import { Counter, Gauge, Histogram } from 'prom-client';
import { METRIC_PREFIX, registry } from '../observability/metrics.ts';

const p = METRIC_PREFIX;

/** How one reconcile (or audit) run ended. */
/** `lease_lost`: the daemon's run lease was lost (a stalled replica fenced out); nothing more was applied by that run. */
export type RunResult = 'success' | 'partial' | 'failed' | 'guard_held' | 'skipped' | 'quarantined' | 'lease_lost';
export type ScimResource = 'user' | 'group';
export type ScimOperation = 'create' | 'adopt' | 'update' | 'reactivate' | 'deactivate' | 'delete' | 'members';
export type DriftKind = 'user_update' | 'user_reactivate' | 'group_update' | 'membership';
export type ObjectKind = 'user' | 'group';
/** Source counts: everything read, and what is left after the scoping filter. */
export type SourceObjectKind = 'user' | 'group' | 'user_in_scope' | 'group_in_scope';
export type JobKind = 'reconcile' | 'audit';
/** PlanWarning codes (plan-types.ts). */
export type WarningCode = 'listing-incomplete' | 'removal-not-converging' | 'unidentified-rejections' | 'confusable-name';

export const reconcileMetrics = {
  runs: new Counter({
    name: `${p}reconcile_runs_total`,
    help: 'Reconcile runs by result (success, partial, failed, guard_held, skipped, quarantined, lease_lost)',
    labelNames: ['tenant', 'result'] as const,
    registers: [registry],
  }),
  runDuration: new Histogram({
    name: `${p}reconcile_run_duration_seconds`,
    help: 'Wall-clock duration of a reconcile run (source read, platform listing, plan, apply)',
    labelNames: ['tenant'] as const,
    buckets: [1, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600], // seconds, up to 1 h
    registers: [registry],
  }),
  scimOperations: new Counter({
    name: `${p}scim_operations_total`,
    help: 'SCIM write operations applied, by resource, operation and result (ok, failed)',
    labelNames: ['tenant', 'resource', 'operation', 'result'] as const,
    registers: [registry],
  }),
  membersChanged: new Counter({
    name: `${p}scim_members_changed_total`,
    help: 'Group members added or removed',
    labelNames: ['tenant', 'direction'] as const,
    registers: [registry],
  }),
  managedObjects: new Gauge({
    name: `${p}managed_objects`,
    help: 'Objects this tool manages on the platform (ownership ledger), by kind',
    labelNames: ['tenant', 'kind'] as const,
    registers: [registry],
  }),
  unmanagedSkipped: new Gauge({
    name: `${p}unmanaged_skipped`,
    help: 'Source objects skipped in the latest plan because they match a platform object this tool does not manage (not in the ownership ledger), by kind',
    labelNames: ['tenant', 'kind'] as const,
    registers: [registry],
  }),
  drift: new Counter({
    name: `${p}drift_detected_total`,
    help: 'Changes planned for objects that already existed on the platform (drift from the source), by kind',
    labelNames: ['tenant', 'kind'] as const,
    registers: [registry],
  }),
  guardTrips: new Counter({
    name: `${p}guard_trips_total`,
    help: 'Plans whose destructive operations were held by the deletion guard',
    labelNames: ['tenant'] as const,
    registers: [registry],
  }),
  deletesHeld: new Gauge({
    name: `${p}deletes_held`,
    help: 'Deactivations and deletions held by the deletion guard in the latest plan (0 when not tripped)',
    labelNames: ['tenant'] as const,
    registers: [registry],
  }),
  quarantined: new Gauge({
    name: `${p}tenant_quarantined`,
    help: '1 while the tenant is quarantined (runs suspended after repeated fatal errors), else 0',
    labelNames: ['tenant'] as const,
    registers: [registry],
  }),
  lastSuccess: new Gauge({
    name: `${p}last_success_timestamp_seconds`,
    help: 'Unix time of the last run that ended with result success, by kind (reconcile, audit)',
    labelNames: ['tenant', 'kind'] as const,
    registers: [registry],
  }),
  sourceObjects: new Gauge({
    name: `${p}source_objects`,
    help: 'Objects read from the source in the latest plan, by kind (user, group, user_in_scope, group_in_scope)',
    labelNames: ['tenant', 'kind'] as const,
    registers: [registry],
  }),
  planWarnings: new Counter({
    name: `${p}reconcile_warnings_total`,
    help: 'Plan warnings by code: listing-incomplete (a managed object missing from the listing was found by id), removal-not-converging (a member removal the server acknowledged did not happen), confusable-name (a name written by the plan can be read as another name)',
    labelNames: ['tenant', 'code'] as const,
    registers: [registry],
  }),
  identityConflicts: new Gauge({
    name: `${p}identity_conflicts`,
    help: 'Source users not created (or renamed) in the latest plan because their userName is held by the account of someone else who is not in the source (identity conflicts, listed in the plan)',
    labelNames: ['tenant'] as const,
    registers: [registry],
  }),
  sourceRejected: new Counter({
    name: `${p}source_rejected_total`,
    help: 'Source objects or rows rejected as invalid (each is reported in the plan)',
    labelNames: ['tenant'] as const,
    registers: [registry],
  }),
};
