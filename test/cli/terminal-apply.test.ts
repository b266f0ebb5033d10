/**
 * On a terminal, `apply` shows the plan and asks before it writes (only `yes` goes on; `--yes`
 * skips the question), and `plan` shows what it is doing while it reads the source and lists the
 * platform. Neither happens when stdin/stderr are not a terminal. The terminal is a real
 * pseudo-terminal (util-linux `script`) around the real CLI; the platform is the simulator.
 */
import { spawn } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, runCli } from './run-cli.ts';
import { startScenario, type Scenario } from './support-directory.ts';

const TOKEN = 'terminal-apply-tok';
let s: Scenario;
beforeEach(async () => {
  s = await startScenario(TOKEN);
  await s.directory([
    { externalId: 'u-1', userName: 'ann@example.com' },
    { externalId: 'u-2', userName: 'bob@example.com' },
  ]);
});
afterEach(async () => {
  await s.close();
});

const PROMPT = "Only 'yes' is accepted: ";

/** Runs the CLI in a pseudo-terminal; `answer` is typed once the prompt shows. Output as the terminal received it. */
function inTerminal(args: string[], opts: { answer?: string; term?: string } = {}): Promise<{ code: number; out: string }> {
  const command = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', TERM: opts.term ?? 'dumb' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let answered = false;
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      if (!answered && opts.answer !== undefined && out.includes(PROMPT)) {
        answered = true;
        child.stdin.write(`${opts.answer}\n`);
      }
    });
    child.stdin.on('error', () => undefined);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, out: out.replace(/\r/g, '') });
    });
  });
}

const userNames = () =>
  s.sim.store
    .users()
    .map((u) => u.userName)
    .sort();

describe('apply on a terminal', () => {
  it('shows the plan and asks; "yes" applies it', async () => {
    const r = await inTerminal(['apply', '-c', s.configPath], { answer: 'yes' });
    expect(r.out).toContain('Users to create (2)');
    expect(r.out).toMatch(/Apply these 2 changes to tenant default at http:\/\/127\.0\.0\.1:\d+\/api\/scim\/v2\? Only 'yes' is accepted: /);
    expect(r.out.indexOf('Users to create')).toBeLessThan(r.out.indexOf(PROMPT));
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('succeeded: user.create 2');
    expect(userNames()).toEqual(['ann@example.com', 'bob@example.com']);
  });

  it('any other answer declines: nothing is changed, exit 1', async () => {
    const r = await inTerminal(['apply', '-c', s.configPath], { answer: 'no' });
    expect(r.out).toContain(PROMPT);
    expect(r.out).toContain('Apply cancelled: nothing was changed.');
    expect(r.code).toBe(1);
    expect(userNames()).toEqual([]);
  });

  it('--yes applies without asking; so does apply with stdin not a terminal', async () => {
    const r = await inTerminal(['apply', '-c', s.configPath, '--yes']);
    expect(r.code, r.out).toBe(0);
    expect(r.out).not.toContain(PROMPT);
    expect(userNames()).toEqual(['ann@example.com', 'bob@example.com']);
    await s.directory([
      { externalId: 'u-1', userName: 'ann@example.com' },
      { externalId: 'u-3', userName: 'cid@example.com' },
    ]);
    const piped = await runCli(['apply', '-c', s.configPath, '--allow-deletes']);
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout + piped.stderr).not.toContain(PROMPT);
    expect(userNames()).toEqual(['ann@example.com', 'bob@example.com', 'cid@example.com']);
  });

  it('apply --json on a terminal without --yes is refused before anything is read (exit 2)', async () => {
    const r = await inTerminal(['apply', '-c', s.configPath, '--json']);
    expect(r.code).toBe(2);
    expect(r.out).toContain('apply --json on a terminal needs --yes');
    expect(userNames()).toEqual([]);
  });
});

describe('plan on a terminal', () => {
  it('shows what it reads while it reads it, then erases the line; in a pipe, nothing extra', async () => {
    const r = await inTerminal(['plan', '-c', s.configPath], { term: 'xterm' });
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('\u001b[2Kreading the source file:directory.json…');
    expect(r.out).toMatch(/\u001b\[2Klisting the platform: \d+ users, \d+ groups…/);
    expect(r.out).toMatch(/\u001b\[2K\n?Plan for tenant default/);
    const piped = await runCli(['plan', '-c', s.configPath]);
    expect(piped.code).toBe(0);
    expect(piped.stderr).not.toContain('reading the source');
    expect(piped.stderr).not.toContain('\u001b[2K');
  });
});
