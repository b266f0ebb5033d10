/** A simulator plus a ScimClient talking to it over a real socket. */
import { startSimulator, type Simulator, type SimulatorOptions } from '../../../src/simulator/index.ts';
import { PlatformClient } from '../../../src/platform/http-client.ts';
import { ScimClient, type ScimClientOptions } from '../../../src/platform/scim/client.ts';
import type { ScimUser } from '../../../src/platform/scim/types.ts';

export const SCIM_PATH = '/api/scim/v2';

export interface ScimHarness {
  sim: Simulator;
  http: PlatformClient;
  scim: ScimClient;
  close(): Promise<void>;
}

export async function scimHarness(simOpts: SimulatorOptions = {}, clientOpts: Partial<ScimClientOptions> = {}): Promise<ScimHarness> {
  const sim = await startSimulator(simOpts);
  const http = new PlatformClient({
    baseUrl: sim.url,
    token: 'test-token',
    allowInsecureHttp: true,
    retry: { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 10 },
  });
  const scim = new ScimClient(http, {
    scimPath: SCIM_PATH,
    pageSize: 100,
    maxMembersPerPatch: 100,
    memberRemoveDialect: 'filter',
    updateMethod: 'auto',
    discover: true,
    paging: { probeDelayMs: 5 },
    ...clientOpts,
  });
  return {
    sim,
    http,
    scim,
    close: async () => {
      await http.close();
      await sim.close();
    },
  };
}

export function seedUsers(sim: Simulator, n: number, prefix = 'user'): ScimUser[] {
  return Array.from({ length: n }, (_, i) =>
    sim.store.createUser({ userName: `${prefix}${i}@example.com`, externalId: `ext-${prefix}-${i}`, active: true }),
  );
}

/** Logged requests by method and path suffix (e.g. 'GET', '/Users'). */
export function requestsTo(sim: Simulator, method: string, pathEnd: string): Simulator['requests'] {
  return sim.requests.filter((r) => r.method === method && r.path.endsWith(pathEnd));
}

export function sortedIds(items: { id: string }[]): string[] {
  return items.map((r) => r.id).sort();
}
