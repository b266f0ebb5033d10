/**
 * The redacted view of a tenant for a read-only audience (daemon.ui.redact): what happened and
 * how much, never to whom. Names, externalIds, platform ids, member names and attribute values
 * are masked, and so are error messages (they may quote them); attribute names, actions,
 * results, counts, guard reasons and error codes stay.
 * Applied to the data before it is rendered, so no template can leak what it was not given.
 */
import type { ProvisioningRecord } from '../provisioning-log/record.ts';
import type { RunView, TenantView } from './view.ts';

export const MASK = '•••';

export function redactRecord(r: ProvisioningRecord): ProvisioningRecord {
  const out: ProvisioningRecord = {
    id: r.id,
    time: r.time,
    tenant: r.tenant,
    runId: r.runId,
    action: r.action,
    result: r.result,
    // An attribute definition's name is schema, not a person.
    object: r.object.type === 'attribute' ? { ...r.object } : { type: r.object.type, name: MASK },
  };
  if (r.changes)
    out.changes = r.changes.map((c) => ({ path: c.path, before: c.before === null ? null : MASK, after: c.after === null ? null : MASK }));
  if (r.members) out.members = { added: [], removed: [], addedCount: r.members.addedCount, removedCount: r.members.removedCount };
  if (r.reason !== undefined) out.reason = r.reason;
  // A platform's error message may quote the object; the code says what went wrong.
  if (r.error) out.error = { code: r.error.code, message: '' };
  return out;
}

const HIDDEN = '(message hidden in the redacted view)';

/** A failed run's error message may quote a DN, a userName or a platform's answer: the code stays. */
function redactRun(r: RunView): RunView {
  const message = r.detail['message'];
  if (typeof message !== 'string') return r;
  const code = r.detail['code'];
  return { ...r, detail: { ...r.detail, message: typeof code === 'string' ? `${code} ${HIDDEN}` : HIDDEN } };
}

/** A quarantine reason is `<code>: <message>` or a run's abort message. */
function redactReason(reason: string): string {
  if (reason === '') return '';
  const code = /^([A-Z][A-Z0-9_]+):/.exec(reason)?.[1];
  return code ? `${code}: ${HIDDEN}` : HIDDEN;
}

export function redactTenantView(v: TenantView): TenantView {
  return {
    ...v,
    reconcileRuns: v.reconcileRuns.map(redactRun),
    auditRuns: v.auditRuns.map(redactRun),
    quarantine: { ...v.quarantine, reason: redactReason(v.quarantine.reason) },
    heldRecords: v.heldRecords.map(redactRecord),
    log: v.log.map(redactRecord),
  };
}
