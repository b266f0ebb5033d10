/**
 * The launcher's V8 settings (bin/scim-audit-sync.mjs): V8's young generation stays at its
 * initial size through a command's start-up and grows once the process has bulk work. Real
 * child processes of the launcher in the image's NODE_OPTIONS (8 MB semi-spaces); an `--import`
 * module (loaded before the launcher runs) allocates like a start-up or like bulk work once the
 * launcher's settings are in place, and reports the young generation's size at exit (fd 3). What this
 * saves in peak RSS is measured by bench/lib/startup.ts, not here.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { BIN } from './run-cli.ts';

/** Allocates `mb` MB in objects, `keep` of every 10 kept alive (start-up keeps most of what it loads), then prints new space. */
const allocating = (mb: number, keep: number): string =>
  `data:text/javascript,${encodeURIComponent(`
import v8 from 'node:v8';
import { writeSync } from 'node:fs';
const kept = [];
let n = 0;
function chunk() {
  for (let i = 0; i < 10_000; i++) { const o = { i, s: 'x'.repeat(10) + i, a: [i, i, i] }; if (i % 10 < ${keep}) kept.push(o); }
  n += 10_000 * 100;
  if (kept.length > 200_000) kept.length = 0;
  if (n < ${mb} * 1_048_576) setImmediate(chunk);
}
setTimeout(chunk, 500); // once the launcher has set its flags (its first statements, within milliseconds)
process.on('exit', () => {
  const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
  writeSync(3, String(space.space_size));
});
`)}`;

async function newSpaceMb(mb: number, keep: number, args: string[] = ['--version']): Promise<number> {
  const child = spawn(process.execPath, ['--import', allocating(mb, keep), BIN, ...args], {
    env: { PATH: process.env['PATH'] ?? '', NODE_OPTIONS: '--max-semi-space-size=8' },
    stdio: ['ignore', 'ignore', 'inherit', 'pipe'], // fd 3: the size
  });
  const out: Buffer[] = [];
  (child.stdio[3] as NodeJS.ReadableStream).on('data', (d: Buffer) => out.push(d));
  const [code] = (await once(child, 'close')) as [number | null];
  expect(code).toBe(0);
  return Number(Buffer.concat(out).toString()) / 2 ** 20;
}

describe('launcher: V8 young generation', () => {
  it('stays at its initial 1 MB semi-spaces while a process allocates like a start-up (12 MB, nearly all of it kept: ~45 scavenges)', async () => {
    expect(await newSpaceMb(12, 9)).toBeLessThanOrEqual(2);
  });

  it('grows once the process has bulk work (400 MB allocated): towards the 8 MB semi-spaces NODE_OPTIONS allows', async () => {
    expect(await newSpaceMb(400, 3)).toBeGreaterThanOrEqual(8);
  });

  it('is not held for the commands that stream bulk data from their start (daemon, audit): the same start-up grows it', async () => {
    expect(await newSpaceMb(12, 9, ['audit', '--help'])).toBeGreaterThanOrEqual(8);
    expect(await newSpaceMb(12, 9, ['--log-level', 'warn', 'daemon', '--help'])).toBeGreaterThanOrEqual(8);
    // …whereas a command named later on the line is an argument: `trigger audit` is held.
    expect(await newSpaceMb(12, 9, ['trigger', 'audit', '--help'])).toBeLessThanOrEqual(2);
  });
});
