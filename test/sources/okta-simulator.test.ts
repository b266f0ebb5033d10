/**
 * The Okta simulator over a real socket, as a client that is not the SDK sees it: Link
 * paging and page sizes, search semantics, rate-limit headers and the 429, the token
 * endpoint's client-assertion checks, scope and role enforcement, Okta's error bodies.
 */
import { createSign } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateServiceApp, seedOrg, startOktaSimulator, type OktaSimulator } from '../../src/simulator/okta/index.ts';
import { oktaError } from '../../src/sources/okta/classify.ts';
import { OktaCallError } from '../../src/sources/okta/executor.ts';

const TOKEN = 'sim-token';
const app = generateServiceApp({ grantedScopes: ['okta.users.read', 'okta.groups.read'] });
let sim: OktaSimulator;

const get = (path: string, auth = `SSWS ${TOKEN}`) =>
  fetch(`${sim.url}${path}`, { headers: { authorization: auth, accept: 'application/json' } });

function assertion(claims: Record<string, unknown>, key = app.privateKeyPem, kid = app.app.publicKeys[0]?.kid): string {
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const body = `${b64({ alg: 'RS256', kid })}.${b64({ iss: app.app.clientId, sub: app.app.clientId, aud: `${sim.url}/oauth2/v1/token`, iat: now, exp: now + 300, ...claims })}`;
  return `${body}.${createSign('RSA-SHA256').update(body).sign(key).toString('base64url')}`;
}

async function token(
  scope: string,
  claims: Record<string, unknown> = {},
  key?: string,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${sim.url}/oauth2/v1/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      scope,
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: assertion(claims, key),
    }),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  sim = await startOktaSimulator({ apiTokens: [{ token: TOKEN, adminRole: 'READ_ONLY_ADMIN' }], serviceApps: [app.app] });
  seedOrg(sim.org, { users: 450, groups: 3, deprovisionedEvery: 10 });
});
afterAll(() => sim?.close());

describe('Okta simulator', () => {
  it('pages users 200 at a time through Link rel="next"; a plain list leaves DEPROVISIONED out, a search does not', async () => {
    const ids: string[] = [];
    let next: string | undefined = `${sim.url}/api/v1/users?limit=500`;
    let pages = 0;
    while (next) {
      const res = await fetch(next, { headers: { authorization: `SSWS ${TOKEN}` } });
      const page = (await res.json()) as Array<{ id: string; status: string }>;
      expect(page.length).toBeLessThanOrEqual(200);
      ids.push(...page.map((u) => u.id));
      expect(res.headers.get('link')).toContain('rel="self"');
      next = /<([^>]+)>; rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
      pages++;
    }
    expect(pages).toBe(3);
    expect(ids).toEqual([...ids].sort());
    expect(ids).toHaveLength(450 - 45);
    const all = (await (
      await get(`/api/v1/users?limit=200&search=${encodeURIComponent('status eq "DEPROVISIONED"')}`)
    ).json()) as unknown[];
    expect(all).toHaveLength(45);
  });

  it('search: lastUpdated gt is an instant comparison; a bad expression is 400 E0000031', async () => {
    const cut = sim.org.now();
    sim.org.updateUser('user00007@example.com', (u) => {
      u.profile['title'] = 'CTO';
    });
    const changed = (await (await get(`/api/v1/users?search=${encodeURIComponent(`lastUpdated gt "${cut}"`)}`)).json()) as Array<{
      profile: { login: string };
    }>;
    expect(changed.map((u) => u.profile.login)).toEqual(['user00007@example.com']);
    const bad = await get(`/api/v1/users?search=${encodeURIComponent('status eq ACTIVE')}`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ errorCode: 'E0000031', errorSummary: 'Invalid search criteria.' });
  });

  it('rate limits: X-Rate-Limit-* on every response, 429 E0000047 past the limit', async () => {
    sim.rateLimiter.limits.groups = 2;
    sim.rateLimiter.reset();
    const a = await get('/api/v1/groups');
    expect(a.headers.get('x-rate-limit-limit')).toBe('2');
    expect(a.headers.get('x-rate-limit-remaining')).toBe('1');
    expect(Number(a.headers.get('x-rate-limit-reset'))).toBeGreaterThan(Date.now() / 1000);
    await get('/api/v1/groups');
    const c = await get('/api/v1/groups');
    expect(c.status).toBe(429);
    expect(c.headers.get('x-rate-limit-remaining')).toBe('0');
    expect(await c.json()).toMatchObject({ errorCode: 'E0000047' });
    sim.rateLimiter.limits.groups = 500;
    sim.rateLimiter.reset();
  });

  it('the token endpoint verifies the client assertion: signature, audience, lifetime, scopes', async () => {
    const ok = await token('okta.users.read okta.groups.read');
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'okta.users.read okta.groups.read' });
    expect((await token('okta.users.read', {}, generateServiceApp().privateKeyPem)).json).toEqual({
      error: 'invalid_client',
      error_description: 'The client_assertion signature is invalid.',
    });
    expect((await token('okta.users.read', { aud: 'https://elsewhere/oauth2/v1/token' })).json['error_description']).toMatch(/audience/);
    expect((await token('okta.users.read', { exp: Math.floor(Date.now() / 1000) - 10 })).json['error_description']).toMatch(/expired/);
    expect((await token('okta.users.read', { exp: Math.floor(Date.now() / 1000) + 7200 })).json['error_description']).toMatch(/too far/);
    expect(await token('okta.users.manage')).toMatchObject({ status: 400, json: { error: 'invalid_scope' } });
  });

  it('a token without the scope a call needs: 403 insufficient_scope, classified with the scope to grant', async () => {
    const t = await token('okta.users.read');
    const auth = `Bearer ${t.json['access_token'] as string}`;
    expect((await get('/api/v1/users?limit=1', auth)).status).toBe(200);
    const res = await get('/api/v1/groups', auth);
    expect(res.status).toBe(403);
    const www = res.headers.get('www-authenticate') ?? '';
    expect(www).toMatch(/error="insufficient_scope"/);
    const e = new OktaCallError({
      status: 403,
      path: '/api/v1/groups',
      body: (await res.json()) as Record<string, unknown>,
      headers: { 'www-authenticate': www },
      attempts: 1,
    });
    const c = oktaError(e, {
      what: 'GET /api/v1/groups page 1',
      orgUrl: sim.url,
      mode: 'oauth',
      clientId: app.app.clientId,
      scopes: ['okta.users.read', 'okta.groups.read'],
    });
    expect(c.code).toBe('E_AUTH_FORBIDDEN');
    expect(c.message).toMatch(/lacks scope okta\.groups\.read\. Fix: .*Okta API Scopes → Grant okta\.groups\.read/);
    expect((await get('/api/v1/users', 'SSWS nope')).status).toBe(401);
  });
});
