/**
 * A real syslog daemon (rsyslog, syslog-ng) run by a test: its own temp directory, config,
 * free ports on 127.0.0.1, output file. It can be stopped (SIGTERM: a graceful shutdown that
 * flushes its queues, or SIGKILL) and started again on the same ports, the output file kept,
 * so a test can count what arrived across both runs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { canConnect } from '../slapd.ts';

export interface RealReceiverSpec {
  name: string;
  bin: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** Ports that must accept connections before the receiver counts as started. */
  ports: number[];
  output: string;
}

export class RealReceiver {
  readonly spec: RealReceiverSpec;
  private child: ChildProcess | undefined;
  /** The first 8,000 characters the daemon printed: start-up errors come first. */
  private stderr = '';

  constructor(spec: RealReceiverSpec) {
    this.spec = spec;
  }

  async start(): Promise<void> {
    this.stderr = '';
    const child = spawn(this.spec.bin, this.spec.args, { env: { ...process.env, ...this.spec.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    child.on('error', () => undefined);
    child.stdout?.on('data', (c: Buffer) => (this.stderr = (this.stderr + c.toString()).slice(0, 8000)));
    child.stderr?.on('data', (c: Buffer) => (this.stderr = (this.stderr + c.toString()).slice(0, 8000)));
    const deadline = Date.now() + 15_000;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`${this.spec.name} exited during start-up (${child.exitCode ?? child.signalCode}): ${this.stderr}`);
      }
      const up = await Promise.all(this.spec.ports.map((p) => canConnect(p)));
      if (up.every(Boolean)) return;
      if (Date.now() > deadline) {
        const log = this.stderr;
        await this.stop('SIGKILL');
        throw new Error(`${this.spec.name} did not listen on ${this.spec.ports.join(', ')} within 15 s: ${log}`);
      }
      await sleep(50);
    }
  }

  /** Stops the daemon and waits for it to exit (SIGKILL after 10 s). */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(t);
  }

  async restart(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    await this.stop(signal);
    await this.start();
  }

  /** What the daemon wrote so far, one message per line. */
  lines(): string[] {
    if (!existsSync(this.spec.output)) return [];
    return readFileSync(this.spec.output, 'utf8')
      .split('\n')
      .filter((l) => l !== '');
  }

  /** The event keys of the lines (the sink's structured-data `key`). */
  keys(): string[] {
    return this.lines().flatMap((l) => {
      const m = /key="([^"]*)"/.exec(l);
      return m ? [m[1] as string] : [];
    });
  }

  /** Waits until the output holds `n` distinct keys, or the timeout. */
  async waitForKeys(n: number, timeoutMs = 10_000): Promise<Set<string>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const keys = new Set(this.keys());
      if (keys.size >= n || Date.now() > deadline) return keys;
      await sleep(50);
    }
  }

  /** Waits until the output holds `n` lines, or the timeout; returns them. */
  async waitForLines(n: number, timeoutMs = 10_000): Promise<string[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const lines = this.lines();
      if (lines.length >= n || Date.now() > deadline) return lines;
      await sleep(50);
    }
  }

  get log(): string {
    return this.stderr;
  }
}

/** Fails the test with the install hint when a daemon binary is missing. */
export function requireBinary(path: string, hint: string): void {
  if (!existsSync(path)) throw new Error(`${path} not found: ${hint}`);
}
