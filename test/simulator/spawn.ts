/** Runs the simulator CLI in a child process and waits for its one "listening" line. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ENTRY = fileURLToPath(new URL('../../src/cli/simulator-entry.ts', import.meta.url));

export interface SpawnedSimulator {
  child: ChildProcess;
  url: string;
  stderr: () => string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

export async function spawnSimulator(args: string[]): Promise<SpawnedSimulator> {
  const child = spawn(process.execPath, [ENTRY, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const lines = createInterface({ input: child.stdout! });
  const first = await Promise.race([
    new Promise<string>((resolve) => lines.once('line', resolve)),
    exited.then((code) => {
      throw new Error(`simulator exited (${code}) before listening: ${err}`);
    }),
  ]);
  const msg = JSON.parse(first) as { event: string; url: string };
  return {
    child,
    url: msg.url,
    stderr: () => err,
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}
