/**
 * `npm run bench:audit`: the audit export engine against the simulator running in its own
 * process, into the real file sink (fdatasync on), compared in the same run with raw
 * csv-parse on the same bytes. Each measured side runs in its own child process so its
 * peak RSS is its own.
 *
 *   AUDIT_BENCH_ROWS=1000000   rows of the main run (default 1,000,000 ≈ 150 MB of CSV)
 *   AUDIT_BENCH_10M=1          also run 10,000,000 rows (memory must stay flat)
 *
 * Reported, each against csv-parse rows/s over the same HTTP exports (same windows, same
 * server): events/s and peak RSS of the shipped CLI (compiled) in its default mode and with
 * `--low-memory`, and of the engine in-process from the sources (with its live heap after GC);
 * csv-parse over a local copy of the bytes for reference. Results go to bench/RESULTS.md.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';
import { runMeasured } from './lib/peak-rss.ts';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse';
import { PlatformClient } from '../src/platform/http-client.ts';
import { openAuditExport } from '../src/platform/audit-export.ts';
import { auditSchema } from '../src/audit/config-schema.ts';
import { createSink } from '../src/audit/sinks/registry.ts';
import { FileAuditStateStore, auditStateDir } from '../src/audit/state/file-store.ts';
import { FileDeadLetterStore } from '../src/audit/dead-letter/file-store.ts';
import { runAuditExport } from '../src/audit/run-audit-export.ts';
import { planWindows, requestFor } from '../src/audit/windows.ts';

const SELF = fileURLToPath(import.meta.url);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TOKEN = 'bench-token';
const START = Date.parse('2026-01-01T00:00:00Z');
const EVENTS_PER_HOUR = 100_000;
const WINDOW_MINUTES = 60;
/** What the Dockerfile and the Helm chart set for the process (the shipped CLI runs with it). */
const IMAGE_ENV = { NODE_ENV: 'production', MALLOC_ARENA_MAX: '2' };

interface Job {
  url: string;
  rows: number;
  dir: string;
}

interface Measured {
  rows: number;
  seconds: number;
  bytes?: number;
  maxRssMb: number;
  /** Engine only: the largest heap still live after a forced GC at the end of a window. */
  liveHeapMb?: number;
}

const endOf = (rows: number): number => START + Math.ceil((rows / EVENTS_PER_HOUR) * 3_600_000);
const rssMb = (): number => Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10;
const client = (url: string): PlatformClient => new PlatformClient({ baseUrl: url, token: TOKEN, allowInsecureHttp: true, bodyTimeoutMs: 120_000 });

/** The audit section both measured engines use (the in-process one and the shipped CLI). */
function auditInput(outDir: string): Record<string, unknown> {
  return {
    windowMinutes: WINDOW_MINUTES,
    overlapMinutes: 15,
    settleSeconds: 0,
    batchSize: 1000,
    checkpointEvents: 20_000,
    backfill: { from: new Date(START).toISOString() },
    sinks: [{ type: 'file', name: 'file', path: join(outDir, 'audit.ndjson'), batch: { maxEvents: 1000, maxBytes: 8 * 1024 * 1024 }, rotateMaxBytes: 1024 * 1024 * 1024, maxFiles: 2 }],
  };
}

function engineConfig(dir: string) {
  return auditSchema.parse(auditInput(join(dir, 'out')));
}

/** Child: the real engine, real file sink, local state. */
async function engineChild(job: Job): Promise<Measured> {
  const config = engineConfig(job.dir);
  const platform = client(job.url);
  const tenant = 'bench';
  const gc = (globalThis as { gc?: () => void }).gc;
  let liveHeapMb = 0;
  const started = performance.now();
  const s = await runAuditExport(
    {
      platform,
      config,
      tenant,
      state: new FileAuditStateStore(join(job.dir, 'state'), tenant),
      deadLetters: new FileDeadLetterStore(auditStateDir(join(job.dir, 'state'), tenant)),
      sinks: config.sinks.map((c) => createSink(c, { configDir: job.dir })),
      now: () => endOf(job.rows),
      // What the engine really retains (RSS also holds garbage V8 has not collected yet).
      onProgress: (p) => {
        if (p.phase !== 'window-done' || !gc) return;
        gc();
        liveHeapMb = Math.max(liveHeapMb, Math.round(process.memoryUsage().heapUsed / 1e5) / 10);
      },
    },
    {},
  );
  const seconds = (performance.now() - started) / 1000;
  await platform.close();
  if (s.parseErrors > 0 || s.eventsRead !== s.delivered['file']) throw new Error(`engine run incomplete: ${JSON.stringify(s)}`);
  return { rows: s.eventsRead, seconds, maxRssMb: rssMb(), liveHeapMb };
}

/** Child: the same requests, each body straight into csv-parse, rows counted. */
async function baselineHttpChild(job: Job): Promise<Measured> {
  const platform = client(job.url);
  const started = performance.now();
  let rows = 0;
  let bytes = 0;
  for (const w of planWindows(START, endOf(job.rows), WINDOW_MINUTES * 60_000)) {
    const req = requestFor(w, 'datetime');
    const res = await openAuditExport(platform, { startMs: req.startMs, endMs: req.endMs, precision: 'datetime' });
    res.body.on('data', (b: Buffer) => (bytes += b.length));
    for await (const _ of res.body.pipe(parse({ bom: true }))) rows++;
    rows--; // header
  }
  const seconds = (performance.now() - started) / 1000;
  await platform.close();
  return { rows, seconds, bytes, maxRssMb: rssMb() };
}

/** Child: csv-parse over a local copy of the same bytes (no network, no server). */
async function baselineFileChild(job: Job & { file: string }): Promise<Measured> {
  const started = performance.now();
  let rows = 0;
  for await (const _ of createReadStream(job.file).pipe(parse({ bom: true, relax_column_count: true }))) rows++;
  return { rows, seconds: (performance.now() - started) / 1000, maxRssMb: rssMb() };
}

function runChild(mode: string, job: object, nodeFlags: string[] = []): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeFlags, SELF, mode, JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1) as string) as Measured) : reject(new Error(`${mode} exited ${code}`))));
  });
}

/** Child: the simulator on its own (used when the CLI has no `simulate` command). */
async function simulatorChild(): Promise<void> {
  const { startSimulator } = await import('../src/simulator/index.ts');
  const sim = await startSimulator({ tokens: [{ token: TOKEN }], recordRequests: false, audit: { startAt: new Date(START).toISOString(), eventsPerHour: EVENTS_PER_HOUR } });
  process.stdout.write(`${JSON.stringify({ event: 'listening', url: sim.url })}\n`);
  process.once('SIGTERM', () => void sim.close());
}

async function listen(args: string[]): Promise<{ url: string; proc: ChildProcess } | undefined> {
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const line = await new Promise<string | undefined>((resolve) => {
    createInterface({ input: proc.stdout! }).once('line', resolve);
    proc.once('exit', () => resolve(undefined));
  });
  if (line === undefined) {
    if (!/unknown command/.test(stderr)) process.stderr.write(stderr);
    return undefined;
  }
  return { url: (JSON.parse(line) as { url: string }).url, proc };
}

/** The simulator in a separate process: the CLI's `simulate` command, else this script's own child mode. */
async function startSimulatorProcess(): Promise<{ url: string; proc: ChildProcess }> {
  const cli = [join(ROOT, 'bin', 'scim-audit-sync.mjs'), 'simulate', '--port', '0', '--token', TOKEN, '--audit-events-per-hour', String(EVENTS_PER_HOUR), '--audit-start-at', new Date(START).toISOString(), '--log-level', 'warn'];
  const started = (await listen(cli)) ?? (await listen([SELF, '--simulator']));
  if (!started) throw new Error('could not start the simulator');
  return started;
}

/** Downloads the export of the whole range once, for the local-file baseline. */
async function download(url: string, rows: number, file: string): Promise<number> {
  const platform = client(url);
  const out = createWriteStream(file);
  for (const w of planWindows(START, endOf(rows), WINDOW_MINUTES * 60_000)) {
    const req = requestFor(w, 'datetime');
    const res = await openAuditExport(platform, { startMs: req.startMs, endMs: req.endMs, precision: 'datetime' });
    for await (const chunk of res.body) if (!out.write(chunk)) await once(out, 'drain');
  }
  await new Promise<void>((resolve) => out.end(resolve));
  await platform.close();
  return (await stat(file)).size;
}

interface Result {
  rows: number;
  bytes: number;
  /** The engine in-process, run from the TypeScript sources (gives the live heap after GC). */
  engine: Measured;
  /** The shipped artifact: compiled build, the real CLI, default V8 settings. */
  cliDefault: Measured;
  /** The same with `--low-memory`. */
  cliLowMemory: Measured;
  http: Measured;
  file: Measured;
}

/** `npm run build` into a temp dir laid out like the image (dist/, bin/, package.json, node_modules). */
async function buildShipped(): Promise<string> {
  const build = await mkdtemp(join(tmpdir(), 'bench-audit-build-'));
  await new Promise<void>((resolve, reject) => {
    const tsc = spawn(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', join(build, 'dist')], { stdio: 'inherit' });
    tsc.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`tsc exited ${code}`))));
  });
  await mkdir(join(build, 'bin'));
  await copyFile(join(ROOT, 'bin', 'scim-audit-sync.mjs'), join(build, 'bin', 'scim-audit-sync.mjs'));
  await copyFile(join(ROOT, 'package.json'), join(build, 'package.json'));
  await symlink(join(ROOT, 'node_modules'), join(build, 'node_modules'));
  return build;
}

/** The real CLI from the compiled build: `scim-audit-sync [--low-memory] audit export --json`, peak RSS from /proc. */
async function shippedCli(build: string, job: Job, lowMemory: boolean): Promise<Measured> {
  const configPath = join(job.dir, 'cli-config.yaml');
  await rm(join(job.dir, 'cli-state'), { recursive: true, force: true });
  await rm(join(job.dir, 'cli-out'), { recursive: true, force: true });
  await writeFile(
    configPath,
    stringify({
      tenant: 'bench-cli',
      platform: { baseUrl: job.url, token: TOKEN, allowInsecureHttp: true, timeoutSeconds: 120 },
      state: { dir: join(job.dir, 'cli-state') },
      logging: { level: 'warn' },
      audit: auditInput(join(job.dir, 'cli-out')),
    }),
  );
  const run = await runMeasured(process.execPath, [join(build, 'bin', 'scim-audit-sync.mjs'), ...(lowMemory ? ['--low-memory'] : []), 'audit', 'export', '--config', configPath, '--to', new Date(endOf(job.rows)).toISOString(), '--json'], { keepStdout: true, env: { PATH: process.env['PATH'] ?? '', ...IMAGE_ENV } });
  if (run.code !== 0) throw new Error(`audit export (compiled CLI) exited ${run.code}: ${run.stderr.slice(0, 2000)}`);
  const summary = JSON.parse(run.stdout) as { eventsRead: number; durationMs: number };
  if (summary.eventsRead !== job.rows) throw new Error(`compiled CLI read ${summary.eventsRead} events, expected ${job.rows}`);
  return { rows: summary.eventsRead, seconds: summary.durationMs / 1000, maxRssMb: Math.round(run.peakRssMb ?? 0) };
}

async function measure(url: string, rows: number, build: string): Promise<Result> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-audit-'));
  try {
    const csv = join(dir, 'export.csv');
    const bytes = await download(url, rows, csv); // also warms the simulator up
    const http1 = await runChild('--baseline-http', { url, rows, dir });
    const cliDefault = await shippedCli(build, { url, rows, dir }, false);
    const engine = await runChild('--engine', { url, rows, dir }, ['--expose-gc']);
    const cliLowMemory = await shippedCli(build, { url, rows, dir }, true);
    // One baseline run is enough at 10M (it takes minutes); the first one warmed nothing up there.
    const http2 = rows > 2_000_000 ? http1 : await runChild('--baseline-http', { url, rows, dir });
    const file = await runChild('--baseline-file', { url, rows, dir, file: csv });
    // The faster baseline run is the one compared against (the conservative ratio).
    const http = http1.seconds <= http2.seconds ? http1 : http2;
    return { rows, bytes, engine, cliDefault, cliLowMemory, http, file };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const rate = (m: Measured): number => m.rows / m.seconds;

const n = (x: number): string => Math.round(x).toLocaleString('en');
const RATIO_AIM = 0.75;
const RSS_AIM_MB = 150;

/** `events/s (ratio ✓|✗)` against the HTTP baseline of the same run. */
function speed(m: Measured, base: Measured): string {
  const ratio = rate(m) / rate(base);
  return `${n(rate(m))} (**${ratio.toFixed(2)}** ${ratio >= RATIO_AIM ? '✓' : '✗'})`;
}

const rss = (mb: number): string => `**${mb}** ${mb <= RSS_AIM_MB ? '✓' : '✗'}`;

function report(results: Result[]): string {
  const lines = [
    '## Audit export (`npm run bench:audit`)',
    '',
    `Run ${new Date().toISOString()} on Node ${process.versions.node}, ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'}). Simulator in a separate process; engine into the file sink (fdatasync on, batches of 1000, checkpoint every 20,000 events), SHA-256 keys (no id column), one-hour windows of ${EVENTS_PER_HOUR.toLocaleString('en')} rows; each side in its own child process.`,
    '',
    `Aims: events/s ÷ csv-parse rows/s on the same HTTP exports ≥ ${RATIO_AIM}; peak RSS ≤ ${RSS_AIM_MB} MB, and the same at 10M rows (\`AUDIT_BENCH_10M=1\`). ✓/✗ mark each figure against its aim.`,
    '',
    '| rows | CSV MB | csv-parse rows/s (same HTTP exports) | shipped CLI, default: events/s (ratio) | peak RSS MB | shipped CLI, `--low-memory`: events/s (ratio) | peak RSS MB | engine in-process from sources: events/s (ratio) | peak RSS MB | live heap after GC, max MB | csv-parse rows/s (local file) | csv-parse process peak RSS MB |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of results) {
    lines.push(
      `| ${n(r.rows)} | ${(r.bytes / 1e6).toFixed(0)} | ${n(rate(r.http))} | ${speed(r.cliDefault, r.http)} | ${rss(r.cliDefault.maxRssMb)} | ${speed(r.cliLowMemory, r.http)} | ${rss(r.cliLowMemory.maxRssMb)} | ${speed(r.engine, r.http)} | ${r.engine.maxRssMb} | ${r.engine.liveHeapMb ?? '-'} | ${n(rate(r.file))} | ${r.http.maxRssMb} |`,
    );
  }
  lines.push(
    '',
    '- *Shipped CLI* is what users run: the `npm run build` output, the real `scim-audit-sync [--low-memory] audit export --json` in the environment of the image (`NODE_ENV=production`, `MALLOC_ARENA_MAX=2`); peak RSS sampled from /proc (VmHWM, the whole process: main thread and parse thread), events/s from its own summary. By default csv-parse runs on a parse thread; `--low-memory` parses on the main thread (no second heap) with V8\'s optimize-for-size.',
    '- *Engine in-process* runs from the TypeScript sources (~115 MB of start-up for type stripping alone, see the csv-parse process) and reports the *live heap after GC* of its main thread (max over all windows): what the engine retains, which must not grow with the export size.',
    '- Throughput: the engine does what csv-parse does plus a SHA-256, a JSON document and an fdatasync\'d write per row, on two cores shared with the simulator; where the time goes (CPU profile) is in docs/audit.md#performance.',
    '',
  );
  return lines.join('\n');
}

async function writeResults(section: string): Promise<void> {
  const path = join(ROOT, 'bench', 'RESULTS.md');
  let text = '';
  try {
    text = await readFile(path, 'utf8');
  } catch {
    text = '# Benchmark results\n\n';
  }
  const begin = '<!-- bench:audit:begin -->';
  const end = '<!-- bench:audit:end -->';
  const block = `${begin}\n${section}${end}\n`;
  const i = text.indexOf(begin);
  const j = text.indexOf(end);
  text = i >= 0 && j > i ? text.slice(0, i) + block + text.slice(j + end.length + 1) : `${text.trimEnd()}\n\n${block}`;
  await writeFile(path, text);
}

async function main(): Promise<void> {
  const [mode, arg] = process.argv.slice(2);
  if (mode === '--simulator') return simulatorChild();
  if (mode === '--engine') return void console.log(JSON.stringify(await engineChild(JSON.parse(arg as string) as Job)));
  if (mode === '--baseline-http') return void console.log(JSON.stringify(await baselineHttpChild(JSON.parse(arg as string) as Job)));
  if (mode === '--baseline-file') return void console.log(JSON.stringify(await baselineFileChild(JSON.parse(arg as string) as Job & { file: string })));

  const sizes = [Number(process.env['AUDIT_BENCH_ROWS'] ?? 1_000_000)];
  if (process.env['AUDIT_BENCH_10M'] === '1') sizes.push(10_000_000);
  const sim = await startSimulatorProcess();
  const results: Result[] = [];
  const build = await buildShipped();
  try {
    for (const rows of sizes) {
      process.stderr.write(`bench:audit: ${rows.toLocaleString('en')} rows…\n`);
      const r = await measure(sim.url, rows, build);
      results.push(r);
      process.stderr.write(`  shipped CLI: default ${n(rate(r.cliDefault))}/s, peak RSS ${r.cliDefault.maxRssMb} MB; --low-memory ${n(rate(r.cliLowMemory))}/s, peak RSS ${r.cliLowMemory.maxRssMb} MB\n`);
      process.stderr.write(`  engine ${n(rate(r.engine))}/s (${r.engine.seconds.toFixed(1)} s, RSS ${r.engine.maxRssMb} MB); csv-parse http ${n(rate(r.http))}/s, file ${n(rate(r.file))}/s; ratio ${(rate(r.engine) / rate(r.http)).toFixed(2)}\n`);
    }
  } finally {
    sim.proc.kill('SIGTERM');
    await rm(build, { recursive: true, force: true });
  }
  const section = report(results);
  process.stdout.write(`${section}\n`);
  await writeResults(section);
}

await main();
