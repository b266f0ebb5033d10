/**
 * The Entra simulator speaks the identity platform's and Graph's protocol, checked over a
 * real HTTPS socket with plain requests: metadata and tenant errors, the client secret
 * grant and its AADSTS errors, page limits and next links, advanced queries needing
 * ConsistencyLevel, permissions from the token's roles, and delta links.
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_ID, startTestTenant, type TestTenant } from '../helpers/entra-tenant.ts';

let t: TestTenant;
let agent: Agent;

async function call(
  path: string,
  init: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; json: Record<string, unknown>; headers: Record<string, unknown> }> {
  const url = path.startsWith('https:') ? path : `${t.sim.url}${path}`;
  const res = await request(url, {
    method: (init.method ?? 'GET') as 'GET',
    dispatcher: agent,
    ...(init.body !== undefined ? { body: init.body } : {}),
    headers: init.headers ?? {},
  });
  return { status: res.statusCode, json: (await res.body.json()) as Record<string, unknown>, headers: res.headers };
}

async function token(form: Record<string, string> = {}): Promise<{ status: number; json: Record<string, unknown> }> {
  return call(`/${t.sim.tenantId}/oauth2/v2.0/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: CLIENT_ID,
      client_secret: t.secret,
      scope: 'https://graph.microsoft.com/.default',
      ...form,
    }).toString(),
  });
}

async function graph(path: string, headers: Record<string, string> = {}) {
  const tk = (await token()).json['access_token'] as string;
  return call(path, { headers: { authorization: `Bearer ${tk}`, ...headers } });
}

beforeAll(async () => {
  t = await startTestTenant({ users: 1200, groups: 6 });
  agent = new Agent({ connect: { ca: readFileSync(t.caFile, 'utf8') } });
}, 60_000);

afterAll(async () => {
  await agent?.close();
  await t?.close();
});

describe('Entra simulator', () => {
  it('serves OpenID metadata for the tenant and AADSTS90002 for an unknown one', async () => {
    const ok = await call(`/${t.sim.tenantId}/v2.0/.well-known/openid-configuration`);
    expect(ok.json['token_endpoint']).toBe(`${t.sim.url}/${t.sim.tenantId}/oauth2/v2.0/token`);
    const bad = await call('/nowhere.example/v2.0/.well-known/openid-configuration');
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ error: 'invalid_request', error_codes: [90002] });
  });

  it('issues a JWT access token with the consented roles; a wrong secret is AADSTS7000215', async () => {
    const ok = await token();
    expect(ok.json).toMatchObject({ token_type: 'Bearer', expires_in: 3599 });
    const claims = JSON.parse(Buffer.from((ok.json['access_token'] as string).split('.')[1]!, 'base64url').toString()) as Record<
      string,
      unknown
    >;
    expect(claims).toMatchObject({ appid: CLIENT_ID, tid: t.sim.tenantId, roles: t.app.permissions });
    const bad = await token({ client_secret: 'nope' });
    expect(bad.status).toBe(401);
    expect(bad.json).toMatchObject({ error: 'invalid_client', error_codes: [7000215] });
    const scope = await token({ scope: 'https://graph.microsoft.com/User.Read.All' });
    expect(scope.json).toMatchObject({ error: 'invalid_scope' });
  });

  it('pages users at $top (at most 999) by @odata.nextLink, with $select', async () => {
    const first = await graph('/v1.0/users?$select=id,accountEnabled&$top=999');
    expect((first.json['value'] as unknown[]).length).toBe(999);
    expect(Object.keys((first.json['value'] as Record<string, unknown>[])[0]!).sort()).toEqual(['accountEnabled', 'id']);
    const next = first.json['@odata.nextLink'] as string;
    expect(next).toMatch(/\$skiptoken=/);
    const second = await graph(next);
    expect((second.json['value'] as unknown[]).length).toBe(201);
    expect(second.json['@odata.nextLink']).toBeUndefined();
    expect((await graph('/v1.0/users')).json['value']).toHaveLength(100);
    const tooBig = await graph('/v1.0/users?$top=1000');
    expect(tooBig.status).toBe(400);
  });

  it('an advanced filter needs ConsistencyLevel: eventual and $count', async () => {
    const plain = await graph("/v1.0/users?$filter=endswith(userPrincipalName,'00@contoso.example')");
    expect(plain.status).toBe(400);
    expect(plain.json).toMatchObject({ error: { code: 'Request_UnsupportedQuery' } });
    const adv = await graph("/v1.0/users?$filter=endswith(userPrincipalName,'00@contoso.example')&$count=true", {
      consistencylevel: 'eventual',
    });
    expect(adv.status).toBe(200);
    expect(adv.json['@odata.count']).toBe(12);
  });

  it('enforces application permissions from the token: 403 Authorization_RequestDenied', async () => {
    t.grant(['User.Read.All']);
    const denied = await graph('/v1.0/groups');
    expect(denied.status).toBe(403);
    expect(denied.json).toMatchObject({
      error: { code: 'Authorization_RequestDenied', message: 'Insufficient privileges to complete the operation.' },
    });
    t.grant(t.app.permissions ?? [], false);
    expect((await graph('/v1.0/users')).status).toBe(403);
    t.grant(['User.Read.All', 'GroupMember.Read.All', 'CustomSecAttributeAssignment.Read.All']);
  });

  it('delta: a delta link after the last page, then only what changed, @removed for deletions, 410 once expired', async () => {
    let link = '/v1.0/users/delta?$select=id,userPrincipalName';
    let pages = 0;
    let deltaLink: string | undefined;
    while (link) {
      const r = await graph(link, { prefer: 'odata.maxpagesize=500' });
      pages++;
      deltaLink = r.json['@odata.deltaLink'] as string | undefined;
      link = r.json['@odata.nextLink'] as string;
    }
    expect(pages).toBe(3);
    const d = t.sim.directory;
    const gone = d.listUsers()[5]!;
    d.deleteUser(gone.id);
    d.updateUser(d.listUsers()[6]!.id, (u) => {
      u.jobTitle = 'Lead';
    });
    const round = await graph(deltaLink!);
    const value = round.json['value'] as Array<Record<string, unknown>>;
    expect(value).toHaveLength(2);
    expect(value.find((v) => v['id'] === gone.id)).toEqual({ id: gone.id, '@removed': { reason: 'changed' } });
    t.sim.expireDeltaTokens();
    const expired = await graph(round.json['@odata.deltaLink'] as string);
    expect(expired.status).toBe(410);
  });

  it('throttles with Retry-After when told to', async () => {
    t.sim.setFaults([{ kind: 'throttle-429', route: 'users', times: 1, retryAfterSeconds: 7 }]);
    const r = await graph('/v1.0/users');
    t.sim.setFaults([]);
    expect(r.status).toBe(429);
    expect(r.headers['retry-after']).toBe('7');
    expect(r.json).toMatchObject({ error: { code: 'TooManyRequests' } });
  });
});
