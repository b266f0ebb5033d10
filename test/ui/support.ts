/**
 * A status page on a real socket (port 0) over a fixed backend: one tenant whose view holds
 * personal data (a userName, an externalId, a platform id, an attribute value, a held
 * deactivation), so tests can tell whether any of it reached a response.
 */
import { request } from 'node:http';
import { Secret } from '../../src/config/secret.ts';
import { createLogger } from '../../src/observability/logger.ts';
import type { ProvisioningRecord } from '../../src/provisioning-log/record.ts';
import { type UiConfig, uiSchema } from '../../src/ui/config-schema.ts';
import { createStatusPageServer, type StatusPageServer } from '../../src/ui/server.ts';
import type { RunView, TenantView, UiBackend } from '../../src/ui/view.ts';

export const READ_TOKEN = 'read-token-5b0e9c3a7f14d2e8';
export const ACTION_TOKEN = 'action-token-8c2f61d0a9e34b7c';
/** Every piece of personal data the fixed view holds. */
export const PERSONAL = ['alice.personal@example.com', 'ext-alice-0042', 'plat-id-9f8e7d', 'EU', 'US', 'bob.held@example.com'];

const record = (over: Partial<ProvisioningRecord>): ProvisioningRecord => ({
  id: '1-0',
  time: '2026-11-28T03:00:00.000Z',
  tenant: 'acme',
  runId: 'run-1',
  action: 'user.update',
  result: 'ok',
  object: { type: 'user', name: 'alice.personal@example.com', externalId: 'ext-alice-0042', id: 'plat-id-9f8e7d' },
  changes: [{ path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:region', before: 'EU', after: 'US' }],
  ...over,
});

const GUARD = 'maxDeletes (0) exceeded: 1 deactivations/deletions planned';
export const heldRecord = record({
  id: '2-0',
  runId: 'run-2',
  action: 'user.deactivate',
  result: 'held',
  object: { type: 'user', name: 'bob.held@example.com', externalId: 'ext-bob', id: 'plat-bob' },
  changes: [{ path: 'active', before: true, after: false }],
  reason: `not-in-source; held by the deletion guard: ${GUARD}`,
});

const run = (i: number, over: Partial<RunView> = {}): RunView => ({
  runId: `run-${i}`,
  result: 'success',
  startedAt: `2026-11-28T0${i}:00:00.000Z`,
  finishedAt: `2026-11-28T0${i}:00:03.000Z`,
  durationMs: 3000 + i * 500,
  detail: { summary: { usersCreate: i, usersUpdate: 1 }, failed: i === 2 ? 1 : 0 },
  ...over,
});

export function fixedBackend(withActions = false): UiBackend & { calls: string[] } {
  const calls: string[] = [];
  const view: TenantView = {
    tenant: 'acme',
    schedules: [{ kind: 'reconcile', configured: true, pattern: '*/30 * * * *', enabled: true, next: null }],
    reconcileRuns: [run(3, { result: 'guard_held' }), run(2), run(1)],
    auditRuns: [
      run(2, { detail: { cursor: '2026-11-28T01:58:03.000Z', delivered: { siem: 4 } } }),
      run(1, { detail: { cursor: '2026-11-28T00:59:33.000Z', delivered: { siem: 2 } } }),
    ],
    managed: { users: 2, groups: 0 },
    held: { count: 1, reasons: [GUARD], at: '2026-11-28T03:00:00.000Z', runId: 'run-2', approved: false },
    heldRecords: [heldRecord],
    quarantine: { quarantined: false, failures: 0, until: null, reason: '' },
    audit: null,
    sinks: [],
    logToSinks: { enabled: false, deliveredUpTo: null },
    log: [heldRecord, record({})],
    changes: {
      state: 'running',
      mechanism: 'ldap-modify-timestamp',
      owner: 'replica-a:41:0f3c9d2e',
      lastPollAt: '2026-11-28T03:10:00.000Z',
      lagSeconds: 2,
      cursorAgeSeconds: 4,
      lastResult: 'applied',
      lastDeferred: { code: 'name-held', at: '2026-11-28T03:05:00.000Z' },
      heldBurst: { destructive: 3, memberRemovals: 0, reasons: ['3 deactivations/deletions within 60 min exceed guards.maxDeletes (2)'], at: '2026-11-28T03:06:00.000Z' },
    },
  };
  return {
    calls,
    tenantIds: () => ['acme'],
    summaries: async () => [
      {
        tenant: 'acme',
        lastReconcile: view.reconcileRuns[0]!,
        nextReconcile: null,
        quarantined: false,
        deletesHeld: 1,
        auditLagSeconds: 30,
      },
    ],
    tenant: async (_id, filter) => {
      calls.push(`tenant ${JSON.stringify(filter)}`);
      return structuredClone(view);
    },
    ...(withActions
      ? {
          actions: {
            tokenMatches: (c: string) => c === ACTION_TOKEN,
            run: async (tenant: string, action: string) => {
              calls.push(`${action} ${tenant}`);
              return 'ok';
            },
          },
        }
      : {}),
  };
}

export interface PageUnderTest {
  url: string;
  port: number;
  backend: ReturnType<typeof fixedBackend>;
  server: StatusPageServer;
  close(): Promise<void>;
}

export async function startPage(
  config: Partial<UiConfig> & Record<string, unknown> = {},
  opts: { readToken?: string | null; redactedReadToken?: string; actions?: boolean; now?: () => number } = {},
): Promise<PageUnderTest> {
  const backend = fixedBackend(opts.actions ?? false);
  const token = opts.readToken === null ? undefined : (opts.readToken ?? READ_TOKEN);
  const server = createStatusPageServer({
    config: uiSchema.parse({ port: 0, ...config }),
    readToken: token === undefined ? undefined : new Secret(token, 'daemon.ui.readTokenFile'),
    ...(opts.redactedReadToken ? { redactedReadToken: new Secret(opts.redactedReadToken, 'daemon.ui.redactedReadTokenFile') } : {}),
    backend,
    logger: createLogger({ level: 'silent' }),
    ...(opts.now ? { now: opts.now } : {}),
  });
  const { url } = await server.listen();
  const port = Number(new URL(url).port);
  return { url, port, backend, server, close: () => server.close() };
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request over a fresh connection, with full control of the headers (Host included). */
export function call(
  port: number,
  path: string,
  opts: { method?: string; headers?: Record<string, string>; form?: Record<string, string>; localAddress?: string } = {},
): Promise<Reply> {
  const body = opts.form !== undefined ? new URLSearchParams(opts.form).toString() : undefined;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: opts.method ?? (body !== undefined ? 'POST' : 'GET'),
        agent: false,
        timeout: 10_000,
        ...(opts.localAddress ? { localAddress: opts.localAddress } : {}),
        headers: {
          host: `127.0.0.1:${port}`,
          connection: 'close',
          ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded', origin: `http://127.0.0.1:${port}` } : {}),
          ...opts.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${path} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

export function expectNoPersonalData(text: string, where: string): void {
  for (const p of PERSONAL.filter((x) => x.length > 2)) if (text.includes(p)) throw new Error(`${where} shows personal data: ${p}`);
}
