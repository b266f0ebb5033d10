/**
 * A provisioning-log record as an OCSF event (`audit.fieldStyle: ocsf`): a user change is an
 * Account Change, a group change a Group Management, an attribute definition an API Activity
 * (a SCIM schema call), all acted by the sync itself (`actor.app_name`). The record is kept
 * whole in `unmapped.provisioning` and, as JSON text, in `raw_data`.
 */
import {
  ACCOUNT_CHANGE,
  API_ACTIVITY,
  GROUP_MANAGEMENT,
  OCSF_VERSION,
  profilesOf,
  STATUS,
  STATUS_NAMES,
  UNKNOWN_ENDPOINT,
  UNKNOWN_GROUP,
  UNKNOWN_USER,
  type OcsfClass,
} from '../audit/ocsf/classes.ts';
import type { ChangeAction } from '../reconcile/tasks.ts';
import type { IdentityAction, ProvisioningRecord } from './record.ts';

const APP = 'scim-audit-sync';

/** Change action → OCSF class and activity_id. */
const ACTIVITY: Readonly<Record<ChangeAction | IdentityAction, readonly [OcsfClass, number]>> = {
  'user.create': [ACCOUNT_CHANGE, 1],
  'user.adopt': [ACCOUNT_CHANGE, 99],
  'user.update': [ACCOUNT_CHANGE, 99],
  'user.attributes': [ACCOUNT_CHANGE, 99],
  'user.reactivate': [ACCOUNT_CHANGE, 2],
  'user.deactivate': [ACCOUNT_CHANGE, 5],
  'user.delete': [ACCOUNT_CHANGE, 6],
  'user.conflict': [ACCOUNT_CHANGE, 99],
  'user.reassign': [ACCOUNT_CHANGE, 99],
  'group.create': [GROUP_MANAGEMENT, 6],
  'group.adopt': [GROUP_MANAGEMENT, 99],
  'group.update': [GROUP_MANAGEMENT, 99],
  'group.members': [GROUP_MANAGEMENT, 99],
  'group.delete': [GROUP_MANAGEMENT, 5],
  'attribute.create': [API_ACTIVITY, 1],
  'attribute.update': [API_ACTIVITY, 3],
};

const STATUS_OF = { ok: STATUS.success, failed: STATUS.failure, held: STATUS.unknown } as const;

export function ocsfRecordDoc(r: ProvisioningRecord, key: string, timestampMs: number): Record<string, unknown> {
  const [cls, activityId] = ACTIVITY[r.action] ?? [API_ACTIVITY, 99];
  const activityName = cls.activities[activityId]!;
  const statusId = STATUS_OF[r.result];
  const { id: _id, ...rest } = r;
  const subject = r.object.name ?? r.object.externalId ?? r.object.id;
  const named = subject === undefined ? undefined : { name: subject, ...(r.object.id ? { uid: r.object.id } : {}) };
  const profiles = profilesOf(cls);
  const statusDetail = r.error?.message ?? (r.result === 'held' ? (r.reason ?? 'held') : undefined);
  return {
    activity_id: activityId,
    activity_name: activityName,
    category_uid: cls.categoryUid,
    category_name: cls.categoryName,
    class_uid: cls.uid,
    class_name: cls.name,
    type_uid: cls.uid * 100 + activityId,
    type_name: `${cls.name}: ${activityName}`,
    time: timestampMs,
    severity_id: r.result === 'failed' ? 3 : 1,
    severity: r.result === 'failed' ? 'Medium' : 'Informational',
    status_id: statusId,
    status: STATUS_NAMES[statusId],
    ...(r.error ? { status_code: r.error.code } : {}),
    ...(statusDetail === undefined ? {} : { status_detail: statusDetail }),
    message: r.action,
    metadata: {
      version: OCSF_VERSION,
      ...(profiles ? { profiles } : {}),
      product: { name: APP, vendor_name: APP },
      uid: key,
      log_name: 'scim-audit-sync.provisioning',
      event_code: r.action,
      original_time: r.time,
    },
    actor: { app_name: APP },
    ...(cls === ACCOUNT_CHANGE ? { user: named ?? { ...UNKNOWN_USER } } : {}),
    ...(cls === GROUP_MANAGEMENT ? { group: named ?? { ...UNKNOWN_GROUP } } : {}),
    ...(cls === API_ACTIVITY ? { api: { operation: r.action, service: { name: 'SCIM' } }, src_endpoint: { ...UNKNOWN_ENDPOINT } } : {}),
    unmapped: { provisioning: rest },
    raw_data: JSON.stringify(r),
  };
}
