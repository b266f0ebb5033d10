/**
 * startGoogleSimulator(): a Google Workspace on a real socket — the OAuth token endpoint
 * (POST /token), the Admin SDK Directory API (GET /admin/directory/v1/…) and the Reports
 * API's admin activities (GET /admin/reports/v1/activity/…, reports.ts). The real
 * google-auth-library and @googleapis/admin clients talk to it when configured with its
 * `tokenUrl` and `rootUrl`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { listenOn } from '../http-io.ts';
import { apiError, serviceDisabled, type JsonReply } from './errors.ts';
import { GoogleFaults, faultReply } from './faults.ts';
import { handleDirectory, pageOf, parseDirectoryPath } from './routes.ts';
import { activityPageOf, handleReports, parseReportsPath } from './reports.ts';
import { handleToken, type IssuedToken } from './token.ts';
import type { GoogleFaultRule, GoogleRequestLogEntry, GoogleSimulatorOptions, SimServiceAccount } from './types.ts';
import { GoogleWorkspace } from './workspace.ts';

export interface GoogleSimulator {
  /** http://127.0.0.1:<port> */
  url: string;
  /** Use as the source's `tokenUrl`. */
  tokenUrl: string;
  /** Use as the source's `rootUrl`. */
  rootUrl: string;
  workspace: GoogleWorkspace;
  requests: GoogleRequestLogEntry[];
  setFaults(rules: GoogleFaultRule[]): void;
  setServiceAccounts(accounts: SimServiceAccount[]): void;
  setApiEnabled(enabled: boolean): void;
  /** Forget issued access tokens (as if they expired). */
  revokeTokens(): void;
  close(): Promise<void>;
}

const PROJECT_NUMBER = '123456789012';
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
  // A cut body on a complete response: the client sees valid HTTP and invalid JSON.
  if (truncate) body = body.slice(0, Math.floor(body.length / 2));
  res.writeHead(reply.status, {
    'content-type': 'application/json; charset=UTF-8',
    'content-length': String(Buffer.byteLength(body)),
    vary: 'Origin, X-Origin, Referer',
    ...reply.headers,
  });
  res.end(body);
}

export async function startGoogleSimulator(opts: GoogleSimulatorOptions = {}): Promise<GoogleSimulator> {
  const workspace = new GoogleWorkspace(opts.domain ?? 'example.com', opts.customerId ?? 'C0sim1234');
  workspace.activity.lagMs = opts.reportsLagMs ?? 0;
  let accounts = new Map((opts.serviceAccounts ?? []).map((a) => [a.clientEmail.toLowerCase(), a] as const));
  let apiEnabled = opts.apiEnabled ?? true;
  const faults = new GoogleFaults(opts.faults ?? []);
  const issued = new Map<string, IssuedToken>();
  const requests: GoogleRequestLogEntry[] = [];
  const record = opts.recordRequests ?? true;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://simulator.invalid');
    const method = (req.method ?? 'GET').toUpperCase();
    const entry: GoogleRequestLogEntry = {
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      status: 0,
      route: 'other',
    };
    const finish = (status: number): void => {
      entry.status = status;
      if (record) requests.push(entry);
      opts.onRequest?.(entry);
    };
    const body = await readBody(req);
    const parsed = parseDirectoryPath(url.pathname);
    const reports = parsed ? undefined : parseReportsPath(url.pathname);
    const isToken = url.pathname === '/token';
    if (!isToken && !parsed && !reports) {
      send(res, apiError(404, `Not Found: ${method} ${url.pathname}`, 'notFound'));
      return finish(404);
    }
    const route = parsed ? parsed.route : reports ? 'activities' : 'token';
    entry.route = route;
    const page = parsed ? pageOf(parsed.route, url.searchParams) : reports ? activityPageOf(url.searchParams) : 1;
    const fault = faults.pick({ route, page, groupKey: parsed?.groupKey });
    if (fault) entry.fault = fault.kind;
    if (fault?.kind === 'reset') {
      req.socket.destroy();
      return finish(0);
    }
    const injected = fault ? faultReply(fault, route) : undefined;
    if (injected) {
      send(res, injected);
      return finish(injected.status);
    }
    let reply: JsonReply;
    if (isToken) {
      reply =
        method === 'POST'
          ? handleToken(new URLSearchParams(body), { accounts, userExists: (e) => workspace.emailExists(e), issued })
          : apiError(405, 'Method Not Allowed', 'methodNotAllowed');
    } else {
      const auth = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
      const token = auth ? issued.get(auth[1] as string) : undefined;
      if (token) entry.subject = token.subject;
      if (!auth) {
        reply = apiError(
          401,
          'Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
          'required',
          { location: { location: 'Authorization', locationType: 'header' } },
        );
      } else if (!token || token.expiresAt < Date.now()) {
        reply = apiError(
          401,
          'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
          'authError',
          { location: { location: 'Authorization', locationType: 'header' } },
        );
      } else if (!apiEnabled) {
        reply = serviceDisabled(PROJECT_NUMBER);
      } else if (method !== 'GET') {
        reply = apiError(405, 'Method Not Allowed', 'methodNotAllowed');
      } else if (parsed) {
        reply = handleDirectory(parsed, url.searchParams, token, { workspace });
      } else if (reports) {
        reply = handleReports(reports, url.searchParams, token, workspace);
      } else {
        reply = apiError(404, 'Not Found', 'notFound');
      }
    }
    send(res, reply, fault?.kind === 'truncate' && reply.status === 200);
    finish(reply.status);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) send(res, apiError(500, `simulator error: ${(e as Error).message}`, 'backendError'));
      else res.destroy();
    });
  });
  server.on('clientError', (_e, socket) => socket.destroy());
  const url = await listenOn(server, opts);
  return {
    url,
    tokenUrl: `${url}/token`,
    rootUrl: `${url}/`,
    workspace,
    requests,
    setFaults: (rules) => faults.set(rules),
    setServiceAccounts: (list) => {
      accounts = new Map(list.map((a) => [a.clientEmail.toLowerCase(), a] as const));
    },
    setApiEnabled: (enabled) => {
      apiEnabled = enabled;
    },
    revokeTokens: () => issued.clear(),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
