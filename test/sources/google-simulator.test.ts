/**
 * The Google Directory API simulator itself, over HTTP with hand-built requests: the token
 * endpoint's JWT checks and error bodies, Google's page-size limits, page tokens bound to
 * their query, partial responses, and the Directory API error shape.
 */
import { createPrivateKey, sign } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GOOGLE_TOKEN_AUDIENCE, PAGE_LIMITS, generateServiceAccount } from '../../src/simulator/google/index.ts';
import { READ_SCOPES, startTestWorkspace, type TestWorkspace } from '../helpers/google-workspace.ts';

let ws: TestWorkspace;
let token: string;

function assertion(claims: Record<string, unknown>, keyJson = ws.sa.keyFileJson, alg = 'RS256'): string {
  const key = JSON.parse(keyJson) as { private_key: string };
  const enc = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const body = `${enc({ alg, typ: 'JWT' })}.${enc({ iss: ws.sa.account.clientEmail, aud: GOOGLE_TOKEN_AUDIENCE, iat: now, exp: now + 3600, scope: READ_SCOPES.join(' '), sub: ws.adminEmail, ...claims })}`;
  return `${body}.${sign('RSA-SHA256', Buffer.from(body), createPrivateKey(key.private_key)).toString('base64url')}`;
}

async function tokenRequest(
  a: string,
  grant = 'urn:ietf:params:oauth:grant-type:jwt-bearer',
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(ws.sim.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: grant, assertion: a }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies navigated in assertions
type Json = Record<string, any>;

async function api(
  path: string,
  query: Record<string, string | number> = {},
  bearer: string | null = token,
): Promise<{ status: number; body: Json }> {
  const url = new URL(`admin/directory/v1${path}`, ws.sim.rootUrl);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, String(v));
  const res = await fetch(url, bearer ? { headers: { authorization: `Bearer ${bearer}` } } : {});
  return { status: res.status, body: (await res.json()) as Json };
}

beforeAll(async () => {
  ws = await startTestWorkspace({ users: 620, groups: 3 });
  ws.sim.workspace.addGroup({
    email: 'big@example.com',
    members: Array.from({ length: 450 }, (_, i) => ({ key: `user${String(i).padStart(5, '0')}@example.com` })),
  });
  const r = await tokenRequest(assertion({}));
  expect(r.status).toBe(200);
  token = r.body['access_token'] as string;
});

afterAll(async () => {
  await ws?.close();
});

describe('Google simulator: token endpoint', () => {
  it('issues a bearer token for a valid delegated assertion', async () => {
    const r = await tokenRequest(assertion({}));
    expect(r.body).toMatchObject({ token_type: 'Bearer', expires_in: 3599 });
    expect(r.body['access_token']).toMatch(/^ya29\./);
  });

  it('answers like Google for each broken assertion', async () => {
    const other = generateServiceAccount({ clientEmail: ws.sa.account.clientEmail });
    const now = Math.floor(Date.now() / 1000);
    const cases: Array<[string, number, string, RegExp]> = [
      [assertion({}, other.keyFileJson), 400, 'invalid_grant', /^Invalid JWT Signature\.$/],
      [assertion({ aud: 'https://example.com/token' }), 400, 'invalid_grant', /Failed audience check/],
      [assertion({ iat: now - 7200, exp: now - 3600 }), 400, 'invalid_grant', /short-lived token/],
      [assertion({ iss: 'nobody@x.iam.gserviceaccount.com' }), 400, 'invalid_grant', /account not found/],
      [assertion({ sub: 'ghost@example.com' }), 400, 'invalid_grant', /^Invalid email or User ID$/],
      [assertion({ scope: '' }), 400, 'invalid_scope', /Empty or missing scope/],
      [
        assertion({ scope: 'https://www.googleapis.com/auth/admin.directory.user' }),
        401,
        'unauthorized_client',
        /not authorized for any of the scopes requested/,
      ],
      [assertion({}, ws.sa.keyFileJson, 'HS256'), 400, 'invalid_grant', /Signature/],
    ];
    for (const [a, status, error, description] of cases) {
      const r = await tokenRequest(a);
      expect(r.status, String(description)).toBe(status);
      expect(r.body['error']).toBe(error);
      expect(r.body['error_description']).toMatch(description);
    }
    expect((await tokenRequest(assertion({}), 'client_credentials')).body['error']).toBe('unsupported_grant_type');
  });
});

describe('Google simulator: Directory API', () => {
  it('pages users 100 by default and at most 500, with tokens bound to the query', async () => {
    const first = await api('/users', { customer: 'my_customer' });
    expect(first.body['users']).toHaveLength(100);
    const big = await api('/users', { customer: 'my_customer', maxResults: PAGE_LIMITS.users.max });
    expect(big.body['users']).toHaveLength(500);
    const rest = await api('/users', { customer: 'my_customer', maxResults: 500, pageToken: big.body['nextPageToken'] });
    expect(rest.body['users']).toHaveLength(121);
    expect(rest.body['nextPageToken']).toBeUndefined();
    const tooBig = await api('/users', { customer: 'my_customer', maxResults: 501 });
    expect(tooBig).toMatchObject({
      status: 400,
      body: {
        error: {
          code: 400,
          message: "Invalid value '501'. Values must be within the range: [1, 500]",
          errors: [{ reason: 'invalid', location: 'maxResults' }],
          status: 'INVALID_ARGUMENT',
        },
      },
    });
    const foreign = await api('/users', { customer: 'my_customer', query: 'isSuspended=true', pageToken: big.body['nextPageToken'] });
    expect(foreign.status).toBe(400);
  });

  it('members and groups are capped at 200 per page', async () => {
    const m = await api('/groups/big%40example.com/members', { maxResults: 200 });
    expect(m.body['members']).toHaveLength(200);
    expect((await api('/groups/big@example.com/members', { maxResults: 201 })).status).toBe(400);
    expect((await api('/groups', { customer: 'my_customer', maxResults: 201 })).status).toBe(400);
    expect((await api('/groups/nope@example.com/members')).body).toEqual({
      error: {
        code: 404,
        message: 'Resource Not Found: groupKey',
        errors: [{ message: 'Resource Not Found: groupKey', domain: 'global', reason: 'notFound' }],
        status: 'NOT_FOUND',
      },
    });
  });

  it('partial responses keep only the selected fields; an empty page has no list at all', async () => {
    const r = await api('/users', { customer: 'my_customer', maxResults: 2, fields: 'nextPageToken,users(id,name/fullName)' });
    expect(Object.keys(r.body).sort()).toEqual(['nextPageToken', 'users']);
    expect(r.body['users'][0]).toEqual({ id: expect.any(String), name: { fullName: 'Workspace Admin' } });
    const none = await api('/users', { customer: 'my_customer', query: "orgUnitPath='/Nowhere'" });
    expect(none.body).toEqual({ kind: 'admin#directory#users', etag: expect.any(String) });
    expect((await api('/users', { customer: 'my_customer', fields: 'users(id' })).status).toBe(400);
  });

  it('refuses requests without a token, without customer or domain, and for another domain', async () => {
    expect(await api('/users', { customer: 'my_customer' }, null)).toMatchObject({
      status: 401,
      body: { error: { errors: [{ reason: 'required' }], status: 'UNAUTHENTICATED' } },
    });
    expect(await api('/users', { customer: 'my_customer' }, 'ya29.forged')).toMatchObject({
      status: 401,
      body: { error: { errors: [{ reason: 'authError' }] } },
    });
    expect(await api('/users')).toMatchObject({ status: 400, body: { error: { message: 'Bad Request' } } });
    expect(await api('/users', { domain: 'other.org' })).toMatchObject({
      status: 403,
      body: { error: { message: 'Not Authorized to access this resource/api' } },
    });
  });

  it("a token without a route's scope gets 403 insufficientPermissions", async () => {
    ws.sim.setServiceAccounts([{ ...ws.sa.account, delegatedScopes: [...READ_SCOPES] }]);
    const r = await tokenRequest(assertion({ scope: READ_SCOPES[0] }));
    const narrow = r.body['access_token'] as string;
    const g = await api('/groups', { customer: 'my_customer' }, narrow);
    expect(g).toMatchObject({
      status: 403,
      body: {
        error: {
          message: 'Request had insufficient authentication scopes.',
          errors: [{ reason: 'insufficientPermissions' }],
          details: [{ reason: 'ACCESS_TOKEN_SCOPE_INSUFFICIENT' }],
        },
      },
    });
  });
});

describe('Google simulator: the simulate-google command', () => {
  it('runs as a process, writes a working key, and rate-limits every Nth request when asked', async () => {
    const { spawn } = await import('node:child_process');
    const { createInterface } = await import('node:readline');
    const { writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { BIN, runCli } = await import('../cli/run-cli.ts');
    const keyOut = join(ws.dir, 'cli-key.json');
    const child = spawn(
      process.execPath,
      [BIN, 'simulate-google', '--users', '30', '--groups', '6', '--key-out', keyOut, '--rate-limit-every', '1'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const line = await new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
      const info = JSON.parse(line) as { event: string; rootUrl: string; tokenUrl: string; keyFile: string; subject: string };
      expect(info).toMatchObject({ event: 'listening', keyFile: keyOut, subject: 'admin@example.com' });
      const config = join(ws.dir, 'cli-sim.yaml');
      const source = {
        type: 'google-workspace',
        serviceAccountKeyFile: info.keyFile,
        subject: info.subject,
        rootUrl: info.rootUrl,
        tokenUrl: info.tokenUrl,
        allowInsecureHttp: true,
        retry: { baseDelayMs: 5, maxDelayMs: 20 },
      };
      writeFileSync(
        config,
        JSON.stringify({
          tenant: 't',
          platform: { baseUrl: 'http://127.0.0.1:1', token: 'x', allowInsecureHttp: true },
          provisioning: { source },
        }),
      );
      const r = await runCli(['validate', '--config', config, '--check-connectivity']);
      // The key works (a token is issued); every Directory API call is then throttled until the retries run out.
      expect(r.stdout).toMatch(
        /source\s+failed\s+\[E_SOURCE_FAILED\] users\.list \(probe\) failed after 8 attempts \(HTTP 403 userRateLimitExceeded\)/,
      );
    } finally {
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  }, 30_000);
});
