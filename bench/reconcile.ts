/**
 * `npm run bench:reconcile`: the provisioning engine through the real CLI (a child process,
 * so timings and peak RSS are the tool's own) against the simulator in another process.
 *
 *  (a) initial sync of 10,000 users + 500 groups (~40 members each) into an empty platform,
 *      0 ms latency, concurrency 8: users/s, compared with the published 216 users/s of a
 *      Keycloak SCIM plug-in with 8 workers (target ≥ 1,000 users/s);
 *  (b) the same at 20 ms injected latency and concurrency 16: write operations/s divided
 *      by the ideal 16 / 0.020 s = 800/s (target ≥ 0.9);
 *  (c) a no-op plan of 100,000 users + 5,000 groups (the simulator is seeded with exactly the
 *      resources the engine would create, and the ledger names them): wall time and peak
 *      RSS of the planning process (targets ≤ 15 s, ≤ 400 MB).
 *
 * `--quick` runs a tenth of every size and does not touch bench/RESULTS.md.
 * Results are printed and written to the `reconcile` section of bench/RESULTS.md.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { ApplyResult } from '../src/reconcile/apply.ts';
import type { Plan } from '../src/reconcile/plan-types.ts';
import { generateDirectory, writeDirectory } from './lib/directory.ts';
import { describeMachine } from './lib/machine.ts';
import { runMeasured, type MeasuredRun } from './lib/peak-rss.ts';
import { rawPosts } from './lib/raw-load.ts';
import { writeResultsSection } from './lib/results-md.ts';
import { BIN, startSimulatorProcess } from './lib/simulator-process.ts';

const TOKEN = 'bench-token';
const QUICK = process.argv.includes('--quick');
const SCALE = QUICK ? 10 : 1;
const KEYCLOAK_USERS_PER_S = 216; // published: Keycloak SCIM plug-in, 8 workers
const MEMBERS_PER_PATCH = 100; // platform.scim.maxMembersPerPatch default

/** Profiling findings behind the numbers (node --cpu-prof / --heap-prof and staged heap measurements). */
const ANALYSIS = [
  '### Where the time and memory go (profiled 2026-11-21)',
  '',
  '- (b) The apply process is ~70% idle at 20 ms latency (`--cpu-prof`): ~0.45 ms CPU per write (undici, pino change log, p-queue), so it is latency-bound, not CPU-bound. The same-run baseline (plain undici, no engine) sets the ceiling this shared 2-core machine allows (0.86–0.92 of ideal over several runs); the engine reaches 0.85–0.96 of that baseline (0.75–0.87 of ideal), varying with the load of other work on the machine.',
  "- (c) Memory, before the fix: the listed platform objects were the largest live set, ~1.3 KB per user as the server sends them (`meta`, the read-only `groups` of each user, members' `display`/`$ref`). `ScimClient.listUsers/listGroups` now drop that bookkeeping as each page arrives (src/platform/scim/compact.ts): live listing 130 → 56 MB for users, 49 → 20 MB for groups; planning peak RSS 626 → ~515 MB; wall time unchanged.",
  '- (c) What remains is outside the reconcile engine: the CLI process starts at ~125–145 MB RSS (every command module and its dependencies are imported eagerly, plus type stripping when run from source), and the file source read alone peaks at ~400 MB for 100,000 users: JSON.parse of the 26 MB file (+~100 MB) and per-entry zod validation/normalization (+~155 MB; a hand-written fast path for well-formed entries measured +~70 MB). Reaching ≤ 400 MB needs a lighter file-source path and lazy command imports.',
];

interface Metric {
  name: string;
  value: string;
  target: string;
  pass: boolean;
}

function config(concurrency: number): string {
  return stringify({
    tenant: 'bench',
    platform: {
      baseUrl: '${SIM_URL}',
      token: '${BENCH_TOKEN}',
      allowInsecureHttp: true,
      maxConnections: 64,
      scim: { pageSize: 1000 },
    },
    provisioning: { source: { type: 'file', path: 'directory.json' }, apply: { concurrency } },
    state: { dir: 'state' },
    logging: { level: 'info' },
  });
}

async function workspace(
  name: string,
  concurrency: number,
  users: number,
  groups: number,
): Promise<{ dir: string; configPath: string; directoryPath: string }> {
  const dir = await mkdtemp(join(tmpdir(), `bench-reconcile-${name}-`));
  const configPath = join(dir, 'config.yaml');
  const directoryPath = join(dir, 'directory.json');
  await writeFile(configPath, config(concurrency));
  await writeDirectory(directoryPath, generateDirectory(users, groups, 40));
  return { dir, configPath, directoryPath };
}

function cliEnv(url: string): NodeJS.ProcessEnv {
  return { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', SIM_URL: url, BENCH_TOKEN: TOKEN };
}

function parseJson<T>(run: MeasuredRun, what: string): T {
  try {
    return JSON.parse(run.stdout) as T;
  } catch {
    throw new Error(`${what}: exit ${run.code}, stdout is not JSON\n${run.stderr.slice(0, 3000)}`);
  }
}

/** The engine's own timing line (`plan computed`), for the breakdown. */
function timings(stderr: string): { sourceMs: number; platformMs: number; planMs: number } | undefined {
  for (const line of stderr.split('\n')) {
    if (!line.includes('"timings"')) continue;
    try {
      return (JSON.parse(line) as { timings: { sourceMs: number; platformMs: number; planMs: number } }).timings;
    } catch {
      // not a JSON log line
    }
  }
  return undefined;
}

const s = (ms: number): string => (ms / 1000).toFixed(2);
const n0 = (x: number): string => Math.round(x).toLocaleString('en-US');

async function initialSync(label: string, opts: { users: number; groups: number; latencyMs: number; concurrency: number }) {
  const ws = await workspace(label, opts.concurrency, opts.users, opts.groups);
  const sim = await startSimulatorProcess({ token: TOKEN, maxPageSize: 1000, latencyMs: opts.latencyMs });
  try {
    const run = await runMeasured(process.execPath, [BIN, 'apply', '--config', ws.configPath, '--json'], {
      env: cliEnv(sim.url),
      cwd: ws.dir,
      keepStdout: true,
    });
    const { plan, result } = parseJson<{ plan: Plan; result: ApplyResult }>(run, `apply (${label})`);
    if (run.code !== 0 || result.failed.length > 0)
      throw new Error(`apply (${label}) exit ${run.code}, ${result.failed.length} failed: ${JSON.stringify(result.failed.slice(0, 3))}`);
    const created = result.succeeded['user.create'] ?? 0;
    if (created !== opts.users) throw new Error(`apply (${label}) created ${created} users, expected ${opts.users}`);
    const memberPatches = plan.memberships.reduce((k, m) => k + Math.ceil(m.add.length / MEMBERS_PER_PATCH), 0);
    const writes = plan.users.create.length + plan.groups.create.length + memberPatches;
    return { run, plan, result, writes, via: sim.via, t: timings(run.stderr) };
  } finally {
    await sim.stop();
    await rm(ws.dir, { recursive: true, force: true });
  }
}

/** Ceiling of the environment: plain undici POSTs against the same kind of simulator. */
async function rawBaseline(total: number, latencyMs: number, concurrency: number) {
  const sim = await startSimulatorProcess({ token: TOKEN, maxPageSize: 1000, latencyMs });
  try {
    return await rawPosts(sim.url, TOKEN, total, concurrency);
  } finally {
    await sim.stop();
  }
}

async function noopPlan(users: number, groups: number) {
  const ws = await workspace('noop', 8, users, groups);
  const ledgerOut = join(ws.dir, 'state', 'bench', 'ledger.json');
  const seedStarted = performance.now();
  const sim = await startSimulatorProcess({ token: TOKEN, maxPageSize: 1000, seedDirectory: ws.directoryPath, ledgerOut });
  const seedMs = performance.now() - seedStarted;
  try {
    const run = await runMeasured(process.execPath, [BIN, 'plan', '--config', ws.configPath, '--json'], {
      env: cliEnv(sim.url),
      cwd: ws.dir,
      keepStdout: true,
    });
    const plan = parseJson<Plan>(run, 'plan (no-op)');
    // The same plan with --low-memory (V8 optimize-for-size), the mode for memory-bound runs.
    const low = await runMeasured(process.execPath, [BIN, '--low-memory', 'plan', '--config', ws.configPath, '--json'], {
      env: cliEnv(sim.url),
      cwd: ws.dir,
      keepStdout: true,
    });
    const lowPlan = parseJson<Plan>(low, 'plan --low-memory (no-op)');
    if (low.code !== 0 || lowPlan.summary.changes !== 0)
      throw new Error(`plan --low-memory is not a no-op: exit ${low.code} ${JSON.stringify(lowPlan.summary)}`);
    if (run.code !== 0) throw new Error(`plan exit ${run.code}: ${run.stderr.slice(0, 2000)}`);
    if (plan.summary.changes !== 0 || plan.summary.skipped !== 0)
      throw new Error(`the no-op plan is not a no-op: ${JSON.stringify(plan.summary)}`);
    // Attribution: the CLI's start-up alone, and the source read alone, each in its own process.
    const startup = await runMeasured(process.execPath, [BIN, '--version'], { env: cliEnv(sim.url) });
    const sourceOnly = await runMeasured(process.execPath, [join(import.meta.dirname, 'lib', 'read-source.ts'), ws.configPath], {
      env: cliEnv(sim.url),
    });
    if (sourceOnly.code !== 0) throw new Error(`read-source: ${sourceOnly.stderr.slice(0, 2000)}`);
    return { run, low, plan, seedMs, t: timings(run.stderr), startupMb: startup.peakRssMb, sourceOnlyMb: sourceOnly.peakRssMb };
  } finally {
    await sim.stop();
    await rm(ws.dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const where = describeMachine();
  process.stdout.write(`bench:reconcile${QUICK ? ' (quick: sizes / 10)' : ''} — ${where}\n`);
  const metrics: Metric[] = [];
  const notes: string[] = [];

  // (a) throughput at 0 ms latency
  const aUsers = 10_000 / SCALE;
  const a = await initialSync('a', { users: aUsers, groups: 500 / SCALE, latencyMs: 0, concurrency: 8 });
  const aUsersPerS = aUsers / (a.run.wallMs / 1000);
  const aApplyUsersPerS = aUsers / (a.result.durationMs / 1000);
  process.stdout.write(
    `(a) initial sync ${n0(aUsers)} users + ${n0(a.plan.groups.create.length)} groups, concurrency 8, 0 ms: ${s(a.run.wallMs)} s end to end ` +
      `(apply phase ${s(a.result.durationMs)} s) → ${n0(aUsersPerS)} users/s end to end, ${n0(aApplyUsersPerS)} users/s in the apply phase; ` +
      `×${(aUsersPerS / KEYCLOAK_USERS_PER_S).toFixed(1)} the Keycloak plug-in's ${KEYCLOAK_USERS_PER_S}/s; peak RSS ${a.run.peakRssMb?.toFixed(0)} MB\n`,
  );
  metrics.push({
    name: `(a) initial sync ${n0(aUsers)} users + ${n0(500 / SCALE)} groups, 0 ms latency, concurrency 8 — users/s end to end (process start → exit)`,
    value: `${n0(aUsersPerS)} (×${(aUsersPerS / KEYCLOAK_USERS_PER_S).toFixed(1)} vs Keycloak SCIM plug-in 216/s)`,
    target: '≥ 1,000',
    pass: aUsersPerS >= 1000,
  });
  notes.push(
    `(a) ${n0(a.writes)} write requests; apply phase alone ${s(a.result.durationMs)} s = ${n0(aApplyUsersPerS)} users/s; source read + listing + plan ${a.t ? s(Math.max(a.t.sourceMs, a.t.platformMs) + a.t.planMs) : '?'} s; peak RSS of the apply process ${a.run.peakRssMb?.toFixed(0)} MB.`,
  );

  // (b) the same at 20 ms latency, concurrency 16
  const b = await initialSync('b', { users: aUsers, groups: 500 / SCALE, latencyMs: 20, concurrency: 16 });
  const ideal = 16 / 0.02;
  const bOpsPerS = b.writes / (b.result.durationMs / 1000);
  process.stdout.write(
    `(b) same at 20 ms latency, concurrency 16: ${n0(b.writes)} writes in ${s(b.result.durationMs)} s (apply phase) → ${n0(bOpsPerS)} ops/s = ${(bOpsPerS / ideal).toFixed(2)} of the ideal ${ideal}/s; ${s(b.run.wallMs)} s end to end\n`,
  );
  const raw = await rawBaseline(4000 / SCALE, 20, 16);
  process.stdout.write(
    `    baseline, plain undici POSTs at concurrency 16 on the same kind of simulator: ${n0(raw.opsPerS)} ops/s = ${(raw.opsPerS / ideal).toFixed(2)} of ideal; engine ÷ baseline ${(bOpsPerS / raw.opsPerS).toFixed(2)}\n`,
  );
  metrics.push({
    name: '(b) same at 20 ms latency, concurrency 16 — write ops/s in the apply phase ÷ ideal 800/s',
    value: `${(bOpsPerS / ideal).toFixed(2)} (${n0(bOpsPerS)} ops/s)`,
    target: '≥ 0.90',
    pass: bOpsPerS / ideal >= 0.9,
  });
  notes.push(
    `(b) ${n0(b.writes)} writes (user POSTs + group POSTs + membership PATCHes); end to end ${s(b.run.wallMs)} s including start-up, source read and the (latency-bound) listing. Same-run baseline: plain undici POSTs (no engine) at concurrency 16 against the same simulator reach ${n0(raw.opsPerS)} ops/s = ${(raw.opsPerS / ideal).toFixed(2)} of the ideal, so the engine achieves ${(bOpsPerS / raw.opsPerS).toFixed(2)} of what this machine allows; the rest of the gap to 800/s is the simulator's and the OS's per-request cost on 2 shared cores.`,
  );

  // (c) no-op plan at 100k users / 5k groups
  const cUsers = 100_000 / SCALE;
  const cGroups = 5_000 / SCALE;
  const c = await noopPlan(cUsers, cGroups);
  process.stdout.write(
    `(c) no-op plan ${n0(cUsers)} users + ${n0(cGroups)} groups: ${s(c.run.wallMs)} s, peak RSS ${c.run.peakRssMb?.toFixed(0)} MB; CLI start-up alone ${c.startupMb?.toFixed(0)} MB, source read alone ${c.sourceOnlyMb?.toFixed(0)} MB` +
      (c.t ? ` (source ${s(c.t.sourceMs)} s, then platform listing ${s(c.t.platformMs)} s, then plan ${s(c.t.planMs)} s)` : '') +
      ` [simulator seeded in ${s(c.seedMs)} s]\n`,
  );
  metrics.push({
    name: `(c) no-op plan, ${n0(cUsers)} users + ${n0(cGroups)} groups — wall time of \`plan --json\``,
    value: `${s(c.run.wallMs)} s`,
    target: '≤ 15 s',
    pass: c.run.wallMs <= 15_000,
  });
  metrics.push({
    name: '(c) same — peak RSS of the planning process (VmHWM), default settings',
    value: `${c.run.peakRssMb?.toFixed(0) ?? '?'} MB`,
    target: '≤ 400 MB',
    pass: (c.run.peakRssMb ?? Infinity) <= 400,
  });
  metrics.push({
    name: '(c) same with `--low-memory` (V8 optimize-for-size) — wall time',
    value: `${s(c.low.wallMs)} s`,
    target: '≤ 15 s',
    pass: c.low.wallMs <= 15_000,
  });
  metrics.push({
    name: '(c) same with `--low-memory` — peak RSS (VmHWM)',
    value: `${c.low.peakRssMb?.toFixed(0) ?? '?'} MB`,
    target: '≤ 400 MB',
    pass: (c.low.peakRssMb ?? Infinity) <= 400,
  });
  process.stdout.write(`(c) with --low-memory: ${s(c.low.wallMs)} s, peak RSS ${c.low.peakRssMb?.toFixed(0)} MB\n`);
  if (c.t)
    notes.push(
      `(c) source read ${s(c.t.sourceMs)} s, then platform listing ${s(c.t.platformMs)} s (one after the other, so a failed source read sends nothing to the platform); planning ${s(c.t.planMs)} s; the rest is Node start-up and printing.`,
    );
  notes.push(
    `(c) peak RSS attribution, each in its own process: CLI start-up alone (\`--version\`) ${c.startupMb?.toFixed(0)} MB; reading the file source alone (bench/lib/read-source.ts: JSON.parse of the ${n0(cUsers)}-user file + per-entry validation) ${c.sourceOnlyMb?.toFixed(0)} MB; the whole plan ${c.run.peakRssMb?.toFixed(0)} MB.`,
  );
  notes.push(
    `Simulator process: ${a.via === 'cli' ? '`scim-audit-sync simulate`' : 'bench/lib/simulator-main.ts (the CLI had no `simulate` command yet)'} for (a)/(b); bench/lib/simulator-main.ts with --seed-directory for (c).`,
  );

  for (const m of metrics) process.stdout.write(`${m.pass ? 'PASS' : 'FAIL'}  ${m.name}: ${m.value} (target ${m.target})\n`);
  if (QUICK) return;
  const table = [
    '| metric | result | target | pass |',
    '|---|---:|---:|:---:|',
    ...metrics.map((m) => `| ${m.name} | ${m.value} | ${m.target} | ${m.pass ? 'pass' : '**FAIL**'} |`),
  ];
  await writeResultsSection(
    'reconcile',
    [
      '## Reconcile (`npm run bench:reconcile`)',
      '',
      `Run ${where}. The CLI (\`apply\`/\`plan --json\`) in its own process against the simulator in another; file source (JSON), default config except \`scim.pageSize: 1000\`, \`maxConnections: 64\`, \`logging.level: info\`.`,
      '',
      ...table,
      '',
      ...notes.map((x) => `- ${x}`),
      '',
      ...ANALYSIS,
      '',
    ].join('\n'),
  );
  process.stdout.write('written to bench/RESULTS.md\n');
}

await main();
