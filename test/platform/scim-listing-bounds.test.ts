/**
 * A SCIM listing is bounded in objects, pages and time whatever the server claims: a
 * totalResults of 10^12 fails at the first page, a server that keeps delivering new objects
 * is cut off at maxObjects, and a page that drips runs out of the listing's deadline. Real
 * sockets (test/helpers/hostile-http.ts), the real PlatformClient and ScimClient.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../src/errors.ts';
import { PlatformClient } from '../../src/platform/http-client.ts';
import { ScimClient } from '../../src/platform/scim/client.ts';
import type { PagingLimits } from '../../src/platform/scim/paging.ts';
import { answer, head, startHostileServer, type HostileRequest, type HostileServer } from '../helpers/hostile-http.ts';
import { rejection } from '../helpers/rejection.ts';

let server: HostileServer | undefined;
let http: PlatformClient | undefined;
afterEach(async () => {
  await http?.close();
  await server?.close();
  http = undefined;
  server = undefined;
});

const SCIM_JSON = 'application/scim+json';

/** A list page of `count` users with ids never given before, claiming `totalResults`. */
function endlessUsers(totalResults: number): (io: Parameters<ReturnType<typeof answer.full>>[0], req: HostileRequest) => void {
  let next = 0;
  return (io, req) => {
    const count = Number(req.query['count'] ?? 100);
    const Resources = Array.from({ length: count }, () => {
      const id = `u${next++}`;
      return { id, userName: `${id}@example.com`, schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'] };
    });
    const body = JSON.stringify({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
      totalResults,
      startIndex: Number(req.query['startIndex'] ?? 1),
      itemsPerPage: count,
      Resources,
    });
    answer.full(200, { 'content-type': SCIM_JSON }, body)(io, req);
  };
}

function scimClient(url: string, paging: Partial<PagingLimits> = {}): ScimClient {
  http = new PlatformClient({ baseUrl: url, token: 'listing-bounds-token', allowInsecureHttp: true, retry: { maxAttempts: 1 } });
  return new ScimClient(http, {
    scimPath: '/scim/v2',
    pageSize: 50,
    maxMembersPerPatch: 100,
    memberRemoveDialect: 'filter',
    updateMethod: 'auto',
    discover: false,
    paging: { probeDelayMs: 1, ...paging },
  });
}

describe('SCIM listing bounds against a lying server', () => {
  it('a totalResults of 10^12 fails at the first page: E_LISTING_TOO_LARGE', async () => {
    server = await startHostileServer(endlessUsers(1e12));
    const err = await rejection(scimClient(server.url).listUsers());
    expect({ code: err.code, kind: err.kind }).toEqual({ code: ErrorCodes.LISTING_TOO_LARGE, kind: 'fatal' });
    expect(err.message).toContain('maxObjects');
    expect(server.requests).toHaveLength(1);
  });

  it('pages that keep delivering new objects are cut off at maxObjects: E_LISTING_TOO_LARGE', async () => {
    server = await startHostileServer(endlessUsers(900));
    const err = await rejection(scimClient(server.url, { maxObjects: 1000 }).listUsers());
    expect(err.code).toBe(ErrorCodes.LISTING_TOO_LARGE);
    // 1000 objects at 50 (49 new) per page, and not one page more.
    expect(server.requests.length).toBeLessThanOrEqual(22);
  });

  it('a server that never ends its listing is cut off at maxPages, whatever it claims: E_LISTING_TOO_LARGE', async () => {
    server = await startHostileServer(endlessUsers(4_000_000));
    const err = await rejection(scimClient(server.url, { maxPages: 30 }).listUsers());
    expect(err.code).toBe(ErrorCodes.LISTING_TOO_LARGE);
    expect(err.message).toContain('maxPages');
    expect(server.requests).toHaveLength(30);
  });

  it('pages that keep delivering past a small claim are cut off at about twice the claim: E_BAD_RESPONSE', async () => {
    server = await startHostileServer(endlessUsers(40));
    const err = await rejection(scimClient(server.url).listUsers());
    expect(err.code).toBe(ErrorCodes.BAD_RESPONSE);
    expect(err.message).toContain('did not terminate');
    expect(server.requests.length).toBeLessThanOrEqual(2 * 41 + 15);
  });

  it('a claim the pages never deliver is an error, not a short list', async () => {
    let n = 0;
    const pages = endlessUsers(5000);
    server = await startHostileServer((io, req) => {
      if (n++ < 3) return pages(io, req);
      answer.full(200, { 'content-type': SCIM_JSON }, JSON.stringify({ totalResults: 5000, Resources: [] }))(io, req);
    });
    const err = await rejection(scimClient(server.url).listUsers());
    expect(err.code).toBe(ErrorCodes.BAD_RESPONSE);
    expect(err.message).toMatch(/stayed empty/);
  });

  it('a page that drips a byte at a time runs out of the listing deadline: E_LISTING_DEADLINE', async () => {
    server = await startHostileServer(async (io) => {
      await io.write(head(200, { 'content-type': SCIM_JSON, 'transfer-encoding': 'chunked' }));
      while (!io.closed) {
        await io.write('1\r\n \r\n');
        await new Promise((r) => setTimeout(r, 20));
      }
    });
    const started = Date.now();
    const err = await rejection(scimClient(server.url, { deadlineMs: 400 }).listUsers());
    expect({ code: err.code, kind: err.kind }).toEqual({ code: ErrorCodes.LISTING_DEADLINE, kind: 'transient' });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('pages that answer slowly add up to the listing deadline: E_LISTING_DEADLINE', async () => {
    const pages = endlessUsers(100_000);
    server = await startHostileServer(async (io, req) => {
      await new Promise((r) => setTimeout(r, 60));
      pages(io, req);
    });
    const err = await rejection(scimClient(server.url, { deadlineMs: 500 }).listUsers());
    expect(err.code).toBe(ErrorCodes.LISTING_DEADLINE);
    expect(server.requests.length).toBeLessThan(15);
  });
});
