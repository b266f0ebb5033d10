/**
 * `scim-audit-sync simulate`: the platform simulator as a long-running process, for demos and
 * for benchmarks that must keep the server out of the measured process. Prints exactly one
 * JSON line on stdout once listening ({"event":"listening","url":…}); logs go to stderr,
 * requests at debug level only. SIGTERM/SIGINT close it cleanly.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { SERVER_QUIRKS, isServerQuirk, type ServerQuirk } from '../simulator/quirks.ts';
import type { FaultRule, SimulatorOptions, SimulatorToken } from '../simulator/types.ts';
import { runCommand } from './exit-codes.ts';
import { commandLogger } from './options.ts';

interface SimulateOptions {
  host: string;
  port: number;
  token: string[];
  seed: number;
  users: number;
  maxPageSize: number;
  latencyMs: number;
  jitterMs: number;
  faultRate: number;
  patch: boolean;
  spc: boolean;
  memberRemoveDialect: 'filter' | 'value-array' | 'both';
  maxOperationsPerPatch?: number;
  auditFeature: boolean;
  auditEventsPerHour: number;
  auditStartAt: string;
  auditIdColumn?: boolean;
  auditOrder: 'asc' | 'desc';
  auditCrlf?: boolean;
  auditBom?: boolean;
  quirks?: ServerQuirk[];
  /** List shape of the user-attribute endpoints. */
  userAttributeLists?: 'array' | 'envelope';
}

function integer(min: number): (raw: string) => number {
  return (raw) => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`expected an integer >= ${min}`);
    return n;
  };
}

function fraction(raw: string): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError('expected a number between 0 and 1');
  return n;
}

/** `--quirks a,b` (repeatable): names checked here, so a typo is a usage error, not a silent no-op. */
function quirkList(value: string, previous: ServerQuirk[] | undefined): ServerQuirk[] {
  const out = [...(previous ?? [])];
  for (const name of value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (!isServerQuirk(name)) throw new InvalidArgumentError(`unknown quirk "${name}"; known: ${Object.keys(SERVER_QUIRKS).join(', ')}`);
    if (!out.includes(name)) out.push(name);
  }
  return out;
}

function quirksHelp(): string {
  return `\nServer quirks (--quirks a,b,c; see docs/simulator.md):\n${Object.entries(SERVER_QUIRKS)
    .map(([name, what]) => `  ${name.padEnd(24)} ${what}`)
    .join('\n')}\n`;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** CLI flags → simulator options (exported for tests). */
export function simulatorOptionsFrom(o: SimulateOptions): SimulatorOptions {
  const faults: FaultRule[] = [];
  if (o.latencyMs > 0 || o.jitterMs > 0) faults.push({ kind: 'latency', latencyMs: o.latencyMs, jitterMs: o.jitterMs });
  if (o.faultRate > 0) faults.push({ kind: 'status', status: 503, retryAfterSeconds: 1, rate: o.faultRate });
  const tokens: SimulatorToken[] = (o.token.length > 0 ? o.token : ['test-token']).map((token) => ({ token }));
  return {
    host: o.host,
    port: o.port,
    tokens,
    seed: o.seed,
    users: o.users,
    maxPageSize: o.maxPageSize,
    patchSupported: o.patch,
    serviceProviderConfig: o.spc,
    memberRemoveDialect: o.memberRemoveDialect,
    ...(o.maxOperationsPerPatch !== undefined ? { maxOperationsPerPatch: o.maxOperationsPerPatch } : {}),
    auditFeatureEnabled: o.auditFeature,
    audit: {
      startAt: o.auditStartAt,
      eventsPerHour: o.auditEventsPerHour,
      order: o.auditOrder,
      ...(o.auditIdColumn ? { idColumn: true } : {}),
      ...(o.auditCrlf ? { crlf: true } : {}),
      ...(o.auditBom ? { bom: true } : {}),
    },
    ...(o.userAttributeLists ? { userAttributes: { listShape: o.userAttributeLists } } : {}),
    faults,
    ...(o.quirks && o.quirks.length > 0 ? { quirks: o.quirks } : {}),
    // A long-running process must not keep every request in memory.
    recordRequests: false,
  };
}

export function simulateCommand(): Command {
  return new Command('simulate')
    .description('run the platform simulator (SCIM 2.0 + audit-log export, with fault injection) until SIGTERM/SIGINT')
    .addOption(new Option('--host <host>', 'address to listen on').default('127.0.0.1'))
    .addOption(new Option('--port <port>', 'port (0 = any free port)').argParser(integer(0)).default(0))
    .addOption(new Option('--token <token>', 'accepted credential, repeatable (default: test-token)').argParser(collect).default([]))
    .addOption(new Option('--seed <n>', 'seed for generated users, audit events and fault rolls').argParser(integer(0)).default(1))
    .addOption(new Option('--users <n>', 'pre-seed N users (and about N/50 groups)').argParser(integer(0)).default(0))
    .addOption(new Option('--max-page-size <n>', 'server cap on SCIM count').argParser(integer(1)).default(100))
    .addOption(new Option('--latency-ms <ms>', 'added latency per request, milliseconds').argParser(integer(0)).default(0))
    .addOption(new Option('--jitter-ms <ms>', 'uniform random extra latency, milliseconds').argParser(integer(0)).default(0))
    .addOption(new Option('--fault-rate <x>', 'share of requests answered 503 with Retry-After: 1 (0..1)').argParser(fraction).default(0))
    .addOption(new Option('--no-patch', 'PATCH answers 501 and ServiceProviderConfig says so'))
    .addOption(new Option('--no-spc', '/ServiceProviderConfig answers 404'))
    .addOption(
      new Option('--member-remove-dialect <d>', 'accepted PATCH member-remove forms')
        .choices(['filter', 'value-array', 'both'])
        .default('both'),
    )
    .addOption(new Option('--max-operations-per-patch <n>', 'refuse larger PATCH requests with 400 tooMany').argParser(integer(1)))
    .addOption(new Option('--no-audit-feature', 'the audit-log export answers 403 (feature not on the plan)'))
    .addOption(new Option('--audit-events-per-hour <n>', 'audit events generated per hour').argParser(integer(1)).default(60))
    .addOption(new Option('--audit-start-at <iso>', 'time of the first generated audit event').default('2026-11-01T00:00:00Z'))
    .addOption(new Option('--audit-id-column', 'add an Event ID column to the export'))
    .addOption(new Option('--audit-order <order>', 'row order of the export').choices(['asc', 'desc']).default('asc'))
    .addOption(new Option('--audit-crlf', 'CRLF line endings in the export'))
    .addOption(new Option('--audit-bom', 'UTF-8 BOM at the start of the export'))
    .addOption(new Option('--quirks <list>', 'imitate real-server behaviours, comma-separated (listed below)').argParser(quirkList))
    .addHelpText('after', quirksHelp())
    .addOption(
      new Option('--user-attribute-lists <shape>', 'user-attribute lists as a bare array or the { data, pagination } envelope')
        .choices(['array', 'envelope'])
        .default('array'),
    )
    .action(
      runCommand(async (o: SimulateOptions, cmd: Command) => {
        const log = commandLogger(cmd);
        const opts = simulatorOptionsFrom(o);
        if (log.isLevelEnabled('debug')) {
          opts.onRequest = (e) =>
            log.debug({ method: e.method, path: e.path, status: e.status, bodyBytes: e.bodyBytes, faults: e.faults }, 'request');
        }
        const { startSimulator } = await import('../simulator/server.ts');
        const sim = await startSimulator(opts);
        process.stdout.write(`${JSON.stringify({ event: 'listening', url: sim.url })}\n`);
        log.info({ users: sim.store.counts().users, groups: sim.store.counts().groups, quirks: opts.quirks ?? [] }, 'simulator listening');
        const stop = (signal: NodeJS.Signals): void => {
          log.info({ signal }, 'simulator stopping');
          process.off('SIGTERM', stop);
          process.off('SIGINT', stop);
          sim.close().catch((e: unknown) => log.error({ err: e }, 'simulator close failed'));
        };
        process.on('SIGTERM', stop);
        process.on('SIGINT', stop);
      }),
    );
}
