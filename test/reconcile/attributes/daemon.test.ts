/**
 * The daemon runs attribute sync as part of the tenant's reconcile: same job and lease, the
 * apply fanned out in chunks like every other phase, the ledger's attribute section in Redis
 * (so the next run reads nothing), the same guard, and metrics with an `attribute` label only
 * on the per-attribute counter.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../../src/simulator/index.ts';
import { createDaemonWorkspace, httpGet, metricValue, waitFor, type DaemonProcess } from '../../helpers/daemon-harness.ts';
import { startSim } from '../../helpers/reconcile-harness.ts';
import { runsFinished } from '../../daemon/support.ts';
import { attributeConfig, staff, valueReads, valuesOf, VALUES_PATH } from './support.ts';

const TOKEN = 'attr-daemon-token-3e9a';
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function nextRun(d: DaemonProcess, trigger: () => Promise<unknown>): Promise<Record<string, unknown>> {
  const done = runsFinished([d], 'reconcile').length;
  await trigger();
  return waitFor(() => runsFinished([d], 'reconcile')[done], 'the reconcile run', 30_000);
}

describe('daemon: user attributes in the tenant reconcile', () => {
  it('writes values through fanned-out chunks, keeps them in the Redis ledger, reads nothing next run, and holds a mass clear', async () => {
    const sim: Simulator = await startSim({ tokens: [{ token: TOKEN }] });
    cleanups.push(() => sim.close());
    const ws = createDaemonWorkspace({ env: { SIM_URL: sim.url, SIM_TOKEN: TOKEN } });
    cleanups.push(() => ws.cleanup());
    const six = [1, 2, 3, 4, 5, 6];
    ws.writeDirectory({ users: six.map((n) => staff(n, { l: n % 2 === 0 ? 'eu' : 'us', department: `D${n}` })), groups: [] });
    ws.writeConfig({ ...attributeConfig({}, { maxAttributeClears: 3 }), daemon: { applyChunkSize: 2 } });
    const d = await ws.spawnDaemon();

    const first = await nextRun(d, () => ws.trigger());
    expect(first['result']).toBe('success');
    for (const n of six) expect(valuesOf(sim, `user${n}@example.com`)).toEqual({ region: n % 2 === 0 ? 'EU' : 'US', department: `D${n}` });
    const redis = ws.redis();
    expect(await redis.hlen(`${ws.keyPrefix}:{acme}:ledger:attribute-values`)).toBe(6);
    expect(await redis.hlen(`${ws.keyPrefix}:{acme}:ledger:attribute-definitions`)).toBe(5);
    // One audit-trail line per user, written by the chunk jobs (chunks of 2).
    expect(d.logs.filter((l) => l.msg === 'user attribute change applied' && l['action'] === 'user.attributes')).toHaveLength(6);

    const metrics = (await httpGet(`${d.url}/metrics`)).body;
    expect(
      metricValue(metrics, 'scimsync_user_attribute_operations_total', { tenant: 'acme', operation: 'write_values', result: 'ok' }),
    ).toBe(6);
    expect(
      metricValue(metrics, 'scimsync_user_attribute_operations_total', { tenant: 'acme', operation: 'create_definition', result: 'ok' }),
    ).toBe(5);
    expect(
      metricValue(metrics, 'scimsync_user_attribute_changes_planned_total', { tenant: 'acme', attribute: 'region', kind: 'set' }),
    ).toBe(6);
    // The per-user operations carry no attribute label; no metric carries a user.
    expect(metrics).not.toMatch(/user_attribute_operations_total\{[^}]*attribute=/);
    expect(metrics).not.toContain('user1@example.com');

    sim.clearRequests();
    const second = await nextRun(d, () => ws.trigger());
    expect(second['result']).toBe('success');
    expect(valueReads(sim)).toBe(0);
    expect(sim.requests.filter((r) => r.method !== 'GET')).toEqual([]);

    // A mover: user1 goes from US to EU, logged as such by the daemon.
    ws.writeDirectory({ users: six.map((n) => staff(n, { l: n % 2 === 0 || n === 1 ? 'eu' : 'us', department: `D${n}` })), groups: [] });
    expect((await nextRun(d, () => ws.trigger()))['result']).toBe('success');
    const mover = d.logs.find((l) => l.msg === 'user attribute mover: an access-relevant attribute changes');
    expect(mover).toMatchObject({ name: 'user1@example.com', attributes: ['region'] });
    expect(valuesOf(sim, 'user1@example.com').region).toBe('EU');

    // A broken mapping empties `l` for everyone: 6 clears > maxAttributeClears 3.
    ws.writeDirectory({ users: six.map((n) => staff(n, { department: `D${n}` })), groups: [] });
    sim.clearRequests();
    const third = await nextRun(d, () => ws.trigger());
    expect(third['result']).toBe('guard_held');
    for (const n of six) expect(valuesOf(sim, `user${n}@example.com`).region).toBe(n % 2 === 0 || n === 1 ? 'EU' : 'US');
    expect(sim.requests.filter((r) => r.method === 'POST' && r.path.startsWith(VALUES_PATH))).toEqual([]);

    // approve-deletes is bound to the 6 held take-aways: the approved run clears them.
    const approve = await ws.cli(['approve-deletes', '--tenant', 'acme', '--config', ws.configPath]);
    expect(approve.code, approve.stderr).toBe(0);
    expect(approve.stdout).toContain('6 user attribute take-aways');
    const approved = await waitFor(() => runsFinished([d], 'reconcile')[4], 'the approved run', 30_000);
    expect(approved['result']).toBe('success');
    for (const n of six) expect(valuesOf(sim, `user${n}@example.com`)).toEqual({ department: `D${n}` });
    expect((await d.stop()).code).toBe(0);
  });

  it('values read while planning are written through to the Redis ledger: the next run reads nothing', async () => {
    const sim: Simulator = await startSim({ tokens: [{ token: TOKEN }] });
    cleanups.push(() => sim.close());
    const ws = createDaemonWorkspace({ env: { SIM_URL: sim.url, SIM_TOKEN: TOKEN } });
    cleanups.push(() => ws.cleanup());
    const four = [1, 2, 3, 4];
    ws.writeDirectory({ users: four.map((n) => staff(n, { l: 'eu' })), groups: [] });
    ws.writeConfig({});
    const d1 = await ws.spawnDaemon();
    expect((await nextRun(d1, () => ws.trigger()))['result']).toBe('success');
    expect((await d1.stop()).code).toBe(0);

    // Someone set up the region attribute by hand before attributes were configured.
    const region = sim.attributes.createDefinition({ name: 'region', type: 'string' });
    for (const n of four)
      sim.attributes.setValue(sim.store.getUserByUserName(`user${n}@example.com`)!.id, region.id, n === 1 ? 'US' : 'EU');
    ws.writeConfig({
      provisioning: {
        userAttributes: [{ name: 'region', type: 'string', from: 'attributes.l', transform: 'upper' }],
        guards: { maxAttributeClearPercent: 100 },
      },
    });
    const d2 = await ws.spawnDaemon();
    sim.clearRequests();
    expect((await nextRun(d2, () => ws.trigger()))['result']).toBe('success');
    expect(valueReads(sim)).toBe(4);
    expect(sim.requests.filter((r) => r.method === 'POST' && r.path.startsWith(VALUES_PATH)).map((r) => r.body)).toEqual([
      { userId: sim.store.getUserByUserName('user1@example.com')!.id, attributeId: region.id, value: 'EU' },
    ]);
    expect(await ws.redis().hlen(`${ws.keyPrefix}:{acme}:ledger:attribute-values`)).toBe(4);

    sim.clearRequests();
    expect((await nextRun(d2, () => ws.trigger()))['result']).toBe('success');
    expect(valueReads(sim)).toBe(0);
    expect(sim.requests.filter((r) => r.method !== 'GET')).toEqual([]);
    expect((await d2.stop()).code).toBe(0);
  });
});
