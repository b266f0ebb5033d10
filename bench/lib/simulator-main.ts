/**
 * The simulator as its own process for benchmarks, with the flags of
 * `scim-audit-sync simulate` that benchmarks use, plus bench-only seeding:
 *
 *   node bench/lib/simulator-main.ts --port 0 --token T --max-page-size 1000 [--latency-ms N]
 *        [--seed-directory dir.json --ledger-out state/<tenant>/ledger.json] [--request-log requests.jsonl]
 *
 * --seed-directory fills the store with exactly the resources the engine would create for
 * that file-source directory (same normalization and mapping code, default mapping), and
 * --ledger-out writes the ownership ledger naming them, so a plan against it is a true
 * no-op that still compares every object. --request-log appends one summary line per SCIM
 * request to a file (bench/lib/request-log.ts: when it was acknowledged, which objects it
 * concerns, by externalId). Prints one line, {"event":"listening","url"}.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { mapGroup, mapUser } from '../../src/identity/mapping.ts';
import type { LedgerData } from '../../src/reconcile/ledger.ts';
import { startSimulator, type FaultRule, type SimStore } from '../../src/simulator/index.ts';
import { normalizeDocument } from '../../src/sources/file/normalize.ts';
import { RequestLogWriter } from './request-log.ts';

function seed(store: SimStore, directoryPath: string): LedgerData {
  const doc = JSON.parse(readFileSync(directoryPath, 'utf8')) as { users: unknown[]; groups: unknown[] };
  const desired = normalizeDocument(doc.users, doc.groups);
  if (desired.rejected.length > 0)
    throw new Error(`seed directory has ${desired.rejected.length} rejected entries, e.g. ${desired.rejected[0]?.reason}`);
  const ledger: LedgerData = { version: 1, users: {}, groups: {}, pending: [] };
  const idByExt = new Map<string, string>();
  for (const u of desired.users) {
    const created = store.createUser(mapUser(u, {}).resource as unknown as Record<string, unknown>);
    idByExt.set(u.externalId, created.id);
    ledger.users[created.id] = { externalId: u.externalId };
  }
  for (const g of desired.groups) {
    const resource = { ...(mapGroup(g, {}).resource as unknown as Record<string, unknown>) };
    resource['members'] = g.members.flatMap((ext) => {
      const id = idByExt.get(ext);
      return id === undefined ? [] : [{ value: id }];
    });
    const created = store.createGroup(resource);
    ledger.groups[created.id] = { externalId: g.externalId };
  }
  return ledger;
}

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '0' },
    token: { type: 'string', multiple: true, default: [] },
    'max-page-size': { type: 'string', default: '100' },
    'latency-ms': { type: 'string', default: '0' },
    'seed-directory': { type: 'string' },
    'ledger-out': { type: 'string' },
    'request-log': { type: 'string' },
  },
});

const latencyMs = Number(values['latency-ms']);
const faults: FaultRule[] = latencyMs > 0 ? [{ kind: 'latency', latencyMs }] : [];
const tokens = (values.token.length > 0 ? values.token : ['test-token']).map((token) => ({ token }));
let log: RequestLogWriter | undefined;
const sim = await startSimulator({
  host: values.host,
  port: Number(values.port),
  tokens,
  maxPageSize: Number(values['max-page-size']),
  faults,
  // A long-running server must not keep every request in memory.
  recordRequests: false,
  ...(values['request-log'] !== undefined ? { onRequest: (entry) => log?.record(entry) } : {}),
});
if (values['request-log'] !== undefined) log = new RequestLogWriter(values['request-log'], sim.store);
if (values['seed-directory'] !== undefined) {
  const ledger = seed(sim.store, values['seed-directory']);
  if (values['ledger-out'] !== undefined) {
    mkdirSync(dirname(values['ledger-out']), { recursive: true });
    writeFileSync(values['ledger-out'], JSON.stringify(ledger));
  }
}
process.stdout.write(`${JSON.stringify({ event: 'listening', url: sim.url, ...sim.store.counts() })}\n`);

const stop = (): void => {
  process.off('SIGTERM', stop);
  process.off('SIGINT', stop);
  log?.close();
  void sim.close();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
