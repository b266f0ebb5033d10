/**
 * `audit export` as a user runs it, against answers that are not an export: the CLI fails with
 * exit 1 and the stable code (no crash, no "cursor (none) -> …"), and nothing reaches the sink.
 * (The cursor itself is checked by the engine's tests, test/audit/hostile-export.test.ts.)
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run-cli.ts';
import { answer, head, startHostileServer, type HostileServer, type Responder } from '../helpers/hostile-http.ts';

const TOKEN = 'cli-hostile-token-51c0a9e7';
let dir: string;
let server: HostileServer | undefined;
const start = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - 2 * 3_600_000).toISOString();

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'audit-cli-hostile-'));
  await writeFile(
    join(dir, 'config.yaml'),
    [
      'tenant: hostile',
      'platform:',
      '  baseUrl: ${SIM_URL}',
      '  token: ${SIM_TOKEN}',
      '  allowInsecureHttp: true',
      '  retry: { maxAttempts: 1 }',
      'state:',
      '  dir: ./state',
      'audit:',
      '  settleSeconds: 0',
      `  backfill: { from: "${start}" }`,
      '  retry: { windowAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 }',
      '  sinks:',
      '    - { type: file, name: siem, path: ./out/audit.ndjson }',
      '',
    ].join('\n'),
  );
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function exportAgainst(respond: Responder): Promise<{ code: number; stdout: string; stderr: string }> {
  server = await startHostileServer(respond);
  return runCli(['audit', 'export', '--config', join(dir, 'config.yaml')], { SIM_URL: server.url, SIM_TOKEN: TOKEN }, dir);
}

describe('audit export CLI against answers that are not an export', () => {
  const cases: Array<[string, Responder, string]> = [
    ['a proxy login page', answer.full(200, { 'content-type': 'text/html' }, '<html>Please log in</html>'), 'E_EXPORT_NOT_CSV'],
    ['a 302 with no body', (io) => io.end(head(302, { location: 'https://sso.example.net/', 'content-length': 0 })), 'E_EXPORT_REDIRECT'],
    ['a 204', (io) => io.end(head(204)), 'E_EXPORT_EMPTY'],
    ['an empty text/csv body', answer.full(200, { 'content-type': 'text/csv' }, ''), 'E_EXPORT_EMPTY'],
  ];
  for (const [what, respond, code] of cases) {
    it(`${what}: exit 1 with [${code}], nothing delivered`, async () => {
      const r = await exportAgainst(respond);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`[${code}]`);
      expect(r.stderr).not.toMatch(/Unhandled|UND_ERR_ABORTED|node:events/);
      expect(r.stderr + r.stdout).not.toContain(TOKEN);
      expect(r.stderr + r.stdout).not.toMatch(/cursor \(none\) ->/);
      const sink = join(dir, 'out', 'audit.ndjson');
      expect(existsSync(sink) ? await readFile(sink, 'utf8') : '').toBe('');
    });
  }
});
