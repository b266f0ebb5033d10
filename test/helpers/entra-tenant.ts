/**
 * An Entra ID tenant for tests: the simulator on a free loopback HTTPS port (a throw-away
 * CA, trusted through the source's `caFile`), an app registration with a client secret, a
 * certificate and a federated workload identity, granted the read permissions with admin
 * consent, and a source config pointing the real `@azure/identity` credentials at it.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  generateCertificate,
  generateClientSecret,
  generateWorkloadIssuer,
  seedDirectory,
  startEntraSimulator,
  type EntraSimulator,
  type SimApp,
  type WorkloadIssuer,
} from '../../src/simulator/entra/index.ts';
import type { EntraIdSourceInput } from '../../src/sources/entra/schema.ts';
import { createTestCa } from './test-ca.ts';

export const CLIENT_ID = '0f1e2d3c-4b5a-4697-8877-665544332211';
export const READ_PERMISSIONS = ['User.Read.All', 'GroupMember.Read.All', 'CustomSecAttributeAssignment.Read.All'];
export const WORKLOAD_SUBJECT = 'system:serviceaccount:scim:scim-audit-sync';

export interface TestTenant {
  sim: EntraSimulator;
  dir: string;
  app: SimApp;
  secret: string;
  secretPath: string;
  certificatePath: string;
  tokenPath: string;
  issuer: WorkloadIssuer;
  caFile: string;
  source(over?: Partial<EntraIdSourceInput>): EntraIdSourceInput;
  /** Grant exactly these permissions (with admin consent unless `consent: false`). */
  grant(permissions: string[], consent?: boolean): void;
  close(): Promise<void>;
}

export async function startTestTenant(o: { users?: number; groups?: number; disabledEvery?: number } = {}): Promise<TestTenant> {
  const dir = mkdtempSync(join(tmpdir(), 'entra-'));
  const ca = createTestCa(dir);
  const secret = generateClientSecret();
  const cert = generateCertificate();
  const issuer = generateWorkloadIssuer();
  const app: SimApp = {
    clientId: CLIENT_ID,
    displayName: 'scim-audit-sync',
    secrets: [{ value: secret }],
    certificates: [cert.certPem],
    federated: [{ issuer: issuer.issuer, subject: WORKLOAD_SUBJECT, publicKeyPem: issuer.publicKeyPem }],
    permissions: READ_PERMISSIONS,
    adminConsent: true,
  };
  const sim = await startEntraSimulator({
    apps: [app],
    tls: { key: readFileSync(ca.keyFile, 'utf8'), cert: readFileSync(ca.certFile, 'utf8') },
  });
  seedDirectory(sim.directory, {
    users: o.users ?? 0,
    groups: o.groups ?? 0,
    ...(o.disabledEvery !== undefined ? { disabledEvery: o.disabledEvery } : {}),
  });
  const secretPath = join(dir, 'client-secret');
  writeFileSync(secretPath, `${secret}\n`, { mode: 0o600 });
  const certificatePath = join(dir, 'app-cert.pem');
  writeFileSync(certificatePath, cert.pem, { mode: 0o600 });
  const tokenPath = join(dir, 'azure-identity-token');
  writeFileSync(tokenPath, issuer.token(WORKLOAD_SUBJECT));
  const t: TestTenant = {
    sim,
    dir,
    app,
    secret,
    secretPath,
    certificatePath,
    tokenPath,
    issuer,
    caFile: ca.caFile,
    source: (over = {}) => ({
      type: 'entra-id',
      tenantId: sim.tenantId,
      clientId: CLIENT_ID,
      credential: { type: 'clientSecret', clientSecretFile: secretPath },
      authorityHost: sim.url,
      graphUrl: sim.url,
      caFile: ca.caFile,
      timeoutSeconds: 10,
      retry: { maxAttempts: 4, baseDelayMs: 5, maxDelayMs: 50 },
      ...over,
    }),
    grant: (permissions, consent = true) => {
      t.app = { ...app, permissions, adminConsent: consent };
      sim.setApps([t.app]);
      sim.revokeTokens();
    },
    close: () => sim.close(),
  };
  return t;
}
