/**
 * startEntraSimulator(): one Entra ID tenant on a real HTTPS socket — the identity
 * platform's metadata and token endpoints (`/{tenant}/v2.0/.well-known/openid-configuration`,
 * `/{tenant}/oauth2/v2.0/token`) and Microsoft Graph (`/v1.0/…`). The real `@azure/identity`
 * credentials talk to it with `authorityHost` set to its URL; Graph requests go to the same
 * origin. HTTPS because MSAL refuses an http:// authority.
 */
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { listenOn } from '../http-io.ts';
import { EntraDirectory } from './directory.ts';
import { EntraFaults, faultReply } from './faults.ts';
import { graphError, handleGraph, parseGraphPath } from './graph.ts';
import { handleToken, knownTenant, openidConfiguration, tenantNotFound, type IssuedToken, type TokenEnv } from './token.ts';
import type { EntraFaultRule, EntraRequestLogEntry, EntraRoute, EntraSimulatorOptions, JsonReply, SimApp } from './types.ts';

export interface EntraSimulator {
  /** https://127.0.0.1:<port>: the `authorityHost` and the `graphUrl`. */
  url: string;
  tenantId: string;
  directory: EntraDirectory;
  requests: EntraRequestLogEntry[];
  setFaults(rules: EntraFaultRule[]): void;
  setApps(apps: SimApp[]): void;
  /** Forget issued access tokens (as if they expired). */
  revokeTokens(): void;
  /** Expire every delta token issued so far (Graph answers 410 to them). */
  expireDeltaTokens(): void;
  close(): Promise<void>;
}

const MAX_FORM_BYTES = 64 * 1024;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_FORM_BYTES) chunks.push(c);
    });
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
  });
}

function send(res: ServerResponse, reply: JsonReply, truncate = false): void {
  let body = JSON.stringify(reply.json);
  if (truncate) body = body.slice(0, Math.floor(body.length / 2));
  res.writeHead(reply.status, {
    'content-type': 'application/json;odata.metadata=minimal;odata.streaming=true;IEEE754Compatible=false;charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    'request-id': '00000000-0000-0000-0000-000000000000',
    ...reply.headers,
  });
  res.end(body);
}

export async function startEntraSimulator(opts: EntraSimulatorOptions): Promise<EntraSimulator> {
  const tenantId = opts.tenantId ?? '7d3f1b2a-5c4e-4f6a-9b8c-0d1e2f3a4b5c';
  const directory = new EntraDirectory(tenantId, opts.domain ?? 'contoso.example');
  let apps = new Map((opts.apps ?? []).map((a) => [a.clientId.toLowerCase(), a] as const));
  const faults = new EntraFaults(opts.faults ?? []);
  const issued = new Map<string, IssuedToken>();
  const requests: EntraRequestLogEntry[] = [];
  const record = opts.recordRequests ?? true;
  let deltaEpoch = 0;
  let baseUrl = '';

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'https://simulator.invalid');
    const method = (req.method ?? 'GET').toUpperCase();
    const q = url.searchParams;
    const consistency = req.headers['consistencylevel'];
    const entry: EntraRequestLogEntry = {
      method,
      path: url.pathname,
      query: Object.fromEntries(q),
      route: 'other',
      status: 0,
      ...(typeof consistency === 'string' ? { consistencyLevel: consistency } : {}),
    };
    const finish = (status: number): void => {
      entry.status = status;
      if (record) requests.push(entry);
      opts.onRequest?.(entry);
    };
    const body = await readBody(req);
    const segs = url.pathname.split('/').filter((s) => s !== '');
    const graph = parseGraphPath(url.pathname);
    let route: EntraRoute = graph?.route ?? 'other';
    if (segs[1] === 'v2.0' && segs[2] === '.well-known' && segs[3] === 'openid-configuration') route = 'metadata';
    if (segs[1] === 'oauth2' && segs[2] === 'v2.0' && segs[3] === 'token') route = 'token';
    entry.route = route;
    const env: TokenEnv = { tenantId, domain: directory.domain, apps, issued, baseUrl };

    const fault = faults.pick(route, pageHint(q));
    if (fault) entry.fault = fault.kind;
    if (fault?.kind === 'reset') {
      req.socket.destroy();
      return finish(0);
    }
    const injected = fault ? faultReply(fault) : undefined;
    if (injected) {
      send(res, injected);
      return finish(injected.status);
    }
    let reply: JsonReply;
    if (route === 'metadata' || route === 'token') {
      const tenant = segs[0] as string;
      if (!knownTenant(tenant, env)) reply = tenantNotFound(tenant);
      else if (route === 'metadata') reply = openidConfiguration(env);
      else
        reply =
          method === 'POST' ? handleToken(new URLSearchParams(body), env) : graphError(405, 'MethodNotAllowed', 'Method not allowed.');
    } else if (graph) {
      const auth = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
      const token = auth ? issued.get(auth[1] as string) : undefined;
      if (!auth) reply = graphError(401, 'InvalidAuthenticationToken', 'Access token is empty.');
      else if (!token || token.expiresAt < Date.now())
        reply = graphError(401, 'InvalidAuthenticationToken', 'Access token has expired or is not yet valid.');
      else if (method !== 'GET') reply = graphError(405, 'Request_BadRequest', 'Method not allowed.');
      else {
        const prefer = /odata\.maxpagesize=(\d+)/i.exec(String(req.headers['prefer'] ?? ''));
        const r = handleGraph(graph, url.pathname, q, {
          directory,
          baseUrl,
          roles: token.roles,
          consistencyLevel: typeof consistency === 'string' ? consistency : undefined,
          maxPageSize: prefer ? Number(prefer[1]) : undefined,
          deltaEpoch,
        });
        reply = r.reply;
        if (r.page !== undefined) entry.page = r.page;
      }
    } else {
      reply = graphError(404, 'UnknownError', '');
    }
    send(res, reply, fault?.kind === 'truncate' && reply.status === 200);
    finish(reply.status);
  };

  const server: Server = createServer({ key: opts.tls.key, cert: opts.tls.cert }, (req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) send(res, graphError(500, 'generalException', `simulator error: ${(e as Error).message}`));
      else res.destroy();
    });
  });
  server.on('clientError', (_e, socket) => socket.destroy());
  server.on('tlsClientError', () => undefined);
  baseUrl = await listenOn(server, opts, 'https');
  return {
    url: baseUrl,
    tenantId,
    directory,
    requests,
    setFaults: (rules) => faults.set(rules),
    setApps: (list) => {
      apps = new Map(list.map((a) => [a.clientId.toLowerCase(), a] as const));
    },
    revokeTokens: () => issued.clear(),
    expireDeltaTokens: () => {
      deltaEpoch++;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** The page a request asks for, from its `$skiptoken` (page 1 without), for fault targeting. */
function pageHint(q: URLSearchParams): number {
  const skip = q.get('$skiptoken');
  if (skip === null) return 1;
  try {
    const c = JSON.parse(Buffer.from(skip, 'base64url').toString('utf8')) as { o?: number };
    const top = Number(q.get('$top') ?? 100);
    return typeof c.o === 'number' ? Math.floor(c.o / (Number.isFinite(top) && top > 0 ? top : 100)) + 1 : 1;
  } catch {
    return 1;
  }
}
