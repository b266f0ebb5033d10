/**
 * A Google Workspace for tests: the Directory API simulator on a free loopback port, a
 * freshly generated service-account key written to a temp dir (as a mounted secret would
 * be), delegation granted for the read-only scopes, and a source config pointing the real
 * Google clients at the simulator.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  generateServiceAccount,
  seedWorkspace,
  startGoogleSimulator,
  type GeneratedServiceAccount,
  type GoogleSimulator,
} from '../../src/simulator/google/index.ts';
import { SCOPES, type GoogleWorkspaceSourceInput } from '../../src/sources/google/schema.ts';

export const READ_SCOPES = [SCOPES.users, SCOPES.groups, SCOPES.members];

export interface TestWorkspace {
  sim: GoogleSimulator;
  sa: GeneratedServiceAccount;
  dir: string;
  /** Absolute path of the key file. */
  keyPath: string;
  adminEmail: string;
  /** Source config (fast retries) for this workspace. */
  source(over?: Partial<GoogleWorkspaceSourceInput>): GoogleWorkspaceSourceInput;
  close(): Promise<void>;
}

export async function startTestWorkspace(
  o: { users?: number; groups?: number; delegatedScopes?: string[] | null; suspendedEvery?: number; archivedEvery?: number } = {},
): Promise<TestWorkspace> {
  const sa = generateServiceAccount({ delegatedScopes: o.delegatedScopes === null ? undefined : (o.delegatedScopes ?? READ_SCOPES) });
  if (o.delegatedScopes === null) delete sa.account.delegatedScopes;
  const sim = await startGoogleSimulator({ serviceAccounts: [sa.account] });
  const { adminEmail } = seedWorkspace(sim.workspace, {
    users: o.users ?? 0,
    groups: o.groups ?? 0,
    ...(o.suspendedEvery !== undefined ? { suspendedEvery: o.suspendedEvery } : {}),
    ...(o.archivedEvery !== undefined ? { archivedEvery: o.archivedEvery } : {}),
  });
  const dir = mkdtempSync(join(tmpdir(), 'gws-'));
  const keyPath = join(dir, 'service-account.json');
  writeFileSync(keyPath, sa.keyFileJson, { mode: 0o600 });
  return {
    sim,
    sa,
    dir,
    keyPath,
    adminEmail,
    source: (over = {}) => ({
      type: 'google-workspace',
      serviceAccountKeyFile: keyPath,
      subject: adminEmail,
      rootUrl: sim.rootUrl,
      tokenUrl: sim.tokenUrl,
      allowInsecureHttp: true,
      timeoutSeconds: 10,
      retry: { maxAttempts: 4, baseDelayMs: 5, maxDelayMs: 50 },
      ...over,
    }),
    close: () => sim.close(),
  };
}
