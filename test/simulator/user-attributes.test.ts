/**
 * The simulator's user-attribute endpoints and the client adapter, over real sockets: exactly
 * the shapes docs/user-attributes.md assumes, both list shapes (bare array, `{ data, pagination }`
 * paged by offset/limit), type validation, 401/403 with `{ "error": "…" }`, and fault injection.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCodes, SyncError } from '../../src/errors.ts';
import { PlatformClient } from '../../src/platform/http-client.ts';
import { UserAttributesClient, listItems } from '../../src/platform/user-attributes.ts';
import { startSimulator, type Simulator } from '../../src/simulator/index.ts';

const TOKENS = [{ token: 'full' }, { token: 'scim-only', kind: 'scim' as const }, { token: 'no-attrs', permissions: ['AuditLogManage'] }];

function client(sim: Simulator, token = 'full'): { api: UserAttributesClient; http: PlatformClient } {
  const http = new PlatformClient({
    baseUrl: sim.url,
    token,
    allowInsecureHttp: true,
    retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 },
  });
  return { api: new UserAttributesClient(http), http };
}

async function raw(
  sim: Simulator,
  method: string,
  path: string,
  body?: unknown,
  token = 'full',
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${sim.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function rejection(p: Promise<unknown>): Promise<SyncError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof SyncError) return e;
    throw e;
  }
  throw new Error('expected a rejection');
}

describe('user-attribute endpoints (bare-array lists)', () => {
  let sim: Simulator;
  let userId: string;
  beforeAll(async () => {
    sim = await startSimulator({ tokens: TOKENS });
    userId = sim.store.createUser({ userName: 'ana@example.com' }).id;
  });
  afterAll(() => sim.close());

  it('creates definitions, lists them as a bare array, and refuses a duplicate name or an unknown type', async () => {
    const { api, http } = client(sim);
    try {
      const { definition, adopted } = await api.createDefinition({ name: 'region', type: 'string', description: 'Data region' });
      expect(adopted).toBe(false);
      expect(definition).toMatchObject({ name: 'region', type: 'string', description: 'Data region' });
      expect((await raw(sim, 'GET', '/api/v1/user-attributes/')).body).toEqual([
        { id: definition.id, name: 'region', type: 'string', description: 'Data region' },
      ]);

      const dup = await raw(sim, 'POST', '/api/v1/user-attributes/', { name: 'region', type: 'string' });
      expect(dup).toEqual({ status: 409, body: { error: 'user attribute region already exists' } });
      // The client resolves a 409 by listing: the existing definition is returned as adopted.
      expect(await api.createDefinition({ name: 'region', type: 'string' })).toEqual({
        definition: { id: definition.id, name: 'region', type: 'string', description: 'Data region' },
        adopted: true,
      });

      const badType = await rejection(api.createDefinition({ name: 'x', type: 'date' as never }));
      expect(badType.code).toBe(ErrorCodes.REJECTED);
      expect(badType.status).toBe(400);
      expect(badType.message).toContain('type must be one of string, number, boolean, string_array, number_array');
    } finally {
      await http.close();
    }
  });

  it('upserts values with exact type validation; null clears; an unknown user or attribute is 404', async () => {
    const { api, http } = client(sim);
    try {
      const tags = sim.attributes.createDefinition({ name: 'tags', type: 'string_array' });
      const level = sim.attributes.createDefinition({ name: 'level', type: 'number' });
      const region = sim.attributes.definitionByName('region')!;
      await api.upsertValue(userId, region.id, 'EU');
      await api.upsertValue(userId, tags.id, ['a', 'b']);
      await api.upsertValue(userId, level.id, 3);
      expect(sim.attributes.valuesOf(userId)).toEqual({ region: 'EU', tags: ['a', 'b'], level: 3 });
      expect(await api.getValues(userId)).toEqual([
        { attributeId: region.id, name: 'region', value: 'EU' },
        { attributeId: tags.id, name: 'tags', value: ['a', 'b'] },
        { attributeId: level.id, name: 'level', value: 3 },
      ]);

      for (const [id, value, msg] of [
        [level.id, '3', 'value of user attribute level (number) must be a finite number'],
        [tags.id, ['a', 1], 'value of user attribute tags (string_array) must be an array of strings'],
        [region.id, ['EU'], 'value of user attribute region (string) must be a string'],
      ] as const) {
        const r = await raw(sim, 'POST', '/api/v1/user-attribute-values/', { userId, attributeId: id, value });
        expect(r).toEqual({ status: 400, body: { error: msg } });
      }
      expect(sim.attributes.valuesOf(userId)).toEqual({ region: 'EU', tags: ['a', 'b'], level: 3 });

      await api.upsertValue(userId, level.id, null);
      expect(sim.attributes.valuesOf(userId)).toEqual({ region: 'EU', tags: ['a', 'b'] });

      const noUser = await rejection(api.getValues('no-such-user'));
      expect(noUser.code).toBe(ErrorCodes.NOT_FOUND);
      expect(noUser.message).toContain('user no-such-user not found');
      expect((await raw(sim, 'POST', '/api/v1/user-attribute-values/', { userId, attributeId: 'nope', value: 'x' })).status).toBe(404);
    } finally {
      await http.close();
    }
  });

  it('answers 401 and 403 with an { error } body, never echoing the credential', async () => {
    for (const [token, status, text] of [
      ['wrong-secret-token', 401, 'invalid or expired credential'],
      ['scim-only', 403, 'a SCIM token is not authorized for this endpoint'],
      ['no-attrs', 403, 'the credential lacks the UserAttributesManage permission'],
    ] as const) {
      const r = await raw(sim, 'GET', '/api/v1/user-attributes/', undefined, token);
      expect(r).toEqual({ status, body: { error: text } });
      const { api, http } = client(sim, token);
      const e = await rejection(api.listDefinitions());
      await http.close();
      expect(e.kind).toBe('fatal');
      expect(e.code).toBe(status === 401 ? ErrorCodes.AUTH_INVALID : ErrorCodes.AUTH_FORBIDDEN);
      expect(e.message).not.toContain(token);
    }
  });

  it('fault injection: a 503 is retried; a persistent 500 is a transient failure; a reset upsert is retried (idempotent)', async () => {
    const { api, http } = client(sim);
    const region = sim.attributes.definitionByName('region')!;
    try {
      sim.setFaults([{ method: 'POST', pathPrefix: '/api/v1/user-attribute-values', kind: 'status', status: 503, times: 1 }]);
      await api.upsertValue(userId, region.id, 'US');
      expect(sim.attributes.valuesOf(userId)['region']).toBe('US');

      sim.setFaults([{ method: 'GET', pathPrefix: '/api/v1/user-attribute-values', kind: 'status', status: 500 }]);
      const e = await rejection(api.getValues(userId));
      expect(e.code).toBe(ErrorCodes.TRANSIENT);
      expect(e.detail).toBe('Injected failure (HTTP 500)');

      sim.setFaults([{ method: 'POST', pathPrefix: '/api/v1/user-attribute-values', kind: 'reset', times: 1 }]);
      await api.upsertValue(userId, region.id, 'APAC');
      expect(sim.attributes.valuesOf(userId)['region']).toBe('APAC');
    } finally {
      sim.setFaults([]);
      await http.close();
    }
  });
});

describe('user-attribute endpoints (control-plane envelope)', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ tokens: TOKENS, userAttributes: { listShape: 'envelope', maxPageSize: 10 } });
    for (let i = 0; i < 25; i++) sim.attributes.createDefinition({ name: `attr-${String(i).padStart(2, '0')}`, type: 'string' });
  });
  afterAll(() => sim.close());

  it('pages { data, pagination } by offset and limit and the client reads every page', async () => {
    const first = await raw(sim, 'GET', '/api/v1/user-attributes/?limit=100');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ pagination: { offset: 0, limit: 10, total: 25 } });
    expect((first.body as { data: { userAttributes: unknown[] } }).data.userAttributes).toHaveLength(10);
    const { api, http } = client(sim);
    try {
      const all = await api.listDefinitions();
      expect(all.map((d) => d.name)).toEqual(Array.from({ length: 25 }, (_, i) => `attr-${String(i).padStart(2, '0')}`));
      const gets = sim.requests.filter(
        (r) => r.method === 'GET' && r.path === '/api/v1/user-attributes/' && r.query['offset'] !== undefined,
      );
      expect(gets.map((r) => r.query['offset'])).toEqual(['0', '10', '20']);
    } finally {
      await http.close();
    }
  });

  it('the adapter tolerates both list shapes and refuses anything else', () => {
    expect(listItems([1, 2], 'x')).toEqual({ items: [1, 2], total: undefined });
    expect(listItems({ data: [1], pagination: { offset: 0, limit: 20, total: 1 } }, 'x')).toEqual({ items: [1], total: 1 });
    expect(listItems({ data: { values: [3] }, pagination: { total: 4 } }, 'x')).toEqual({ items: [3], total: 4 });
    expect(() => listItems({ items: [] }, 'list')).toThrow(/list: unexpected response, the envelope holds no single list in `data`/);
    expect(() => listItems('nope', 'list')).toThrow(/neither an array nor a \{ data, pagination \} envelope/);
  });
});

describe('simulate --user-attribute-lists', () => {
  it('maps the flag to the simulator option (default: bare arrays)', async () => {
    const { simulateCommand, simulatorOptionsFrom } = await import('../../src/cli/simulate.ts');
    const env = simulateCommand().exitOverride();
    env.parseOptions(['--user-attribute-lists', 'envelope']);
    expect(simulatorOptionsFrom(env.opts()).userAttributes).toEqual({ listShape: 'envelope' });
    const def = simulateCommand().exitOverride();
    def.parseOptions([]);
    expect(simulatorOptionsFrom(def.opts()).userAttributes).toEqual({ listShape: 'array' });
  });
});
