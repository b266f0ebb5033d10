/**
 * Who may read the status page: a real server on port 0 over a fixed backend holding personal
 * data. Anonymous requests get the login page and nothing else; the read token signs in (a
 * session cookie that is not the token) or is sent as a bearer token; a proxy's identity
 * header counts only from an allowlisted peer; unknown Host names are refused before anything.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FAILURES_PER_PEER } from '../../src/ui/failed-credentials.ts';
import { SESSION_COOKIE } from '../../src/ui/session.ts';
import { ACTION_TOKEN, READ_TOKEN, call, expectNoPersonalData, type PageUnderTest, startPage } from './support.ts';

let page: PageUnderTest | undefined;
afterEach(async () => {
  await page?.close();
  page = undefined;
});

const cookieOf = (setCookie: string | string[] | undefined): string => {
  const line = (Array.isArray(setCookie) ? setCookie[0] : setCookie) ?? '';
  return line.split(';')[0] ?? '';
};

describe('reading the status page', () => {
  it('an anonymous request gets the login page (401) and no personal data, tenant or count', async () => {
    page = await startPage();
    for (const path of ['/ui', '/ui/tenants/acme', '/ui/tenants/acme?user=alice', '/ui/nothing', '/ui/login']) {
      const r = await call(page.port, path);
      expect(r.status, path).toBe(path === '/ui/login' ? 200 : 401);
      expect(r.body).toContain('<h1>Sign in</h1>');
      // The page to return to is the visitor's own request, echoed back; nothing else is about the tenant.
      const body = r.body.replace(/name="next" value="[^"]*"/, '');
      expect(body).not.toContain('acme');
      expectNoPersonalData(body, path);
    }
    expect((await call(page.port, '/ui')).headers['www-authenticate']).toMatch(/^Bearer /);
    expect(page.backend.calls).toEqual([]);
    // Assets carry no data and the login page needs them.
    expect((await call(page.port, '/ui/assets/app.css')).status).toBe(200);
  });

  it('signing in with the read token sets an HttpOnly, SameSite=Strict session cookie that is not the token; signing out ends it', async () => {
    page = await startPage();
    const wrong = await call(page.port, '/ui/login', { form: { token: 'not-the-read-token-000', next: '/ui/tenants/acme' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toMatch(/The read token is wrong/);
    expect(wrong.headers['set-cookie']).toBeUndefined();

    const ok = await call(page.port, '/ui/login', { form: { token: READ_TOKEN, next: '/ui/tenants/acme' } });
    expect(ok.status).toBe(303);
    expect(ok.headers.location).toBe('/ui/tenants/acme');
    const set = String(ok.headers['set-cookie']);
    expect(set).toMatch(new RegExp(`^${SESSION_COOKIE}=v1\\.`));
    expect(set).toMatch(/; Path=\/ui; Max-Age=28800; HttpOnly; SameSite=Strict$/);
    expect(set).not.toContain(READ_TOKEN);
    const cookie = cookieOf(ok.headers['set-cookie']);

    const tenant = await call(page.port, '/ui/tenants/acme', { headers: { cookie } });
    expect(tenant.status).toBe(200);
    expect(tenant.body).toContain('alice.personal@example.com');
    expect(tenant.body).toContain('Sign out');

    // A changed signature or an altered expiry is no session.
    const tampered = cookie.replace(/\.(\d+)\./, (_m, exp: string) => `.${Number(exp) + 1000}.`);
    expect((await call(page.port, '/ui', { headers: { cookie: tampered } })).status).toBe(401);

    const out = await call(page.port, '/ui/logout', { form: {} });
    expect(out.status).toBe(303);
    expect(String(out.headers['set-cookie'])).toMatch(new RegExp(`^${SESSION_COOKIE}=; Path=/ui; Max-Age=0`));
  });

  it('a session expires after daemon.ui.sessionMinutes', async () => {
    let now = Date.parse('2026-11-28T03:00:00Z');
    page = await startPage({ sessionMinutes: 10 }, { now: () => now });
    const cookie = cookieOf((await call(page.port, '/ui/login', { form: { token: READ_TOKEN } })).headers['set-cookie']);
    expect((await call(page.port, '/ui', { headers: { cookie } })).status).toBe(200);
    now += 11 * 60_000;
    expect((await call(page.port, '/ui', { headers: { cookie } })).status).toBe(401);
  });

  it('a session signed with another read token is refused (changing the token ends every session)', async () => {
    page = await startPage();
    const cookie = cookieOf((await call(page.port, '/ui/login', { form: { token: READ_TOKEN } })).headers['set-cookie']);
    await page.close();
    page = await startPage({}, { readToken: 'a-rotated-read-token-77aa00' });
    expect((await call(page.port, '/ui', { headers: { cookie } })).status).toBe(401);
  });

  it('scripts and probes send the read token as Authorization: Bearer', async () => {
    page = await startPage();
    const ok = await call(page.port, '/ui', { headers: { authorization: `Bearer ${READ_TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(ok.body).toContain('acme');
    const bad = await call(page.port, '/ui', { headers: { authorization: 'Bearer not-the-read-token-000' } });
    expect(bad.status).toBe(401);
    expect(bad.body).not.toContain('acme');
  });

  it('a login from another site is refused (login CSRF)', async () => {
    page = await startPage();
    const r = await call(page.port, '/ui/login', { form: { token: READ_TOKEN }, headers: { origin: 'http://evil.example' } });
    expect(r.status).toBe(403);
    expect(r.headers['set-cookie']).toBeUndefined();
  });

  it('after too many failed credentials from one peer, even the right token is refused with 429 and Retry-After', async () => {
    page = await startPage();
    for (let i = 0; i < FAILURES_PER_PEER; i++)
      expect((await call(page.port, '/ui/login', { form: { token: `wrong-token-${i}-000000` } })).status).toBe(401);
    const blocked = await call(page.port, '/ui/login', { form: { token: READ_TOKEN } });
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect(blocked.headers['set-cookie']).toBeUndefined();
    expect((await call(page.port, '/ui', { headers: { authorization: `Bearer ${READ_TOKEN}` } })).status).toBe(429);
  });

  it('wrong action tokens are rate-limited too', async () => {
    page = await startPage({}, { actions: true });
    const headers = { authorization: `Bearer ${READ_TOKEN}` };
    for (let i = 0; i < FAILURES_PER_PEER; i++)
      expect(
        (await call(page.port, '/ui/tenants/acme/actions/trigger', { headers, form: { token: `wrong-action-${i}-0000` } })).status,
      ).toBe(403);
    const blocked = await call(page.port, '/ui/tenants/acme/actions/trigger', { headers, form: { token: ACTION_TOKEN } });
    expect(blocked.status).toBe(429);
    expect(page.backend.calls.filter((c) => c.startsWith('trigger'))).toEqual([]);
  });

  it('an action still needs the action token after signing in', async () => {
    page = await startPage({}, { actions: true });
    const headers = { authorization: `Bearer ${READ_TOKEN}` };
    expect((await call(page.port, '/ui/tenants/acme/actions/trigger', { headers, form: { token: READ_TOKEN } })).status).toBe(403);
    const ok = await call(page.port, '/ui/tenants/acme/actions/trigger', { headers, form: { token: ACTION_TOKEN } });
    expect(ok.status).toBe(303);
    expect(page.backend.calls).toContain('trigger acme');
    // Signed out, the action token alone reads nothing and changes nothing.
    expect((await call(page.port, '/ui/tenants/acme/actions/trigger', { form: { token: ACTION_TOKEN } })).status).toBe(401);
  });

  it('a Host name that is not allowed is refused before sign-in and data (DNS rebinding)', async () => {
    page = await startPage({ allowedHosts: ['scim-audit-sync.ops.svc'] });
    const auth = { authorization: `Bearer ${READ_TOKEN}` };
    const rebound = await call(page.port, '/ui', { headers: { ...auth, host: `attacker.example:${page.port}` } });
    expect(rebound.status).toBe(421);
    expect(rebound.body).not.toContain('acme');
    expect((await call(page.port, '/ui/login', { headers: { host: 'attacker.example' } })).status).toBe(421);
    for (const host of [`localhost:${page.port}`, `[::1]:${page.port}`, 'scim-audit-sync.ops.svc:9465', 'SCIM-AUDIT-SYNC.ops.svc'])
      expect((await call(page.port, '/ui', { headers: { ...auth, host } })).status, host).toBe(200);
  });
});

describe('a trusted reverse proxy (oauth2-proxy)', () => {
  it('its X-Forwarded-User is accepted from an allowlisted peer only', async () => {
    page = await startPage({ trustedProxy: { addresses: ['127.0.0.2'] } }, { readToken: null });
    const viaProxy = await call(page.port, '/ui', { localAddress: '127.0.0.2', headers: { 'x-forwarded-user': 'ops.alice' } });
    expect(viaProxy.status).toBe(200);
    expect(viaProxy.body).toContain('Signed in as <strong>ops.alice</strong>');
    const authRequest = await call(page.port, '/ui', { localAddress: '127.0.0.2', headers: { 'x-auth-request-user': 'ops.bob' } });
    expect(authRequest.status).toBe(200);
    // The same header from any other peer is only a header.
    const forged = await call(page.port, '/ui', { headers: { 'x-forwarded-user': 'ops.alice' } });
    expect(forged.status).toBe(401);
    expect(forged.body).not.toContain('acme');
    expect(forged.body).toContain('single sign-on proxy');
  });

  it('a CIDR block admits its addresses; the cookie is Secure behind an https proxy', async () => {
    page = await startPage({ trustedProxy: { addresses: ['127.0.0.2/31'] } });
    const r = await call(page.port, '/ui/login', {
      localAddress: '127.0.0.3',
      form: { token: READ_TOKEN },
      headers: { 'x-forwarded-proto': 'https' },
    });
    expect(String(r.headers['set-cookie'])).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
    const direct = await call(page.port, '/ui/login', { form: { token: READ_TOKEN }, headers: { 'x-forwarded-proto': 'https' } });
    expect(String(direct.headers['set-cookie'])).toMatch(/SameSite=Strict$/);
  });
});

describe('a read-only audience', () => {
  const AUDITOR_TOKEN = 'auditor-read-token-19d4e7c2b0';

  it('the redacted read token signs in to the redacted view; the read token to the full one', async () => {
    page = await startPage({}, { redactedReadToken: AUDITOR_TOKEN });
    const auditor = cookieOf((await call(page.port, '/ui/login', { form: { token: AUDITOR_TOKEN } })).headers['set-cookie']);
    const masked = await call(page.port, '/ui/tenants/acme', { headers: { cookie: auditor } });
    expect(masked.status).toBe(200);
    expectNoPersonalData(masked.body, 'the auditor view');
    expect(masked.body).toContain('redacted view');
    const asScript = await call(page.port, '/ui/tenants/acme', { headers: { authorization: `Bearer ${AUDITOR_TOKEN}` } });
    expectNoPersonalData(asScript.body, 'the auditor view by bearer');
    const operator = cookieOf((await call(page.port, '/ui/login', { form: { token: READ_TOKEN } })).headers['set-cookie']);
    expect((await call(page.port, '/ui/tenants/acme', { headers: { cookie: operator } })).body).toContain('alice.personal@example.com');
    // The role is signed into the session: an auditor's cookie cannot be turned into an operator's.
    const forged = auditor.replace(/\.r\./, '.f.');
    expect(forged).not.toBe(auditor);
    expect((await call(page.port, '/ui/tenants/acme', { headers: { cookie: forged } })).status).toBe(401);
  });

  it('proxy users outside fullAccessGroups / fullAccessUsers see the redacted view', async () => {
    page = await startPage({
      trustedProxy: { addresses: ['127.0.0.2'], fullAccessGroups: ['scim-operators'], fullAccessUsers: ['ops.root'] },
    });
    const as = (user: string, groups?: string) =>
      call(page!.port, '/ui/tenants/acme', {
        localAddress: '127.0.0.2',
        headers: { 'x-forwarded-user': user, ...(groups ? { 'x-forwarded-groups': groups } : {}) },
      });
    expect((await as('ops.alice', 'staff,scim-operators')).body).toContain('alice.personal@example.com');
    expect((await as('ops.root')).body).toContain('alice.personal@example.com');
    const auditor = await as('audit.bob', 'staff,auditors');
    expect(auditor.status).toBe(200);
    expectNoPersonalData(auditor.body, 'the view of a user outside the groups');
  });

  it('the same token for both is a configuration error', async () => {
    await expect(startPage({}, { redactedReadToken: READ_TOKEN })).rejects.toThrow(/read tokens are the same/);
  });
});

describe('without any way to sign in', () => {
  it('the page says how to configure one and shows nothing else', async () => {
    page = await startPage({}, { readToken: null });
    const r = await call(page.port, '/ui/tenants/acme');
    expect(r.status).toBe(401);
    expect(r.body).toContain('daemon.ui.readTokenFile');
    expect(r.body).not.toContain('<form class="login"');
    expectNoPersonalData(r.body, 'the page');
  });

  it('a read token shorter than 16 characters is a configuration error', async () => {
    await expect(startPage({}, { readToken: 'short' })).rejects.toThrow(/read token is too short/);
  });
});
