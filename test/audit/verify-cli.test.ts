/** `scim-audit-sync audit verify` as a user runs it: the real CLI in a child process against the simulator. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.ts';
import type { VerifyReport } from '../../src/audit/verify/run-verify.ts';
import { runCli } from '../cli/run-cli.ts';

const TOKEN = 'cli-verify-token';
const HOUR = 3_600_000;
// Three whole windows settled (ending by now − overlap) whatever the minute the test runs at.
const startMs = Math.floor((Date.now() - 15 * 60_000) / HOUR) * HOUR - 3 * HOUR;
const start = new Date(startMs).toISOString();
let sim: Simulator;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'audit-verify-cli-'));
  sim = await startSimulator({ tokens: [{ token: TOKEN }], audit: { startAt: start, eventsPerHour: 400, idColumn: true } });
});
afterAll(async () => {
  await sim?.close();
  await rm(dir, { recursive: true, force: true });
});

async function configIn(name: string): Promise<string> {
  const path = join(dir, `${name}.yaml`);
  await writeFile(
    path,
    [
      `tenant: ${name}`,
      'platform:',
      '  baseUrl: ${SIM_URL}',
      '  token: ${SIM_TOKEN}',
      '  allowInsecureHttp: true',
      'state:',
      `  dir: ./state-${name}`,
      'audit:',
      '  settleSeconds: 0',
      `  backfill: { from: "${start}" }`,
      '  sinks:',
      '    - type: file',
      '      name: siem',
      `      path: ./out-${name}/audit.ndjson`,
      '',
    ].join('\n'),
  );
  return path;
}

const env = (): Record<string, string> => ({ SIM_URL: sim.url, SIM_TOKEN: TOKEN });

describe('audit verify CLI', () => {
  it('exits 0 when every settled window matches what the export delivered', async () => {
    const config = await configIn('complete');
    expect((await runCli(['audit', 'export', '--config', config, '--json'], env())).code).toBe(0);
    const r = await runCli(['audit', 'verify', '--config', config, '--from', start], env());
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/audit verify: 3 windows match/);
  });

  it('exits 5 and names the missing events when the platform lost some from the first export', async () => {
    const config = await configIn('gap');
    const lostFrom = startMs + HOUR + 10 * 60_000;
    const lostTo = lostFrom + 10 * 60_000;
    const lost = [...sim.audit.eventsIn(new Date(lostFrom).toISOString(), new Date(lostTo).toISOString())].map((e) => e.id);
    sim.setFaults([
      {
        kind: 'drop-events',
        pathPrefix: '/api/v1/audit-logs/export',
        dropFrom: new Date(lostFrom).toISOString(),
        dropTo: new Date(lostTo).toISOString(),
        times: 1,
      },
    ]);
    expect((await runCli(['audit', 'export', '--config', config, '--json'], env())).code).toBe(0);
    sim.setFaults([]);
    const text = await runCli(['audit', 'verify', '--config', config, '--from', start], env());
    expect(text.code).toBe(5);
    expect(text.stdout).toContain(`1 of 3 windows differ (missing ${lost.length}, unexpected 0)`);
    expect(text.stdout).toContain(`missing    ${new Date(lostFrom).toISOString().slice(0, 13)}`);
    const json = await runCli(['audit', 'verify', '--config', config, '--from', start, '--json'], env());
    expect(json.code).toBe(5);
    const report = JSON.parse(json.stdout) as VerifyReport;
    expect(report.windows.map((w) => w.startMs)).toEqual([startMs + HOUR]);
    expect(report.windows[0]?.sinks?.[0]?.missing.map((e) => e.key).sort()).toEqual(lost.sort());
  });
});
