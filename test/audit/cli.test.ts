/** `scim-audit-sync audit export|status|replay` as a user runs them: the real CLI in a child process against the simulator. */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.ts';
import { runCli } from '../cli/run-cli.ts';
import { loadConfig } from '../../src/config/load.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { runAuditFromConfig } from '../../src/audit/run-from-config.ts';

const TOKEN = 'cli-audit-token';
let sim: Simulator;
let dir: string;
let configPath: string;
const start = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3 * 3_600_000).toISOString();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'audit-cli-'));
  sim = await startSimulator({ tokens: [{ token: TOKEN }], audit: { startAt: start, eventsPerHour: 400, idColumn: true } });
  configPath = join(dir, 'config.yaml');
  await writeFile(
    configPath,
    [
      'tenant: clitest',
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
      '    - type: file',
      '      name: siem',
      '      path: ./out/audit.ndjson',
      '',
    ].join('\n'),
  );
});
afterAll(async () => {
  await sim?.close();
  await rm(dir, { recursive: true, force: true });
});

const env = (): Record<string, string> => ({ SIM_URL: sim.url, SIM_TOKEN: TOKEN });

describe('audit CLI', () => {
  it('export --json runs a backfill, status shows the cursor, a second export adds nothing', async () => {
    const r = await runCli(['audit', 'export', '--config', configPath, '--json'], env());
    expect(r.stderr).not.toMatch(/"level":(50|60)/);
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout) as { delivered: Record<string, number>; cursorMs: number; windowsDone: number };
    expect(summary.windowsDone).toBeGreaterThanOrEqual(3);
    const expected = [...sim.audit.eventsIn(start, new Date(summary.cursorMs).toISOString())].map((e) => e.id).sort();
    const lines = (await readFile(join(dir, 'out', 'audit.ndjson'), 'utf8')).split('\n').filter(Boolean);
    expect(lines.map((l) => (JSON.parse(l) as { _key: string })._key).sort()).toEqual(expected);
    expect(summary.delivered['siem']).toBe(expected.length);

    const st = await runCli(['audit', 'status', '--config', configPath, '--json'], env());
    expect(st.code).toBe(0);
    expect(JSON.parse(st.stdout)).toMatchObject({ tenant: 'clitest', cursorMs: summary.cursorMs, deadLetters: {}, backfill: null });

    const again = await runCli(['audit', 'export', '--config', configPath], env());
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('audit export finished');
    expect(again.stdout).toMatch(/duplicates skipped\s+\d+/);
    const after = (await readFile(join(dir, 'out', 'audit.ndjson'), 'utf8')).split('\n').filter(Boolean);
    const keys = after.map((l) => (JSON.parse(l) as { _key: string })._key);
    expect(new Set(keys).size).toBe(keys.length);

    const text = await runCli(['audit', 'status', '--config', configPath], env());
    expect(text.stdout).toMatch(/cursor\s+\d{4}-\d{2}-\d{2}T/);
  });

  it('exits 2 with the stable code when the audit-log feature is disabled', async () => {
    sim.audit.setFeatureEnabled(false);
    try {
      const r = await runCli(['audit', 'export', '--config', configPath], env());
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('[E_FEATURE_DISABLED]');
      expect(r.stderr).not.toContain(TOKEN);
    } finally {
      sim.audit.setFeatureEnabled(true);
    }
  });

  it('rejects bad --from values and unknown replay sinks with exit 2', async () => {
    const bad = await runCli(['audit', 'export', '--config', configPath, '--from', 'yesterday'], env());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--from must be an ISO 8601 date');
    const replay = await runCli(['audit', 'replay', '--config', configPath, '--sink', 'nope'], env());
    expect(replay.code).toBe(2);
    expect(replay.stderr).toContain('no sink named "nope"');
  });

  it('runAuditFromConfig (used by the demo) runs from a config file and says where the file sink writes', async () => {
    const loaded = await loadConfig(configPath, { ...process.env, ...env() });
    const { summary, outputs } = await runAuditFromConfig(loaded, createLogger({ level: 'silent' }));
    expect(outputs).toEqual([{ sink: 'siem', type: 'file', path: join(dir, 'out', 'audit.ndjson') }]);
    expect(summary.cursorMs).not.toBeNull();
    expect(summary.windowsDone).toBeGreaterThanOrEqual(1);
  });
  it('with a stdout sink, stdout carries only the NDJSON events and the report goes to stderr', async () => {
    const cfg = join(dir, 'config-stdout.yaml');
    const text = (await readFile(configPath, 'utf8'))
      .replace('tenant: clitest', 'tenant: clistdout')
      .replace('  sinks:\n', '  sinks:\n    - type: stdout\n      name: console\n');
    await writeFile(cfg, text);
    const r = await runCli(['audit', 'export', '--config', cfg], env());
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(100);
    for (const l of lines) expect((JSON.parse(l) as { event?: { id?: string } }).event?.id).toBeTruthy();
    expect(r.stderr).toMatch(/audit export finished/);
    expect(r.stderr).toMatch(new RegExp(`console=${lines.length}\\b`));
  });
});

describe('audit export of an export without ids, run twice', () => {
  it('writes every event once under its hashed key, counts windows and events as it goes, and a re-run adds nothing', async () => {
    const hashed = await startSimulator({
      tokens: [{ token: TOKEN }],
      audit: { startAt: start, eventsPerHour: 600, multilineDetailsRate: 0.2 },
    });
    try {
      const cfg = join(dir, 'config-hashed.yaml');
      await writeFile(
        cfg,
        (await readFile(configPath, 'utf8'))
          .replace('tenant: clitest', 'tenant: cli-hashed')
          .replace('./out/audit.ndjson', './out-hashed/audit.ndjson'),
      );
      const to = new Date(Date.parse(start) + 3 * 3_600_000).toISOString();
      const expected = [...hashed.audit.eventsIn(start, to)].length;
      const first = await runCli(['audit', 'export', '--config', cfg, '--to', to], { SIM_URL: hashed.url, SIM_TOKEN: TOKEN });
      expect(first.code, first.stderr).toBe(0);
      // Not a TTY: plain progress lines, in windows and events (never "x/1000").
      expect(first.stderr).toContain(`audit export: 3/3 windows done, ${expected.toLocaleString('en')} events read (100%)`);
      expect(first.stderr).not.toMatch(/\/1000/);
      const text = await readFile(join(dir, 'out-hashed', 'audit.ndjson'), 'utf8');
      const keys = text
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { _key: string })._key);
      expect(keys.length).toBe(expected);
      expect(new Set(keys).size).toBe(expected);
      expect(keys.every((k) => /^[0-9a-f]{64}(#\d+)?$/.test(k))).toBe(true);
      const again = await runCli(['audit', 'export', '--config', cfg, '--from', start, '--to', to, '--json'], {
        SIM_URL: hashed.url,
        SIM_TOKEN: TOKEN,
      });
      expect(again.code, again.stderr).toBe(0);
      expect(await readFile(join(dir, 'out-hashed', 'audit.ndjson'), 'utf8')).toBe(text);
    } finally {
      await hashed.close();
    }
  });
});
