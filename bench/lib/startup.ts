/**
 * Start-up memory of the CLI: peak RSS of `--version` and of a `plan` of a tiny directory
 * (10 users, 2 groups, file source) against the simulator in another process.
 *
 * The aim (≤ 80 MB each) applies to the form the production image ships: the compiled build
 * (dist/, run by bin/scim-audit-sync.mjs with the Dockerfile's ENV (NODE_ENV, MALLOC_ARENA_MAX…), as in
 * the Dockerfile). It is built here into a temporary directory laid out like the image (bin/,
 * dist/, package.json, node_modules), so the checkout never gets a dist/ that the launcher would
 * then prefer to the sources. The from-source form (Node's type stripping, what a checkout runs)
 * is measured and printed too, without a target.
 *
 * Each figure is the median of RUNS runs (before the launcher's start-up settings, a run in which
 * V8 tiered llhttp up to Turbofan cost 4–5 MB more, so single runs were bimodal); peak RSS is the kernel's high-water mark (VmHWM) as
 * the process reads it on exit (`--import` of a data: URL module that writes it to fd 3): these
 * processes live for well under a second, and sampling /proc from outside misses the last
 * milliseconds (1–3 MB here).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { generateDirectory, writeDirectory } from './directory.ts';
import { buildShipped, IMAGE_ENV, shippedBin } from './shipped-build.ts';
import { ROOT, startSimulatorProcess } from './simulator-process.ts';

export interface StartupMetric {
  name: string;
  value: string;
  target: string;
  pass: boolean;
}

const TOKEN = 'bench-startup-token';
const TARGET_MB = 80;
const RUNS = 9;

async function tinyWorkspace(): Promise<{ dir: string; configPath: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-startup-'));
  const configPath = join(dir, 'config.yaml');
  await writeFile(
    configPath,
    stringify({
      tenant: 'bench',
      platform: { baseUrl: '${SIM_URL}', token: '${BENCH_TOKEN}', allowInsecureHttp: true },
      provisioning: { source: { type: 'file', path: 'directory.json' } },
      state: { dir: 'state' },
      logging: { level: 'info' },
    }),
  );
  await writeDirectory(join(dir, 'directory.json'), generateDirectory(10, 2, 5));
  return { dir, configPath };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

/** Loaded first with --import: on exit, writes the process's own VmHWM (kB) to fd 3. */
const REPORT_HWM = `data:text/javascript,${encodeURIComponent(
  "import { readFileSync, writeSync } from 'node:fs';" +
    "process.on('exit', () => writeSync(3, /^VmHWM:\\s+(\\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? ''));",
)}`;

/** Peak RSS (MB) of one run; throws when it fails. */
async function onePeakMb(bin: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<number> {
  const child = spawn(process.execPath, ['--import', REPORT_HWM, bin, ...args], { env, cwd, stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let hwm = '';
  child.stderr?.on('data', (d: Buffer) => {
    if (stderr.length < 4000) stderr += d.toString();
  });
  (child.stdio[3] as NodeJS.ReadableStream).on('data', (d: Buffer) => {
    hwm += d.toString();
  });
  const [code] = (await once(child, 'close')) as [number | null];
  if (code !== 0) throw new Error(`${args.join(' ')} exited with ${code}: ${stderr.slice(0, 2000)}`);
  const kb = Number(hwm);
  if (hwm === '' || !Number.isFinite(kb)) throw new Error('peak RSS needs /proc (Linux)');
  return kb / 1024;
}

/** Median peak RSS (MB) of RUNS runs. */
async function peakMb(bin: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<number> {
  const peaks: number[] = [];
  for (let i = 0; i < RUNS; i++) peaks.push(await onePeakMb(bin, args, env, cwd));
  return median(peaks);
}

export async function measureStartup(): Promise<StartupMetric[]> {
  const build = await buildShipped('bench-startup-build');
  const image = { dir: build, bin: shippedBin(build) };
  const ws = await tinyWorkspace();
  const sim = await startSimulatorProcess({ token: TOKEN, maxPageSize: 1000 });
  try {
    const base = { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', SIM_URL: sim.url, BENCH_TOKEN: TOKEN };
    const imageEnv = { ...base, ...IMAGE_ENV }; // as the Dockerfile sets them
    const plan = ['plan', '--config', ws.configPath];
    // From source: src/main.ts run directly (what the launcher falls back to without dist/).
    const source = join(ROOT, 'src', 'main.ts');
    const built = {
      version: await peakMb(image.bin, ['--version'], imageEnv, ws.dir),
      plan: await peakMb(image.bin, plan, imageEnv, ws.dir),
    };
    const fromSource = {
      version: await peakMb(source, ['--version'], base, ws.dir),
      plan: await peakMb(source, plan, base, ws.dir),
    };
    process.stdout.write(
      `start-up peak RSS (median of ${RUNS}): --version ${built.version.toFixed(0)} MB compiled (image) / ${fromSource.version.toFixed(0)} MB from source; ` +
        `plan of 10 users + 2 groups ${built.plan.toFixed(0)} MB compiled / ${fromSource.plan.toFixed(0)} MB from source\n`,
    );
    const metric = (what: string, mb: number, src: number): StartupMetric => ({
      name: `start-up: ${what} — peak RSS of the compiled build as the image runs it (from source, not targeted: ${src.toFixed(0)} MB)`,
      value: `${mb.toFixed(0)} MB`,
      target: `≤ ${TARGET_MB} MB`,
      pass: mb <= TARGET_MB,
    });
    return [
      metric('`--version`', built.version, fromSource.version),
      metric('`plan` of a tiny directory (10 users, 2 groups, file source)', built.plan, fromSource.plan),
    ];
  } finally {
    await sim.stop();
    await rm(ws.dir, { recursive: true, force: true });
    await rm(image.dir, { recursive: true, force: true });
  }
}
