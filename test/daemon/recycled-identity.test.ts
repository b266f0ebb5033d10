/**
 * Identity safety in the daemon: a new hire given a leaver's address is an identity conflict,
 * recorded once in the tenant's provisioning-log stream (not again on every run that keeps the
 * same conflict) and counted in `scimsync_identity_conflicts`; `ledger reassign` on the
 * daemon's Redis ledger then hands the account over on purpose and the next run reactivates it.
 */
import { describe, expect, it } from 'vitest';
import type { ProvisioningRecord } from '../../src/provisioning-log/record.ts';
import { person } from '../helpers/reconcile-harness.ts';
import { httpGet, metricValue, waitFor } from '../helpers/daemon-harness.ts';
import { closingAfterEach, runsFinished } from './support.ts';

const TOKEN = 'recycled-identity-token-4c1d9e';
const scene = closingAfterEach();
const alice = person(100, { externalId: 'emp-100', userName: 'alice@example.com', emails: 'alice@example.com' });
const hire = person(200, { externalId: 'emp-200', userName: 'alice@example.com', emails: 'alice@example.com' });
const others = [1, 2, 3, 4].map((n) => person(n));

describe('daemon: recycled identity', () => {
  it('a new hire given a leaver address: one user.conflict record, the metric, then ledger reassign on Redis hands the account over', async () => {
    const sim = await scene.sim(TOKEN);
    const ws = scene.workspace({ SIM_URL: sim.url, SIM_TOKEN: TOKEN });
    ws.writeDirectory({ users: [alice, ...others], groups: [] });
    ws.writeConfig({ provisioning: { guards: { maxDeletePercent: 100 } } });
    const d = await ws.spawnDaemon();
    let expected = 0;
    const run = async (): Promise<void> => {
      expected++;
      await ws.trigger();
      await waitFor(() => runsFinished([d], 'reconcile').length === expected, `run ${expected}`, 30_000);
    };
    await run();
    const id = sim.store.getUserByUserName('alice@example.com')?.id as string;
    ws.writeDirectory({ users: others, groups: [] });
    await run();
    expect(sim.store.getUser(id)).toMatchObject({ externalId: 'emp-100', active: false });

    ws.writeDirectory({ users: [hire, ...others], groups: [] });
    await run();
    await run(); // the same conflict again: not recorded twice
    const stream = `${ws.keyPrefix}:{acme}:provisioning-log`;
    const records = (await ws.redis().xrange(stream, '-', '+')).map(([, f]) => JSON.parse(f[1] as string) as ProvisioningRecord);
    expect(records.filter((r) => r.action === 'user.conflict')).toEqual([
      expect.objectContaining({ result: 'held', object: { type: 'user', externalId: 'emp-200', name: 'alice@example.com', id } }),
    ]);
    expect(sim.store.getUser(id)).toMatchObject({ externalId: 'emp-100', active: false });
    expect(metricValue((await httpGet(`${d.url}/metrics`)).body, 'scimsync_identity_conflicts', { tenant: 'acme' })).toBe(1);

    const reassign = await ws.cli([
      'ledger',
      'reassign',
      '--config',
      ws.configPath,
      '--from',
      'emp-100',
      '--to',
      'emp-200',
      '--reason',
      'rehire',
    ]);
    expect(reassign.code).toBe(0);
    await run();
    expect(sim.store.getUser(id)).toMatchObject({ externalId: 'emp-200', active: true });
    expect(sim.store.users().filter((u) => u.externalId === 'emp-200')).toHaveLength(1);
    expect(metricValue((await httpGet(`${d.url}/metrics`)).body, 'scimsync_identity_conflicts', { tenant: 'acme' })).toBe(0);
    const after = (await ws.redis().xrange(stream, '-', '+')).map(([, f]) => JSON.parse(f[1] as string) as ProvisioningRecord);
    expect(after.filter((r) => r.action === 'user.reassign').map((r) => r.object.id)).toEqual([id]);
    expect(after.filter((r) => r.action === 'user.reactivate').map((r) => r.object)).toEqual([
      { type: 'user', externalId: 'emp-200', name: 'alice@example.com', id },
    ]);
  }, 120_000);
});
