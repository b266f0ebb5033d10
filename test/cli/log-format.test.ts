/**
 * On a terminal, plan/apply/audit output is not interleaved with JSON log lines: readable
 * lines, warnings and errors only; JSON when stderr is not a terminal and with --log-format json.
 * The terminal case runs the real CLI under a pseudo-terminal (util-linux `script`).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logSettings } from '../../src/cli/options.ts';
import { startSimulator, type Simulator } from '../../src/simulator/index.ts';
import { BIN, runCli } from './run-cli.ts';

const TOKEN = 'log-format-tok';
let sim: Simulator;
let dir: string;
let configPath: string;

beforeAll(async () => {
  sim = await startSimulator({ tokens: [{ token: TOKEN }] });
  // Someone else's account with the same userName: the plan skips it as unmanaged and warns.
  sim.store.createUser({ userName: 'ann@example.com', name: { givenName: 'A', familyName: 'B' }, active: true });
  dir = await mkdtemp(join(tmpdir(), 'log-format-'));
  await writeFile(join(dir, 'directory.yaml'), 'users:\n  - { externalId: u-1, userName: ann@example.com }\ngroups: []\n');
  configPath = join(dir, 'config.yaml');
  await writeFile(
    configPath,
    [
      'platform:',
      `  baseUrl: ${sim.url}`,
      `  token: ${TOKEN}`,
      '  allowInsecureHttp: true',
      'state: { dir: ./state }',
      'provisioning:',
      '  source: { type: file, path: directory.yaml }',
      '',
    ].join('\n'),
  );
});
afterAll(async () => {
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

function inTerminal(args: string[]): Promise<string> {
  const command = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  return new Promise((resolve, reject) => {
    execFile(
      'script',
      ['-qec', command, '/dev/null'],
      { env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', TERM: 'dumb' }, timeout: 20_000 },
      (error, stdout) => {
        if (error && typeof error.code !== 'number') reject(error);
        else resolve(stdout.replace(/\r/g, ''));
      },
    );
  });
}

describe('log format', () => {
  it('auto: readable and warn-level on a terminal, JSON at the configured level elsewhere; flags win', () => {
    expect(logSettings({ debug: false, logFormat: 'auto' }, 'info', { isTTY: true })).toEqual({ level: 'warn', pretty: true });
    expect(logSettings({ debug: false, logFormat: 'auto' }, 'info', { isTTY: false })).toEqual({ level: 'info', pretty: false });
    expect(logSettings({ debug: false, logFormat: 'json' }, 'info', { isTTY: true })).toEqual({ level: 'info', pretty: false });
    expect(logSettings({ debug: false, logFormat: 'auto', logLevel: 'info' }, 'info', { isTTY: true })).toEqual({
      level: 'info',
      pretty: true,
    });
    expect(logSettings({ debug: true, logFormat: 'auto' }, 'info', { isTTY: true })).toEqual({ level: 'debug', pretty: true });
    expect(logSettings({ debug: false, logFormat: 'auto' }, 'error', { isTTY: true })).toEqual({ level: 'error', pretty: true });
  });

  it('plan in a terminal: the table and one readable warning, no JSON line', async () => {
    const out = await inTerminal(['plan', '-c', configPath]);
    expect(out).toContain('Plan for tenant default');
    expect(out).toMatch(/^\d\d:\d\d:\d\d WARN {2}1 source objects \(1 users, 0 groups\) match platform objects this tool does not manage/m);
    expect(out).not.toContain('{"level"');
    expect(out).not.toContain('plan computed');
  });

  it('plan in a terminal with --log-format json, and plan in a pipe: JSON lines', async () => {
    const forced = await inTerminal(['--log-format', 'json', 'plan', '-c', configPath]);
    expect(forced).toMatch(/^\{"level":40,.*does not manage/m);
    const piped = await runCli(['plan', '-c', configPath]);
    expect(piped.code).toBe(0);
    const lines = piped.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['plan computed']));
    expect(lines.some((l) => l.level === 40 && l.msg.includes('does not manage'))).toBe(true);
  });
});
