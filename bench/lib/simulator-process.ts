/**
 * Runs the platform simulator in a separate process, so its CPU and memory stay out of the
 * measured process: `scim-audit-sync simulate` when the CLI has the command, otherwise
 * (or when bench-only seeding or a request log is asked for) bench/lib/simulator-main.ts with the same flags.
 * Resolves once the process printed {"event":"listening","url"}.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const ROOT = join(import.meta.dirname, '..', '..');
export const BIN = join(ROOT, 'bin', 'scim-audit-sync.mjs');
const MAIN = join(import.meta.dirname, 'simulator-main.ts');

export interface SimulatorProcessOptions {
  token: string;
  maxPageSize: number;
  latencyMs?: number;
  /** Bench-only: seed from a file-source directory (JSON) and write the matching ledger. */
  seedDirectory?: string;
  ledgerOut?: string;
  /** Bench-only: append a summary line per SCIM request to this file (bench/lib/request-log.ts). */
  requestLog?: string;
}

export interface SimulatorProcess {
  url: string;
  pid: number;
  /** 'cli' (scim-audit-sync simulate) or 'bench' (bench/lib/simulator-main.ts). */
  via: 'cli' | 'bench';
  stop(): Promise<void>;
}

function flags(o: SimulatorProcessOptions): string[] {
  return [
    '--port',
    '0',
    '--token',
    o.token,
    '--max-page-size',
    String(o.maxPageSize),
    ...(o.latencyMs ? ['--latency-ms', String(o.latencyMs)] : []),
  ];
}

/** Waits for the listening line; undefined when the process exits first (e.g. unknown command). */
async function listening(child: ChildProcess, timeoutMs: number): Promise<string | undefined> {
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const exited = once(child, 'exit').then(() => undefined);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const url = (async () => {
    for await (const line of lines) {
      try {
        const msg = JSON.parse(line) as { event?: string; url?: string };
        if (msg.event === 'listening' && typeof msg.url === 'string') return msg.url;
      } catch {
        // not our line
      }
    }
    return undefined;
  })();
  try {
    return await Promise.race([url, exited]);
  } finally {
    clearTimeout(timer);
  }
}

async function launch(args: string[], via: 'cli' | 'bench', timeoutMs: number): Promise<SimulatorProcess | undefined> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    if (stderr.length < 4000) stderr += d.toString();
  });
  const url = await listening(child, timeoutMs);
  if (url === undefined) {
    if (via === 'bench') throw new Error(`simulator process did not start: ${stderr}`);
    return undefined;
  }
  return {
    url,
    pid: child.pid ?? -1,
    via,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await gone;
      clearTimeout(timer);
    },
  };
}

export async function startSimulatorProcess(o: SimulatorProcessOptions): Promise<SimulatorProcess> {
  if (o.seedDirectory === undefined && o.requestLog === undefined) {
    const cli = await launch([BIN, 'simulate', ...flags(o)], 'cli', 30_000);
    if (cli) return cli;
  }
  const seed = [
    ...(o.seedDirectory !== undefined ? ['--seed-directory', o.seedDirectory, ...(o.ledgerOut ? ['--ledger-out', o.ledgerOut] : [])] : []),
    ...(o.requestLog !== undefined ? ['--request-log', o.requestLog] : []),
  ];
  // Seeding a million users takes minutes on a loaded machine.
  const bench = await launch([MAIN, ...flags(o), ...seed], 'bench', 1_800_000);
  if (!bench) throw new Error('simulator process did not start');
  return bench;
}
