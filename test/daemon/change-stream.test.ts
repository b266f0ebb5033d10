/**
 * The daemon applies source changes as they come: one change stream per tenant across
 * replicas (its own lease; another replica takes it over when the holder stops), batches
 * written under the tenant's reconcile lease, a cursor kept in Redis across restarts.
 * The source is the file source (its change mechanism polls the file), the platform the
 * simulator, Redis the real one.
 */
import { describe, expect, it } from 'vitest';
import { people, usersNamed } from '../helpers/reconcile-harness.ts';
import { getJson, metricValue, httpGet, waitFor, type DaemonProcess, type DaemonWorkspace } from '../helpers/daemon-harness.ts';
import { closingAfterEach, runsFinished } from './support.ts';

const TOKEN = 'change-stream-token-7c2e91ab';
const { sim, workspace } = closingAfterEach();

/** Fast polling for tests: the file is stat'ed every 200 ms, changes coalesced for 100 ms. */
const CHANGES = { provisioning: { changes: { pollIntervalMs: 200, coalesceMs: 100 } } };

interface StreamStatus {
  state: string;
  mechanism: string | null;
  owner: string | null;
  cursor: string | null;
  lastResult: string | null;
  lastDeferred: { reason: string } | null;
  heldBurst: { destructive: number } | null;
}

async function streamOf(d: DaemonProcess, tenant = 'acme'): Promise<StreamStatus> {
  const { body } = await getJson<{ tenants: Array<{ tenant: string; changes: StreamStatus }> }>(`${d.url}/status`);
  return body.tenants.find((t) => t.tenant === tenant)!.changes;
}

async function startedWith(ws: DaemonWorkspace, users: number): Promise<void> {
  ws.writeDirectory({ users: people(1, users), groups: [] });
  ws.writeConfig(CHANGES);
}

describe('change stream', () => {
  it('a joiner edited into the file source reaches the platform without a scheduled run', async () => {
    const s = await sim(TOKEN);
    const ws = workspace({ SIM_URL: s.url, SIM_TOKEN: TOKEN });
    await startedWith(ws, 3);
    const d = await ws.spawnDaemon();
    // No cursor yet: the first answer is a full read, applied by the full reconcile it requests.
    await waitFor(() => s.store.users().length === 3, 'the first full reconcile', 20_000);
    await waitFor(async () => (await streamOf(d)).lastResult === 'idle', 'the stream polling from its cursor');
    const fullRuns = runsFinished([d], 'reconcile').length;
    ws.writeDirectory({ users: people(1, 4), groups: [] });
    await waitFor(() => usersNamed(s, 'user4@example.com') === 1, 'the joiner on the platform', 15_000);
    const applied = await waitFor(() => d.logs.find((l) => l.msg === 'change stream: changes applied'), 'the batch log line');
    expect(applied['identities']).toBe(1);
    // Written by the change path alone: no reconcile ran for it, none was scheduled.
    expect(runsFinished([d], 'reconcile').length).toBe(fullRuns);
    const metrics = (await httpGet(`${d.url}/metrics`)).body;
    expect(metricValue(metrics, 'scimsync_change_propagation_seconds_count', { tenant: 'acme' })).toBeGreaterThanOrEqual(1);
    expect(metricValue(metrics, 'scimsync_changes_total', { tenant: 'acme', outcome: 'applied' })).toBe(1);
    const st = await streamOf(d);
    expect(st).toMatchObject({ state: 'running', mechanism: 'file-poll' });
    expect((await d.stop()).code).toBe(0);
  });
});
