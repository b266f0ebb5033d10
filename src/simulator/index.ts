/** The platform simulator's public surface: import from here. */
export { startSimulator } from './server.ts';
export { SimStore, SCIM_PREFIX } from './store.ts';
export { ScimHttpError } from './scim-error.ts';
export { AUDIT_EXPORT_PATH } from './audit-routes.ts';
export type { FaultKind, FaultRule, ListPageEvent, RequestLogEntry, Simulator, SimulatorOptions, SimulatorToken } from './types.ts';
export { SERVER_QUIRKS, type ServerQuirk } from './quirks.ts';
export type {
  AuditColumnKey,
  AuditExtraColumn,
  AuditFilters,
  AuditSimOptions,
  LateEventInput,
  SimAudit,
  SimAuditEvent,
  SimAuditEventCore,
} from './audit-types.ts';
export { SimUserAttributes, USER_ATTRIBUTES_PATH, USER_ATTRIBUTE_VALUES_PATH, type UserAttributesSimOptions } from './user-attributes.ts';
