/**
 * A syslog receiver (Debian's rsyslog) that stays down for a whole export: the export still
 * finishes and moves its cursor, every event is dead-lettered for that sink with code
 * `syslog_unreachable` (counted), `audit status` lists them, and once rsyslog is started
 * `audit replay` delivers every one of them and empties the store. Over plain TCP through the
 * real CLI, and over RELP (imrelp) and TLS (imtcp with gtls) through the engine.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileDeadLetterStore } from '../../../src/audit/dead-letter/file-store.ts';
import { auditMetrics } from '../../../src/audit/metrics.ts';
import { replayDeadLetters } from '../../../src/audit/replay.ts';
import { runAuditExport } from '../../../src/audit/run-audit-export.ts';
import { sinkErrors } from '../../../src/audit/sinks/metrics.ts';
import { createSink } from '../../../src/audit/sinks/registry.ts';
import { auditStateDir } from '../../../src/audit/state/file-store.ts';
import { auditStatus } from '../../../src/audit/status.ts';
import { auditRecorder } from '../../../src/observability/instrument.ts';
import { startSimulator, type Simulator } from '../../../src/simulator/index.ts';
import { runCli } from '../../cli/run-cli.ts';
import { startRsyslog, type Rsyslog } from '../../helpers/receivers/rsyslog.ts';
import { HOUR, T0, createHarness, expectedIds, type Harness } from '../support/harness.ts';

/** A small budget: a dead receiver costs milliseconds. */
const SMALL_RETRY = { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 20 };

const sorted = (xs: Iterable<string>): string[] => [...xs].sort();

async function metricValue(
  m: { get(): Promise<{ values: Array<{ labels: Record<string, unknown>; value: number }> }> },
  labels: Record<string, string>,
): Promise<number> {
  const { values } = await m.get();
  return values.filter((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x)).reduce((s, v) => s + v.value, 0);
}

let rs: Rsyslog | undefined;
let sim: Simulator | undefined;
let h: Harness | undefined;
let dir: string | undefined;
afterEach(async () => {
  await rs?.receiver.stop('SIGKILL');
  await h?.close();
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  rs = undefined;
  h = undefined;
  sim = undefined;
  dir = undefined;
});

describe('syslog receiver down for a whole export', () => {
  it('rsyslog (imtcp) down: the export dead-letters every event and moves on; audit replay delivers them once it is up', async () => {
    rs = await startRsyslog();
    await rs.receiver.stop();
    const start = new Date(Math.floor(Date.now() / HOUR) * HOUR - 2 * HOUR).toISOString();
    sim = await startSimulator({ tokens: [{ token: 'dl-token' }], audit: { startAt: start, eventsPerHour: 300, idColumn: true } });
    dir = await mkdtemp(join(tmpdir(), 'syslog-dl-'));
    const config = join(dir, 'config.yaml');
    await writeFile(
      config,
      [
        'tenant: dltest',
        'platform:',
        '  baseUrl: ${SIM_URL}',
        '  token: ${SIM_TOKEN}',
        '  allowInsecureHttp: true',
        'state:',
        '  dir: ./state',
        'audit:',
        '  settleSeconds: 0',
        `  backfill: { from: "${start}" }`,
        '  sinks:',
        '    - { type: file, name: archive, path: ./out/audit.ndjson }',
        '    - type: syslog',
        '      name: rs',
        '      protocol: tcp',
        '      host: 127.0.0.1',
        `      port: ${rs.tcpPort}`,
        '      connectTimeoutSeconds: 2',
        `      retry: ${JSON.stringify(SMALL_RETRY)}`,
        '',
      ].join('\n'),
    );
    const env = { SIM_URL: sim.url, SIM_TOKEN: 'dl-token' };

    const run = await runCli(['audit', 'export', '--config', config, '--json'], env, dir);
    // Exit 1: something was dead-lettered; the run itself finished.
    expect(run.code, run.stderr).toBe(1);
    const summary = JSON.parse(run.stdout) as { cursorMs: number; delivered: Record<string, number>; deadLettered: Record<string, number> };
    const expected = [...sim.audit.eventsIn(start, new Date(summary.cursorMs).toISOString())].map((e) => e.id);
    expect(expected.length).toBeGreaterThan(300);
    expect(summary.cursorMs).toBeGreaterThan(Date.parse(start) + HOUR);
    expect(summary.delivered['archive']).toBe(expected.length);
    expect(summary.delivered['rs'] ?? 0).toBe(0);
    expect(summary.deadLettered['rs']).toBe(expected.length);

    const store = new FileDeadLetterStore(auditStateDir(join(dir, 'state'), 'dltest'));
    const letters = await store.peek('rs', 10_000);
    expect(sorted(letters.map((l) => l.event?.key ?? ''))).toEqual(sorted(expected));
    expect(new Set(letters.map((l) => l.code))).toEqual(new Set(['syslog_unreachable']));
    expect(letters[0]?.reason).toContain(`127.0.0.1:${rs.tcpPort}`);

    const status = await runCli(['audit', 'status', '--config', config, '--json'], env, dir);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ cursorMs: summary.cursorMs, deadLetters: { rs: expected.length } });

    await rs.receiver.start();
    const replay = await runCli(['audit', 'replay', '--config', config, '--sink', 'rs', '--json'], env, dir);
    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ sink: 'rs', taken: expected.length, delivered: expected.length, rejectedAgain: 0 });
    // Confirmed means rsyslog read them; its output file follows shortly.
    expect(sorted(await rs.receiver.waitForKeys(expected.length))).toEqual(sorted(expected));

    const after = await runCli(['audit', 'status', '--config', config, '--json'], env, dir);
    expect((JSON.parse(after.stdout) as { deadLetters: Record<string, number> }).deadLetters['rs'] ?? 0).toBe(0);
  });

  it('rsyslog (imrelp and gtls) down: the export dead-letters every event of both sinks, counted; a replay while down keeps them, one once it is up delivers every one', async () => {
    rs = await startRsyslog();
    await rs.receiver.stop();
    const common = { type: 'syslog' as const, host: '127.0.0.1', connectTimeoutSeconds: 2, retry: SMALL_RETRY };
    const sinks = [
      { ...common, name: 'rs-relp', protocol: 'relp' as const, port: rs.relpPort },
      { ...common, name: 'rs-tls', protocol: 'tls' as const, port: rs.tlsPort, tls: { caFile: rs.ca.caFile } },
    ];
    const names = sinks.map((c) => c.name);
    h = await createHarness({ nowMs: T0 + 2 * HOUR, plain: false, audit: { sinks } });
    const harness = h;
    const expected = expectedIds(harness.sim, T0, T0 + 2 * HOUR);
    const deadLettered = (name: string): Promise<number> =>
      metricValue(auditMetrics.eventsDeadLettered, { tenant: harness.tenant, sink: name });
    const unreachable = (name: string): Promise<number> => metricValue(sinkErrors, { sink: name, code: 'syslog_unreachable' });
    const before = await Promise.all(names.map(async (n) => [await deadLettered(n), await unreachable(n)]));

    const summary = await runAuditExport({
      platform: harness.platform,
      config: harness.config,
      tenant: harness.tenant,
      state: harness.state,
      deadLetters: harness.deadLetters,
      sinks: harness.config.sinks.map((c) => createSink(c, { configDir: harness.dir })),
      observer: auditRecorder(harness.tenant, undefined),
      now: () => harness.nowMs,
    });
    expect((await harness.state.load()).cursorMs).toBe(T0 + 2 * HOUR);
    for (const [i, name] of names.entries()) {
      expect(summary.deadLettered[name]).toBe(expected.length);
      expect((await deadLettered(name)) - (before[i]?.[0] ?? 0)).toBe(expected.length);
      expect((await unreachable(name)) - (before[i]?.[1] ?? 0)).toBe(expected.length);
      const letters = await harness.deadLetters.peek(name, 10_000);
      expect(sorted(letters.map((l) => l.event?.key ?? ''))).toEqual(sorted(expected));
      expect(new Set(letters.map((l) => l.code))).toEqual(new Set(['syslog_unreachable']));
    }
    const status = await auditStatus({
      tenant: harness.tenant,
      state: harness.state,
      deadLetters: harness.deadLetters,
      now: () => harness.nowMs,
    });
    expect(status.deadLetters).toEqual({ 'rs-relp': expected.length, 'rs-tls': expected.length });

    // A replay while the receiver is still down loses nothing: every entry goes back, attempt counted.
    const early = await replayDeadLetters(
      {
        tenant: harness.tenant,
        deadLetters: harness.deadLetters,
        sinks: [createSink(harness.config.sinks[0] as (typeof harness.config.sinks)[number], { configDir: harness.dir })],
      },
      'rs-relp',
    );
    expect(early).toMatchObject({ taken: expected.length, delivered: 0, rejectedAgain: expected.length });
    const back = await harness.deadLetters.peek('rs-relp', 10_000);
    expect(back).toHaveLength(expected.length);
    expect(back.every((l) => l.attempts === 1 && l.code === 'syslog_unreachable')).toBe(true);

    await rs.receiver.start();
    for (const c of harness.config.sinks) {
      const sink = createSink(c, { configDir: harness.dir });
      const replay = await replayDeadLetters({ tenant: harness.tenant, deadLetters: harness.deadLetters, sinks: [sink] }, c.name);
      expect(replay).toMatchObject({ taken: expected.length, delivered: expected.length, rejectedAgain: 0 });
    }
    // Every key once per sink.
    const lines = await rs.receiver.waitForLines(2 * expected.length);
    expect(lines).toHaveLength(2 * expected.length);
    const perKey = new Map<string, number>();
    for (const k of rs.receiver.keys()) perKey.set(k, (perKey.get(k) ?? 0) + 1);
    expect(sorted(perKey.keys())).toEqual(sorted(expected));
    expect([...perKey.values()].every((n) => n === 2)).toBe(true);
    expect(await harness.deadLetters.counts()).toEqual({});
  });
});
