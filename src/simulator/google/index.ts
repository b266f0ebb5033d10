/** The Google Workspace (Admin SDK Directory API) simulator's public surface. */
export { startGoogleSimulator, type GoogleSimulator } from './server.ts';
export { GoogleWorkspace, type MemberInput, type UserInput } from './workspace.ts';
export { generateServiceAccount, type GeneratedServiceAccount } from './keys.ts';
export { seedWorkspace, type SeedOptions } from './seed.ts';
export { GOOGLE_TOKEN_AUDIENCE } from './token.ts';
export { PAGE_LIMITS } from './routes.ts';
export { ACTIVITY_PAGE, REPORTS_SCOPES } from './reports.ts';
export type { AdminActivity, AdminActivityLog } from './activity.ts';
export type {
  GoogleFaultKind,
  GoogleFaultRule,
  GoogleGroup,
  GoogleMember,
  GoogleRequestLogEntry,
  GoogleSimulatorOptions,
  GoogleUser,
  SimServiceAccount,
} from './types.ts';
