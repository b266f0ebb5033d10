/**
 * User attributes in the provisioning log: every value written, failed or held by the guard is
 * a record with `userAttributes.<name>` before → after; definitions created are records too.
 * One-shot (JSON lines) and daemon (Redis stream).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ProvisioningRecord } from '../../../src/provisioning-log/record.ts';
import type { Simulator } from '../../../src/simulator/index.ts';
import { createDaemonWorkspace, waitFor } from '../../helpers/daemon-harness.ts';
import { createWorkspace, startSim, type Workspace } from '../../helpers/reconcile-harness.ts';
import { runsFinished } from '../../daemon/support.ts';
import { attributeConfig, staff, userId } from './support.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function logFile(ws: Workspace): ProvisioningRecord[] {
  return readFileSync(join(ws.dir, 'state', 'e2e', 'provisioning-log.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as ProvisioningRecord);
}

describe('provisioning log: user attributes', () => {
  it('one-shot: definitions and values written, a mover, and take-aways held by the guard', async () => {
    const sim: Simulator = await startSim();
    cleanups.push(() => sim.close());
    const ws = createWorkspace(sim, {
      directory: { users: [staff(1, { l: 'eu' }), staff(2, { l: 'us' })], groups: [] },
      config: attributeConfig({}, { maxAttributeClears: 0 }),
    });
    expect((await ws.apply()).code).toBe(0);
    const first = logFile(ws);
    expect(first.filter((r) => r.action === 'attribute.create').map((r) => [r.object, r.changes])).toContainEqual([
      { type: 'attribute', externalId: 'region', name: 'region', id: sim.attributes.definitionByName('region')?.id },
      [{ path: 'type', before: null, after: 'string' }],
    ]);
    const ana = first.find((r) => r.action === 'user.attributes' && r.object.name === 'user1@example.com');
    expect(ana).toMatchObject({
      result: 'ok',
      object: { type: 'user', externalId: 'u-1', id: userId(sim, 'user1@example.com') },
      changes: [{ path: 'userAttributes.region', before: null, after: 'EU' }],
    });

    // A mover (user1 EU → US) and a leaver of a value (user2 loses l): with maxAttributeClears 0 both are held.
    ws.writeDirectory({ users: [staff(1, { l: 'us', department: 'Ops' }), staff(2, {})], groups: [] });
    expect((await ws.apply()).code).toBe(3);
    const second = logFile(ws).slice(first.length);
    const held = second.filter((r) => r.result === 'held' && r.action === 'user.attributes');
    expect(held.map((r) => [r.object.name, r.changes])).toEqual([
      ['user1@example.com', [{ path: 'userAttributes.region', before: 'EU', after: 'US' }]],
      ['user2@example.com', [{ path: 'userAttributes.region', before: 'US', after: null }]],
    ]);
    expect(held[0]?.reason).toContain('held by the deletion guard');
    // What was not held was applied and logged as such: user1's new department only.
    expect(second.filter((r) => r.result === 'ok' && r.action === 'user.attributes').map((r) => [r.object.name, r.changes])).toEqual([
      ['user1@example.com', [{ path: 'userAttributes.department', before: null, after: 'Ops' }]],
    ]);
  });

  it('daemon: value changes are records in the Redis stream with before → after', async () => {
    const sim: Simulator = await startSim({ tokens: [{ token: 'plog-token-1' }] });
    cleanups.push(() => sim.close());
    const ws = createDaemonWorkspace({ env: { SIM_URL: sim.url, SIM_TOKEN: 'plog-token-1' } });
    cleanups.push(() => ws.cleanup());
    ws.writeDirectory({ users: [staff(1, { l: 'eu' }), staff(2, { l: 'us' })], groups: [] });
    ws.writeConfig({ ...attributeConfig(), daemon: { applyChunkSize: 1 } });
    const d = await ws.spawnDaemon();
    await ws.trigger();
    await waitFor(() => runsFinished([d], 'reconcile').length === 1, 'the first run', 30_000);
    ws.writeDirectory({ users: [staff(1, { l: 'us' }), staff(2, { l: 'us' })], groups: [] });
    await ws.trigger();
    await waitFor(() => runsFinished([d], 'reconcile').length === 2, 'the second run', 30_000);
    const entries = await ws.redis().xrange(`${ws.keyPrefix}:{acme}:provisioning-log`, '-', '+');
    const records = entries.map(([, f]) => JSON.parse(f[1] as string) as ProvisioningRecord);
    const moves = records.filter((r) => r.action === 'user.attributes' && r.object.name === 'user1@example.com').map((r) => r.changes);
    expect(moves).toEqual([
      [{ path: 'userAttributes.region', before: null, after: 'EU' }],
      [{ path: 'userAttributes.region', before: 'EU', after: 'US' }],
    ]);
    expect((await d.stop()).code).toBe(0);
  });
});
