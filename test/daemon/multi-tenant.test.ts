/**
 * One daemon process serving a multi-tenant config (each tenant with its own platform URL
 * and token), and `trigger`'s deduplication: repeated triggers collapse into one waiting
 * run, while a trigger that arrives during a run is kept and runs once after it.
 */
import { describe, expect, it } from 'vitest';
import { people, person, requestsTo, SCIM } from '../helpers/reconcile-harness.ts';
import { assertNoSecret, daemonSharedConfig, jobHashes, tenantConfig, waitFor } from '../helpers/daemon-harness.ts';
import { closingAfterEach, runsFinished } from './support.ts';

const TOKEN_A = 'tenant-alpha-token-5e8d2c1b9a';
const TOKEN_B = 'tenant-beta-token-3f7a6b0c4d';

const { sim, workspace } = closingAfterEach();

const jobOf = (stdout: string): string => /\(job ([^)]+)\)/.exec(stdout)?.[1] ?? `no job id in ${JSON.stringify(stdout)}`;

describe('multi-tenant daemon and trigger', () => {
  it('one process serves two tenants with their own platform and token; repeated triggers collapse into one run', async () => {
    const [simA, simB] = await Promise.all([sim(TOKEN_A), sim(TOKEN_B)]);
    const ws = workspace({ A_URL: simA.url, A_TOKEN: TOKEN_A, B_URL: simB.url, B_TOKEN: TOKEN_B });
    ws.writeDirectory(
      { users: people(1, 6), groups: [{ externalId: 'g-1', displayName: 'Alpha Team', members: ['u-1', 'u-2', 'u-3'] }] },
      'dir-a.yaml',
    );
    ws.writeDirectory({ users: people(201, 204), groups: [] }, 'dir-b.yaml');
    ws.writeConfigObject({
      ...daemonSharedConfig(ws),
      tenants: [
        tenantConfig('alpha', { envPrefix: 'A', directory: 'dir-a.yaml' }),
        tenantConfig('beta', { envPrefix: 'B', directory: 'dir-b.yaml' }),
      ],
    });

    // No daemon yet: the triggers wait in the queue, and the second collapses into the first.
    const first = await ws.cli(['trigger', 'reconcile', '--config', ws.configPath]);
    const second = await ws.cli(['trigger', 'reconcile', '--config', ws.configPath]);
    expect(first.code).toBe(0);
    expect(second.code).toBe(0);
    const ids = (out: string): string[] => out.split('\n').filter(Boolean).map(jobOf);
    expect(first.stdout).toMatch(/tenant alpha enqueued[\s\S]*tenant beta enqueued/);
    expect(ids(second.stdout)).toEqual(ids(first.stdout));
    expect(new Set(ids(first.stdout)).size).toBe(2);
    expect((await jobHashes(ws, 'reconcile')).map((j) => j.data)).toEqual(
      expect.arrayContaining([
        { tenant: 'alpha', trigger: 'manual' },
        { tenant: 'beta', trigger: 'manual' },
      ]),
    );

    const d = await ws.spawnDaemon();
    expect(d.logs.find((l) => l.msg === 'daemon started')?.['tenants']).toEqual(['alpha', 'beta']);
    await waitFor(() => runsFinished([d], 'reconcile').length === 2, 'one run per tenant');
    const runs = runsFinished([d], 'reconcile');
    expect(runs.map((l) => l['tenant']).sort()).toEqual(['alpha', 'beta']);
    expect(runs.every((l) => l['result'] === 'success')).toBe(true);
    // Each tenant's objects on its own platform, sent with its own token (a wrong one is a 401).
    expect(simA.store.counts()).toEqual({ users: 6, groups: 1 });
    expect(simB.store.counts()).toEqual({ users: 4, groups: 0 });
    expect(simA.store.getGroupByDisplayName('Alpha Team')?.members).toHaveLength(3);
    for (const s of [simA, simB]) expect(s.requests.filter((r) => r.status >= 400)).toEqual([]);
    // Ledgers are per tenant.
    const r = ws.redis();
    expect(await r.hlen(`${ws.keyPrefix}:{alpha}:ledger:users`)).toBe(6);
    expect(await r.hlen(`${ws.keyPrefix}:{beta}:ledger:users`)).toBe(4);

    // Nothing else runs: the collapsed trigger did not produce a second run.
    await new Promise((res) => setTimeout(res, 1_000));
    expect(runsFinished([d], 'reconcile')).toHaveLength(2);
    expect((await d.stop()).code).toBe(0);
    for (const token of [TOKEN_A, TOKEN_B]) assertNoSecret(d.output(), token, 'daemon logs');
    // Each log line names one tenant (a process-wide tenant field would contradict beta's lines).
    const betaLines = d
      .output()
      .split('\n')
      .filter((l) => l.includes('"tenant":"beta"'));
    expect(betaLines.length).toBeGreaterThan(0);
    for (const line of betaLines) expect(line).not.toContain('"tenant":"alpha"');
  });

  it('a trigger during a running reconcile is kept: the tenant runs once more after it, with the new source', async () => {
    const platform = await sim(TOKEN_A, { faults: [{ kind: 'latency', latencyMs: 100, method: 'POST', pathPrefix: `${SCIM}/Users` }] });
    const ws = workspace({ SIM_URL: platform.url, SIM_TOKEN: TOKEN_A });
    ws.writeDirectory({ users: people(1, 20), groups: [] });
    ws.writeConfig({ daemon: { applyChunkSize: 5, concurrency: { apply: 1 } } });
    const d = await ws.spawnDaemon();
    const first = await ws.trigger();
    await d.waitForLog((l) => l.msg === 'reconcile plan');
    // The operator adds a user while the run is busy and triggers (twice): both name the active run.
    ws.writeDirectory({ users: [...people(1, 20), person(21)], groups: [] });
    expect(await ws.trigger()).toEqual(first);
    expect(await ws.trigger()).toEqual(first);
    expect(runsFinished([d], 'reconcile')).toHaveLength(0);

    await waitFor(() => runsFinished([d], 'reconcile').length === 2, 'the first run and the one triggered during it', 20_000);
    expect(runsFinished([d], 'reconcile').map((l) => l['result'])).toEqual(['success', 'success']);
    expect(platform.store.getUserByUserName(person(21).userName)).toBeDefined();
    expect(requestsTo(platform, 'POST', `${SCIM}/Users`)).toHaveLength(21);
    // The two triggers during the run collapsed into that one follow-up run.
    await new Promise((res) => setTimeout(res, 1_000));
    expect(runsFinished([d], 'reconcile')).toHaveLength(2);
    expect((await d.stop()).code).toBe(0);
  });
  it('a manual run that finds another run holding the tenant waits for it instead of being skipped', async () => {
    const platform = await sim(TOKEN_A);
    const ws = workspace({ SIM_URL: platform.url, SIM_TOKEN: TOKEN_A });
    ws.writeDirectory({ users: people(1, 5), groups: [] });
    ws.writeConfig({ daemon: { jobLockSeconds: 4 } });
    const d = await ws.spawnDaemon();
    // Another replica's run holds the tenant's lease for 3 s (taken once this daemon is up, so
    // its start-up time on a busy machine cannot use the 3 s up).
    await ws.redis().set(`${ws.keyPrefix}:{acme}:lease:reconcile`, '1 job:elsewhere', 'PX', 3_000);
    await ws.trigger();
    await d.waitForLog((l) => l.msg === 'another reconcile of this tenant is running; this run waits for it');
    expect(platform.store.counts().users).toBe(0);
    await waitFor(() => runsFinished([d], 'reconcile').length === 1, 'the waiting manual run, once the lease is free', 15_000);
    expect(runsFinished([d], 'reconcile').map((l) => l['result'])).toEqual(['success']);
    expect(platform.store.counts().users).toBe(5);
    expect((await d.stop()).code).toBe(0);
  });
});
