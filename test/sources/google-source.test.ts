/**
 * The google-workspace source against the Directory API simulator over a real socket, with
 * Google's own clients (google-auth-library, @googleapis/admin) pointed at it by rootUrl and
 * tokenUrl: paging, mapping, nested groups, rate limits, cut pages, and the credential and
 * consent failures an operator meets on day one, each with the fix in the message.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mapUser } from '../../src/identity/mapping.ts';
import type { DesiredState, NormalizedUser } from '../../src/identity/model.ts';
import { compileScope } from '../../src/identity/scope.ts';
import { ErrorCodes, SyncError } from '../../src/errors.ts';
import { generateServiceAccount } from '../../src/simulator/google/index.ts';
import { googleWorkspaceSourceSchema, SCOPES, type GoogleWorkspaceSourceInput } from '../../src/sources/google/schema.ts';
import { GoogleWorkspaceSource } from '../../src/sources/google/source.ts';
import { startTestWorkspace, type TestWorkspace } from '../helpers/google-workspace.ts';

const USERS = 1234;
let ws: TestWorkspace;
let baseline: DesiredState;

const source = (over: Partial<GoogleWorkspaceSourceInput> = {}): GoogleWorkspaceSource =>
  new GoogleWorkspaceSource(googleWorkspaceSourceSchema.parse(ws.source(over)), { configDir: ws.dir });

async function failure(p: Promise<unknown>): Promise<SyncError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(SyncError);
  return e as SyncError;
}

beforeAll(async () => {
  ws = await startTestWorkspace({ users: USERS, groups: 12, suspendedEvery: 50, archivedEvery: 100 });
  const w = ws.sim.workspace;
  const d = w.domain;
  // Nested outside the selection, a CUSTOMER member, an external member.
  w.addGroup({ email: `inner@${d}`, name: 'Inner', members: [{ key: `user00010@${d}` }, { key: `user00011@${d}` }] });
  w.addGroup({
    email: `outer@${d}`,
    name: 'Outer',
    members: [{ key: `inner@${d}`, type: 'GROUP' }, { key: `user00012@${d}` }, { key: 'partner@elsewhere.org' }],
  });
  w.addGroup({ email: `everyone@${d}`, name: 'Everyone', members: [{ key: w.customerId, type: 'CUSTOMER' }] });
  baseline = await source({ users: { customSchemas: ['HR'] } }).read();
});

afterAll(async () => {
  await ws?.close();
});

describe('google-workspace source: reading', () => {
  it('reads every user across 500-user pages, each once, with Google ids as externalIds', () => {
    expect(baseline.users).toHaveLength(USERS + 1); // + the admin
    expect(baseline.stats['userPages']).toBe(Math.ceil((USERS + 1) / 500));
    expect(new Set(baseline.users.map((u) => u.externalId)).size).toBe(USERS + 1);
    const listed = ws.sim.workspace.listUsers();
    expect(baseline.users.map((u) => u.externalId).sort()).toEqual(listed.map((u) => u.id).sort());
    expect(baseline.rejected).toEqual([]);
  });

  it('suspended and archived users are inactive; everyone else is active', () => {
    const inactive = new Set(
      ws.sim.workspace
        .listUsers()
        .filter((u) => u.suspended || u.archived)
        .map((u) => u.id),
    );
    expect(inactive.size).toBeGreaterThan(30);
    expect(new Set(baseline.users.filter((u) => !u.active).map((u) => u.externalId))).toEqual(inactive);
    const archived = baseline.users.find((u) => u.attributes['archived'] === true)!;
    expect(archived.active).toBe(false);
  });

  it('aliases, organization fields and the requested custom schema are attributes', () => {
    const u = baseline.users.find((x) => x.userName === `user00005@${ws.sim.workspace.domain}`)!;
    expect(u).toMatchObject({
      givenName: 'User',
      familyName: 'Number 5',
      displayName: 'User Number 5',
      emails: [u.userName],
      active: true,
    });
    expect(u.attributes).toMatchObject({
      aliases: [{ value: `u00005@${ws.sim.workspace.domain}` }],
      orgUnitPath: '/Dept5',
      department: 'dept-5',
      customSchemas: { HR: { costCenter: 'CC-5', employeeNumber: 'E00005' } },
    });
  });

  it('scope filters and mapping rules reach aliases, org units and custom schema fields', () => {
    const pick = (filter: string): string[] =>
      baseline.users
        .filter(compileScope<NormalizedUser>(filter, 'provisioning.scope.users'))
        .map((u) => u.userName)
        .sort();
    expect(pick('aliases.value eq "u00005@example.com"')).toEqual(['user00005@example.com']);
    expect(pick('customSchemas.HR.employeeNumber eq "E00042"')).toEqual(['user00042@example.com']);
    expect(pick('orgUnitPath eq "/Dept7" and customSchemas.HR.costCenter eq "CC-17"')).toEqual(
      pick('customSchemas.HR.costCenter eq "CC-17"').filter((n) => Number(n.slice(4, 9)) % 10 === 7),
    );
    const u = baseline.users.find((x) => x.userName === 'user00042@example.com')!;
    expect(
      mapUser(u, {
        'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:costCenter': {
          from: 'attributes.customSchemas.HR.costCenter',
          createOnly: false,
        },
      }).resource,
    ).toMatchObject({
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { costCenter: 'CC-2' },
    });
  });

  it('custom schemas are only read when asked for (projection=custom)', async () => {
    const plain = await source().read();
    expect(plain.users.every((u) => u.attributes['customSchemas'] === undefined)).toBe(true);
    const req = ws.sim.requests.filter((r) => r.route === 'users').at(-1)!;
    expect(req.query).toMatchObject({ projection: 'basic', maxResults: '500', customer: 'my_customer' });
  });

  it('nested groups are flattened and a cycle is cut; a nested group outside the selection is walked, not provisioned', () => {
    const by = new Map(baseline.groups.map((g) => [g.displayName, new Set(g.members)]));
    const id = (n: number): string => ws.sim.workspace.user(`user${String(n).padStart(5, '0')}@${ws.sim.workspace.domain}`)!.id;
    // Group 0 ⊃ Group 1 ⊃ Group 2.
    for (const m of by.get('Group 2')!) expect(by.get('Group 0')!.has(m)).toBe(true);
    // Group 3 ⇄ Group 4: both end with the union.
    expect(by.get('Group 3')).toEqual(by.get('Group 4'));
    expect(by.get('Group 3')!.has(id(3)) && by.get('Group 3')!.has(id(4))).toBe(true);
    expect(baseline.stats['groupsInCycles']).toBe(2);
    expect(by.get('Outer')).toEqual(new Set([id(10), id(11), id(12)]));
    expect(baseline.stats['membersOutsideScope']).toBeGreaterThanOrEqual(1); // partner@elsewhere.org
  });

  it('a CUSTOMER member means every user read', () => {
    const everyone = baseline.groups.find((g) => g.displayName === 'Everyone')!;
    expect(everyone.members).toHaveLength(USERS + 1);
  });

  it('an explicit group list reads just those groups, and their nested groups for membership', async () => {
    const d = ws.sim.workspace.domain;
    const st = await source({ groups: { emails: [`outer@${d}`] } }).read();
    expect(st.groups.map((g) => g.displayName)).toEqual(['Outer']);
    expect(st.groups[0]!.members).toHaveLength(3);
    expect(st.stats['nestedGroupsRead']).toBe(1);
    const missing = await failure(source({ groups: { emails: [`nope@${d}`] } }).read());
    expect(missing.message).toMatch(/group nope@example\.com does not exist/);
  });

  it('a users query narrows the users; members outside it are skipped, not invented', async () => {
    const st = await source({ users: { query: "orgUnitPath='/Dept3'" } }).read();
    expect(st.users.length).toBeGreaterThan(100);
    expect(st.users.every((u) => u.attributes['orgUnitPath'] === '/Dept3')).toBe(true);
    const ids = new Set(st.users.map((u) => u.externalId));
    for (const g of st.groups) for (const m of g.members) expect(ids.has(m)).toBe(true);
  });

  it('a source returning no users is refused (the guard against "Google said nobody")', async () => {
    const e = await failure(source({ users: { query: "orgUnitPath='/Nowhere'" } }).read());
    expect(e.code).toBe(ErrorCodes.SOURCE_FAILED);
    expect(e.message).toMatch(/returned no usable users .*refusing an empty directory/);
    const allowed = await source({ users: { query: "orgUnitPath='/Nowhere'" }, allowEmpty: true, groups: false }).read();
    expect(allowed.users).toEqual([]);
  });
});

describe('google-workspace source: throttling and broken pages', () => {
  it('rate limits (429, 403 userRateLimitExceeded, 403 rateLimitExceeded) and 503s back off and the read completes identically', async () => {
    ws.sim.setFaults([
      { kind: 'rate-limit-429', route: 'users', page: 2, times: 2 },
      { kind: 'user-rate-limit-403', route: 'members', times: 3 },
      { kind: 'rate-limit-403', route: 'groups', times: 1 },
      { kind: 'unavailable', route: 'users', page: 3, times: 1, retryAfterSeconds: 0 },
    ]);
    const st = await source({ users: { customSchemas: ['HR'] } }).read();
    ws.sim.setFaults([]);
    expect(st.stats['retries']).toBe(7);
    expect(st.users).toEqual(baseline.users);
    expect(st.groups).toEqual(baseline.groups);
  });

  it('throttled beyond the retry budget: the read fails and names the page', async () => {
    ws.sim.setFaults([{ kind: 'user-rate-limit-403', route: 'users', page: 2 }]);
    const e = await failure(source().read());
    ws.sim.setFaults([]);
    expect(e.code).toBe(ErrorCodes.SOURCE_FAILED);
    expect(e.message).toMatch(/users\.list page 2 failed after 4 attempts \(HTTP 403 userRateLimitExceeded\); nothing was changed/);
  });

  it('a page cut short is retried, and fails the read when it stays cut', async () => {
    ws.sim.setFaults([{ kind: 'truncate', route: 'members', times: 1 }]);
    const once = await source().read();
    expect(once.stats['retries']).toBe(1);
    ws.sim.setFaults([{ kind: 'truncate', route: 'users', page: 3 }]);
    const e = await failure(source().read());
    ws.sim.setFaults([]);
    expect(e.message).toMatch(/users\.list page 3: the response was cut short or not JSON after 4 attempts/);
  });

  it('a connection reset mid-read is retried', async () => {
    ws.sim.setFaults([{ kind: 'reset', route: 'users', page: 1, times: 1 }]);
    const st = await source().read();
    ws.sim.setFaults([]);
    expect(st.users).toHaveLength(USERS + 1);
    expect(st.stats['retries']).toBe(1);
  });
});

describe('google-workspace source: credentials and consent, each with its fix', () => {
  it('check() obtains a token and reads one user', async () => {
    const msg = await source().check();
    expect(msg).toMatch(
      /^token for admin@example\.com via directory-sync@sim-project\.iam\.gserviceaccount\.com .*users\.list returned admin@example\.com$/,
    );
  });

  it("a key that is not the account's current key: E_AUTH_INVALID naming the account", async () => {
    const other = generateServiceAccount({ clientEmail: ws.sa.account.clientEmail });
    const path = join(ws.dir, 'old-key.json');
    writeFileSync(path, other.keyFileJson);
    const e = await failure(source({ serviceAccountKeyFile: path }).check());
    expect(e.code).toBe(ErrorCodes.AUTH_INVALID);
    expect(e.message).toMatch(/rejected the signature of the service account key for directory-sync@sim-project.*create a key/);
    expect(e.message).not.toContain('PRIVATE KEY');
  });

  it('a subject that is not a user, and one that is not an administrator', async () => {
    const ghost = await failure(source({ subject: 'ghost@example.com' }).check());
    expect(ghost.code).toBe(ErrorCodes.AUTH_INVALID);
    expect(ghost.message).toMatch(/subject ghost@example\.com is not a user of this Google Workspace/);
    const plain = await failure(source({ subject: 'user00001@example.com' }).check());
    expect(plain.code).toBe(ErrorCodes.AUTH_FORBIDDEN);
    expect(plain.message).toMatch(/user00001@example\.com may not read the directory: subject must be a Workspace administrator/);
    // What is kept of the failure carries neither the bearer token nor the signed assertion.
    for (const e of [ghost, plain]) {
      const cause = e.cause as Error;
      expect(`${e.message} ${cause.message} ${JSON.stringify(cause)} ${JSON.stringify(e)}`).not.toMatch(/ya29\.|eyJ|PRIVATE KEY/);
      expect(Object.keys(cause)).toEqual([]);
    }
  });

  it('delegation not granted, and a scope missing from the grant, are told apart', async () => {
    const accounts = [ws.sa.account];
    ws.sim.setServiceAccounts([{ ...ws.sa.account, delegatedScopes: undefined } as never]);
    const none = await failure(source().read());
    expect(none.code).toBe(ErrorCodes.AUTH_FORBIDDEN);
    expect(none.message).toMatch(new RegExp(`domain-wide delegation is not granted to client ID ${ws.sa.account.clientId}`));
    ws.sim.setServiceAccounts([{ ...ws.sa.account, delegatedScopes: [SCOPES.users, SCOPES.groups] }]);
    const partial = await failure(source().read());
    expect(partial.code).toBe(ErrorCodes.AUTH_FORBIDDEN);
    expect(partial.message).toMatch(/lacks scope https:\/\/www\.googleapis\.com\/auth\/admin\.directory\.group\.member\.readonly/);
    // Users only: the narrower grant is enough.
    await expect(source({ groups: false }).check()).resolves.toMatch(/scopes: admin\.directory\.user\.readonly\)/);
    ws.sim.setServiceAccounts(accounts);
  });

  it('the Admin SDK API disabled in the project', async () => {
    ws.sim.setApiEnabled(false);
    const e = await failure(source().check());
    ws.sim.setApiEnabled(true);
    expect(e.code).toBe(ErrorCodes.AUTH_FORBIDDEN);
    expect(e.message).toMatch(/Admin SDK API is not enabled .*project 123456789012.*enable it/);
  });

  it('a wrong customer id is a config error; a key file that is not a key says so', async () => {
    const e = await failure(source({ customer: 'C0other99' }).check());
    expect(e.code).toBe(ErrorCodes.CONFIG_INVALID);
    const bad = join(ws.dir, 'not-a-key.json');
    writeFileSync(bad, '{"type":"authorized_user"}');
    const k = await failure(source({ serviceAccountKeyFile: bad }).check());
    expect(k.message).toMatch(/is not a service account key/);
  });
});

describe('google-workspace source: config', () => {
  it('refuses plain http to a non-loopback host, an inline key, and customer with domain', () => {
    const base = { type: 'google-workspace', serviceAccountKeyFile: 'k.json', subject: 'admin@example.com' } as const;
    expect(googleWorkspaceSourceSchema.safeParse({ ...base, rootUrl: 'http://admin.example.com/' }).error?.issues[0]?.message).toMatch(
      /rootUrl uses plain http/,
    );
    expect(
      googleWorkspaceSourceSchema.safeParse({ ...base, rootUrl: 'http://10.0.0.1/', allowInsecureHttp: true }).error?.issues[0]?.message,
    ).toMatch(/only for loopback/);
    expect(googleWorkspaceSourceSchema.safeParse({ ...base, serviceAccountKey: '{}' }).success).toBe(false);
    expect(googleWorkspaceSourceSchema.safeParse({ ...base, customer: 'my_customer', domain: 'example.com' }).success).toBe(false);
    const ok = googleWorkspaceSourceSchema.parse(base);
    expect(ok).toMatchObject({
      rootUrl: 'https://admin.googleapis.com/',
      tokenUrl: 'https://oauth2.googleapis.com/token',
      groups: { flattenNested: true },
    });
  });
});
