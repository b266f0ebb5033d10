export {
  OktaOrg,
  OKTA_STATUSES,
  DEPARTMENTS,
  seedOrg,
  type OktaSeedOptions,
  type OktaStatus,
  type SimOktaGroup,
  type SimOktaUser,
} from './org.ts';
export { DEFAULT_LIMITS, RateLimiter, type OktaBucket } from './rate-limit.ts';
export {
  startOktaSimulator,
  type OktaFaultRule,
  type OktaRequestLogEntry,
  type OktaSimulator,
  type OktaSimulatorOptions,
  type SimApiToken,
} from './server.ts';
export type { SimServiceApp } from './token.ts';
export { generateServiceApp, type GeneratedServiceApp } from './keys.ts';
