/**
 * The Google simulator's Reports API endpoint over HTTP with hand-built requests: an
 * administrator's edit becomes an admin activity of Google's shape (id.time,
 * id.uniqueQualifier, actor, USER_SETTINGS/GROUP_SETTINGS events with their parameters),
 * listed newest first only after the configured lag, paged with tokens bound to the query,
 * and refused without the reports scope.
 */
import { createPrivateKey, sign } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GOOGLE_TOKEN_AUDIENCE, REPORTS_SCOPES, type AdminActivity } from '../../src/simulator/google/index.ts';
import { SCOPES } from '../../src/sources/google/schema.ts';
import { READ_SCOPES, startTestWorkspace, type TestWorkspace } from '../helpers/google-workspace.ts';

let ws: TestWorkspace;

async function tokenFor(scopes: string[]): Promise<string> {
  const key = JSON.parse(ws.sa.keyFileJson) as { private_key: string };
  const enc = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const body = `${enc({ alg: 'RS256', typ: 'JWT' })}.${enc({ iss: ws.sa.account.clientEmail, aud: GOOGLE_TOKEN_AUDIENCE, iat: now, exp: now + 3600, scope: scopes.join(' '), sub: ws.adminEmail })}`;
  const assertion = `${body}.${sign('RSA-SHA256', Buffer.from(body), createPrivateKey(key.private_key)).toString('base64url')}`;
  const res = await fetch(ws.sim.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }),
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

interface Page {
  kind?: string;
  items?: AdminActivity[];
  nextPageToken?: string;
  error?: { code: number; errors: Array<{ reason: string }> };
}

async function activities(
  token: string,
  query: Record<string, string | number> = {},
  app = 'admin',
): Promise<{ status: number; body: Page }> {
  const url = new URL(`admin/reports/v1/activity/users/all/applications/${app}`, ws.sim.rootUrl);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, String(v));
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: (await res.json()) as Page };
}

let token = '';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  ws = await startTestWorkspace({ users: 5, groups: 2, delegatedScopes: [...READ_SCOPES, SCOPES.reports] });
  token = await tokenFor([SCOPES.reports]);
});

afterAll(async () => {
  await ws?.close();
});

describe('Google simulator: Reports API admin activities', () => {
  it('a suspended user is an admin activity of Google shape, visible only after the lag', async () => {
    const w = ws.sim.workspace;
    w.activity.lagMs = 300;
    const start = new Date().toISOString();
    w.updateUser(`user00001@${w.domain}`, (u) => {
      u.suspended = true;
    });
    const early = await activities(token, { startTime: start });
    expect(early.status).toBe(200);
    expect(early.body).toEqual({ kind: 'admin#reports#activities', etag: expect.any(String) });
    await sleep(350);
    const r = await activities(token, { startTime: start });
    expect(r.body.items).toHaveLength(1);
    const a = r.body.items![0]!;
    expect(a).toMatchObject({
      kind: 'admin#reports#activity',
      id: { applicationName: 'admin', customerId: w.customerId },
      actor: { callerType: 'USER', email: `admin@${w.domain}` },
      events: [{ type: 'USER_SETTINGS', name: 'SUSPEND_USER', parameters: [{ name: 'USER_EMAIL', value: `user00001@${w.domain}` }] }],
    });
    expect(a.id.uniqueQualifier).toMatch(/^-?\d+$/);
    expect(Date.parse(a.id.time)).toBeGreaterThanOrEqual(Date.parse(start));
    w.activity.lagMs = 0;
  });

  it('group and user events carry Google event names and parameters, newest first', async () => {
    const w = ws.sim.workspace;
    const start = new Date(Date.now() - 1).toISOString();
    w.setMembers(`group0000@${w.domain}`, [{ key: `user00002@${w.domain}` }]);
    w.renameGroup(`group0001@${w.domain}`, 'Renamed');
    w.updateUser(`user00003@${w.domain}`, (u) => {
      u.primaryEmail = `moved03@${w.domain}`;
      u.orgUnitPath = '/Elsewhere';
    });
    w.removeUser(`user00004@${w.domain}`);
    const r = await activities(token, { startTime: start });
    const names = r.body.items!.map((a) => a.events[0]!.name);
    expect(names).toContain('REMOVE_GROUP_MEMBER');
    expect(names).toContain('CHANGE_GROUP_NAME');
    expect(names).toContain('RENAME_USER');
    expect(names).toContain('MOVE_USER_TO_ORG_UNIT');
    expect(names[0]).toBe('DELETE_USER');
    const times = r.body.items!.map((a) => a.id.time);
    expect([...times].sort().reverse()).toEqual(times);
    const rename = r.body.items!.find((a) => a.events[0]!.name === 'RENAME_USER')!;
    expect(rename.events[0]!.parameters).toEqual([
      { name: 'USER_EMAIL', value: `user00003@${w.domain}` },
      { name: 'NEW_VALUE', value: `moved03@${w.domain}` },
    ]);
    const change = r.body.items!.find((a) => a.events[0]!.name === 'CHANGE_GROUP_NAME')!;
    expect(change.events[0]).toMatchObject({
      type: 'GROUP_SETTINGS',
      parameters: expect.arrayContaining([{ name: 'NEW_VALUE', value: 'Renamed' }]),
    });
  });

  it('pages with maxResults and a page token bound to its query', async () => {
    const first = await activities(token, { maxResults: 3 });
    expect(first.body.items).toHaveLength(3);
    expect(first.body.nextPageToken).toBeDefined();
    const second = await activities(token, { maxResults: 3, pageToken: first.body.nextPageToken! });
    expect(second.body.items!.map((a) => a.id.uniqueQualifier)).not.toContain(first.body.items![0]!.id.uniqueQualifier);
    const rebound = await activities(token, { maxResults: 3, startTime: '2020-01-01T00:00:00Z', pageToken: first.body.nextPageToken! });
    expect(rebound.status).toBe(400);
    expect((await activities(token, { maxResults: 1001 })).status).toBe(400);
    expect((await activities(token, { startTime: 'yesterday' })).status).toBe(400);
  });

  it('is refused without a reports scope, and for another application', async () => {
    const directoryOnly = await tokenFor(READ_SCOPES);
    const r = await activities(directoryOnly);
    expect(r.status).toBe(403);
    expect(r.body.error?.errors[0]?.reason).toBe('insufficientPermissions');
    expect(REPORTS_SCOPES).toContain(SCOPES.reports);
    expect((await activities(token, {}, 'drive')).status).toBe(400);
  });
});
