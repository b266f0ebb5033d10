/**
 * The change stream with a directory's own change feed: an Okta org (the simulator, read by
 * the real Okta SDK) whose joiner reaches the platform through the daemon's change path,
 * without a full reconcile, within a few polls.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { daemonSharedConfig, getJson, tenantConfig, waitFor } from '../helpers/daemon-harness.ts';
import { usersNamed } from '../helpers/reconcile-harness.ts';
import { startTestOktaOrg, type TestOktaOrg } from '../helpers/okta-org.ts';
import { closingAfterEach, runsFinished } from './support.ts';

const TOKEN = 'change-stream-okta-token-4d1a';
const { sim, workspace } = closingAfterEach();
let org: TestOktaOrg | undefined;
afterEach(async () => {
  await org?.close();
  org = undefined;
});

describe('change stream from Okta', () => {
  it('a joiner added in Okta reaches the platform through the change stream, without a full reconcile', { timeout: 90_000 }, async () => {
    org = await startTestOktaOrg({ users: 3, groups: 0 });
    const s = await sim(TOKEN);
    const ws = workspace({ SIM_URL: s.url, SIM_TOKEN: TOKEN });
    ws.writeConfigObject({
      ...daemonSharedConfig(ws),
      ...tenantConfig('acme'),
      provisioning: { source: org.tokenSource(), changes: { enabled: true, pollIntervalMs: 300, coalesceMs: 100 } },
    });
    const d = await ws.spawnDaemon();
    await waitFor(() => runsFinished([d], 'reconcile').length === 1 && s.store.users().length === 3, 'the first full reconcile', 30_000);
    const status = async (): Promise<{ mechanism: string | null; lastResult: string | null }> =>
      (await getJson<{ tenants: Array<{ changes: { mechanism: string | null; lastResult: string | null } }> }>(`${d.url}/status`)).body
        .tenants[0]!.changes;
    await waitFor(async () => (await status()).lastResult === 'idle', 'the stream polling Okta from its cursor', 20_000);
    expect((await status()).mechanism).toBe('okta-last-updated');
    org.sim.org.addUser({ login: 'joiner@example.com', email: 'joiner@example.com', firstName: 'Jo', lastName: 'Iner' });
    await waitFor(() => usersNamed(s, 'joiner@example.com') === 1, 'the Okta joiner on the platform', 20_000);
    await waitFor(() => d.logs.some((l) => l.msg === 'change stream: changes applied'), 'the batch applied by the change path');
    expect(runsFinished([d], 'reconcile')).toHaveLength(1);
  });
});
