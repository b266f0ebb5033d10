import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.ts';
import { SCHEMA_ERROR } from '../../src/platform/scim/types.ts';

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({
    tokens: [
      { token: 'full' },
      { token: 'scoped', kind: 'api-key', deployments: ['1234'] },
      { token: 'scim-only', kind: 'scim' },
      { token: 'no-audit', permissions: ['DownloadData'] },
    ],
  });
});
afterAll(() => sim.close());

async function get(path: string, authorization?: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${sim.url}${path}`, { headers: authorization ? { authorization } : {} });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('SCIM authentication', () => {
  it.each([
    ['missing', undefined],
    ['malformed', 'Bearer'],
    ['unknown token', 'Bearer nope'],
    ['unknown scheme', 'Basic full'],
  ])('answers 401 with a SCIM error when the credential is %s', async (_what, header) => {
    const r = await get('/api/scim/v2/Users', header);
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ schemas: [SCHEMA_ERROR], status: '401' });
    expect(String(r.body['detail'])).not.toContain('nope');
  });

  it('accepts both Bearer and Api-Key on SCIM, on both path prefixes', async () => {
    expect((await get('/api/scim/v2/Users', 'Bearer full')).status).toBe(200);
    expect((await get('/api/scim/v2/Users', 'Api-Key full')).status).toBe(200);
    expect((await get('/scim/v2/Users', 'Bearer full')).status).toBe(200);
  });

  it('answers 403 to a deployment-scoped API key', async () => {
    const r = await get('/api/scim/v2/Users', 'Bearer scoped');
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ schemas: [SCHEMA_ERROR], status: '403' });
    expect(String(r.body['detail'])).toMatch(/not authorized for this target/);
  });
});

describe('audit export authentication', () => {
  const path = '/api/v1/audit-logs/export?start=2026-11-01&end=2026-11-01';

  it('accepts only Bearer (Api-Key is 401 with an { error } body)', async () => {
    const r = await get(path, 'Api-Key full');
    expect(r.status).toBe(401);
    expect(typeof r.body['error']).toBe('string');
    expect((await get(path)).status).toBe(401);
  });

  it('needs the AuditLogManage permission', async () => {
    const r = await get(path, 'Bearer no-audit');
    expect(r.status).toBe(403);
    expect(r.body['error']).toMatch(/AuditLogManage/);
  });

  it('refuses a SCIM-only token on the platform API', async () => {
    expect((await get(path, 'Bearer scim-only')).status).toBe(403);
  });

  it('lets an unscoped or deployment-scoped key with the permission export', async () => {
    for (const t of ['full', 'scoped']) {
      const res = await fetch(`${sim.url}${path}`, { headers: { authorization: `Bearer ${t}` } });
      expect(res.status).toBe(200);
      await res.body?.cancel();
    }
  });

  it('answers 403 when the audit-log feature is not on the plan', async () => {
    sim.audit.setFeatureEnabled(false);
    try {
      const r = await get(path, 'Bearer full');
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ error: 'Audit log feature is not enabled on this plan' });
    } finally {
      sim.audit.setFeatureEnabled(true);
    }
  });

  it('answers unknown platform paths with a JSON { error } 404 after auth', async () => {
    expect((await get('/api/v1/deployments', 'Bearer nope')).status).toBe(401);
    const r = await get('/api/v1/deployments', 'Bearer full');
    expect(r.status).toBe(404);
    expect(typeof r.body['error']).toBe('string');
  });
});
