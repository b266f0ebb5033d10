/**
 * An Okta org for tests: the simulator on a free loopback port, seeded; an SSWS API token
 * (of a Read-Only Administrator) and a service app's private key written to a temp dir
 * (as mounted secrets would be); source configs pointing the real Okta SDK at it.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  generateServiceApp,
  seedOrg,
  startOktaSimulator,
  type GeneratedServiceApp,
  type OktaSeedOptions,
  type OktaSimulator,
  type OktaSimulatorOptions,
} from '../../src/simulator/okta/index.ts';
import type { OktaSourceInput } from '../../src/sources/okta/schema.ts';

export const API_TOKEN = '00sim-Read0nlyAdminT0ken-abcdefghijklmnopq';

export interface TestOktaOrg {
  sim: OktaSimulator;
  app: GeneratedServiceApp;
  dir: string;
  tokenPath: string;
  keyPath: string;
  /** Source config with the API token (fast retries). */
  tokenSource(over?: Partial<OktaSourceInput>): OktaSourceInput;
  /** Source config with the service app (fast retries). */
  appSource(over?: Partial<OktaSourceInput>): OktaSourceInput;
  close(): Promise<void>;
}

export async function startTestOktaOrg(seed: Partial<OktaSeedOptions> = {}, opts: OktaSimulatorOptions = {}): Promise<TestOktaOrg> {
  const app = generateServiceApp();
  const sim = await startOktaSimulator({
    apiTokens: [{ token: API_TOKEN, adminRole: 'READ_ONLY_ADMIN' }],
    serviceApps: [app.app],
    ...opts,
  });
  seedOrg(sim.org, { users: 0, groups: 0, ...seed });
  const dir = mkdtempSync(join(tmpdir(), 'okta-'));
  const tokenPath = join(dir, 'okta-api-token');
  const keyPath = join(dir, 'okta-service-app.pem');
  writeFileSync(tokenPath, `${API_TOKEN}\n`, { mode: 0o600 });
  writeFileSync(keyPath, app.privateKeyPem, { mode: 0o600 });
  const common = {
    type: 'okta' as const,
    orgUrl: sim.url,
    allowInsecureHttp: true,
    timeoutSeconds: 10,
    retry: { maxAttempts: 4, baseDelayMs: 5, maxDelayMs: 2000 },
  };
  return {
    sim,
    app,
    dir,
    tokenPath,
    keyPath,
    tokenSource: (over = {}) => ({ ...common, apiTokenFile: tokenPath, ...over }) as OktaSourceInput,
    appSource: (over = {}) => ({ ...common, clientId: app.app.clientId, privateKeyFile: keyPath, ...over }) as OktaSourceInput,
    close: () => sim.close(),
  };
}
