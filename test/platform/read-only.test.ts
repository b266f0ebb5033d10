/**
 * `plan cannot write`: the read-only client refuses every non-GET request at the dispatcher
 * with E_READ_ONLY, before anything reaches the socket; `plan` and the connectivity check
 * run on it, so they issue GETs only.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../src/errors.ts';
import { PlatformClient, type HttpMethod } from '../../src/platform/http-client.ts';
import { applyReconcile, planReconcile } from '../../src/reconcile/engine.ts';
import type { Simulator } from '../../src/simulator/index.ts';
import { createWorkspace, people, startSim } from '../helpers/reconcile-harness.ts';
import { rejection } from '../helpers/rejection.ts';
import { scimHarness, seedUsers, type ScimHarness } from './helpers/scim.ts';
import { loadConfig } from '../../src/config/load.ts';
import { buildReconcileContext } from '../../src/reconcile/from-config.ts';
import { createLogger } from '../../src/observability/logger.ts';

let h: ScimHarness | undefined;
let sim: Simulator | undefined;
afterEach(async () => {
  await h?.close();
  await sim?.close();
  h = undefined;
  sim = undefined;
});

describe('read-only platform client', () => {
  it('refuses POST, PUT, PATCH and DELETE with E_READ_ONLY before they reach the server; GET works', async () => {
    h = await scimHarness();
    const ro = new PlatformClient({ baseUrl: h.sim.url, token: 'test-token', allowInsecureHttp: true, readOnly: true });
    try {
      expect(ro.readOnly).toBe(true);
      const res = await ro.requestJson<{ totalResults: number }>('GET', '/api/scim/v2/Users', { route: 'scim_users' });
      expect(res.body?.totalResults).toBe(0);
      for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as HttpMethod[]) {
        const err = await rejection(
          ro.requestJson(method, '/api/scim/v2/Users/x?filter=secret', { route: 'scim_users', body: { userName: 'a@example.com' } }),
        );
        expect(err.code).toBe(ErrorCodes.READ_ONLY);
        expect(err.kind).toBe('fatal');
        expect(err.message).toContain(`refused ${method} /api/scim/v2/Users/x:`);
        expect(err.message).not.toContain('secret');
      }
      const streamed = await rejection(ro.stream('POST', '/api/scim/v2/Users', { route: 'scim_users' }));
      expect(streamed.code).toBe(ErrorCodes.READ_ONLY);
      expect(h.sim.requests.map((r) => r.method)).toEqual(['GET']);
      expect(h.sim.store.counts().users).toBe(0);
    } finally {
      await ro.close();
    }
  });

  it('a read-only view shares the connection; the writable parent keeps writing after the view is closed', async () => {
    h = await scimHarness();
    const [u] = seedUsers(h.sim, 1);
    const view = h.scim.readOnly();
    expect((await view.getUser(u!.id))?.userName).toBe(u!.userName);
    const err = await rejection(view.createUser({ schemas: [], userName: 'new@example.com' }));
    expect(err.code).toBe(ErrorCodes.READ_ONLY);
    expect(await rejection(view.patch('Users', u!.id, [{ op: 'replace', path: 'active', value: false }]))).toMatchObject({
      code: ErrorCodes.READ_ONLY,
    });
    expect(await rejection(view.delete('Users', u!.id))).toMatchObject({ code: ErrorCodes.READ_ONLY });
    expect(h.sim.requests.filter((r) => r.method !== 'GET')).toEqual([]);
    expect(h.sim.store.getUser(u!.id)?.active).toBe(true);
    // Closing the view leaves the parent's agent alone.
    await (view as unknown as { http: PlatformClient }).http.close();
    const created = await h.scim.createUser({ schemas: [], userName: 'new@example.com' });
    expect(created.adopted).toBe(false);
    expect(h.sim.store.getUser(created.resource.id)?.userName).toBe('new@example.com');
  });
});

describe('read-only view of a daemon client', () => {
  it("keeps the parent's rate limit and metrics hooks", async () => {
    h = await scimHarness();
    const seen: string[] = [];
    let waits = 0;
    const parent = new PlatformClient({
      baseUrl: h.sim.url,
      token: 'test-token',
      allowInsecureHttp: true,
      beforeRequest: async () => {
        waits++;
      },
      hooks: { onResponse: (e) => seen.push(`${e.method} ${e.status}`) },
    });
    try {
      const view = parent.readOnlyView();
      await view.requestJson('GET', '/api/scim/v2/Users', { route: 'scim_users' });
      expect(await rejection(view.requestJson('DELETE', '/api/scim/v2/Users/x', { route: 'scim_users' }))).toMatchObject({
        code: ErrorCodes.READ_ONLY,
      });
      expect(seen).toEqual(['GET 200']);
      expect(waits).toBe(2);
      expect(parent.readOnly).toBe(false);
    } finally {
      await parent.close();
    }
  });
});

describe('plan cannot write', () => {
  it('the CLI plan of creates, updates and deactivations sends GET requests only', async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, {
      directory: { users: people(1, 6), groups: [{ externalId: 'g-1', displayName: 'Eng', members: ['u-1', 'u-2'] }] },
    });
    ws.writeConfig();
    ws.writeDirectory({ users: people(1, 6), groups: [{ externalId: 'g-1', displayName: 'Eng', members: ['u-1', 'u-2'] }] });
    await ws.applyInProcess();
    // Now a joiner, a mover (renamed) and a leaver: the plan holds every kind of write.
    const users = people(2, 7);
    users[0] = { ...users[0]!, displayName: 'Renamed Two' };
    ws.writeDirectory({ users, groups: [{ externalId: 'g-1', displayName: 'Eng', members: ['u-2', 'u-7'] }] });
    sim.clearRequests();
    const run = await ws.plan();
    expect(run.code).toBe(0);
    expect(run.out.summary.changes).toBeGreaterThanOrEqual(4);
    expect(sim.requests.length).toBeGreaterThan(0);
    expect(sim.requests.filter((r) => r.method !== 'GET')).toEqual([]);

    // The same context, made read-only, cannot apply that plan: every write fails unsent.
    const loaded = await loadConfig(ws.configPath, ws.env);
    const ctx = await buildReconcileContext(loaded, createLogger({ level: 'silent' }), { readOnly: true });
    try {
      const planned = await planReconcile(ctx, { allowDeletes: true });
      sim.clearRequests();
      const result = await applyReconcile(ctx, planned, { concurrency: 1 });
      expect(result.failed.length).toBeGreaterThan(0);
      expect(result.failed.every((f) => f.code === ErrorCodes.READ_ONLY)).toBe(true);
      expect(result.aborted).toContain('read-only');
      expect(sim.requests.filter((r) => r.method !== 'GET')).toEqual([]);
    } finally {
      await ctx.close();
    }
  });

  it('validate --check-connectivity sends GET requests only', async () => {
    sim = await startSim({ serviceProviderConfig: false });
    const ws = createWorkspace(sim, { directory: { users: people(1, 2), groups: [] } });
    ws.writeConfig();
    ws.writeDirectory({ users: people(1, 2), groups: [] });
    const run = await ws.cli(['validate', '--check-connectivity', '--config', ws.configPath]);
    expect(run.code).toBe(0);
    expect(sim.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /api/scim/v2/ServiceProviderConfig', 'GET /api/scim/v2/Users']);
  });
});

describe('read-only user-attribute client (the plan phase of attribute sync)', () => {
  it('lists definitions but refuses to create one or upsert a value, before anything reaches the server', async () => {
    sim = await startSim();
    const http = new PlatformClient({ baseUrl: sim.url, token: 'e2e-secret-token-5b1f0c', allowInsecureHttp: true });
    const { UserAttributesClient } = await import('../../src/platform/user-attributes.ts');
    const view = new UserAttributesClient(http).readOnly();
    try {
      expect(await view.listDefinitions()).toEqual([]);
      expect(await rejection(view.createDefinition({ name: 'region', type: 'string' }))).toMatchObject({ code: ErrorCodes.READ_ONLY });
      expect(await rejection(view.upsertValue('u-1', 'a-1', 'emea'))).toMatchObject({ code: ErrorCodes.READ_ONLY });
      expect(sim.requests.map((r) => r.method)).toEqual(['GET']);
    } finally {
      await http.close();
    }
  });
});
