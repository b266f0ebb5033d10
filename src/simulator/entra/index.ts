/** The Entra ID (identity platform + Microsoft Graph) simulator's public surface. */
export { startEntraSimulator, type EntraSimulator } from './server.ts';
export { EntraDirectory, type EntraGroup, type EntraMember, type EntraUser, type GroupInput, type UserInput } from './directory.ts';
export { seedDirectory, groupName, userPrincipalName, SEED_EXTENSION_APP, type SeedOptions } from './seed.ts';
export { generateCertificate, generateClientSecret, generateWorkloadIssuer, type WorkloadIssuer } from './credentials.ts';
export { PAGE_LIMITS } from './graph.ts';
export type { EntraFaultKind, EntraFaultRule, EntraRequestLogEntry, EntraRoute, EntraSimulatorOptions, SimApp } from './types.ts';
export { selfSignedServerCertificate } from './tls.ts';
