/**
 * What a new operator meets in the first week: the checkout's own npm does not warn about the
 * engine on every command, and an offline `validate` refuses a source file that is not there.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './run-cli.ts';

const REPO = join(import.meta.dirname, '../..');

function npx(args: string[], path: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'npm',
      ['exec', '--no', '--', ...args],
      { cwd: REPO, env: { PATH: path, HOME: tmpdir() }, timeout: 60_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
      },
    );
  });
}

describe('the first week', () => {
  it('npx scim-audit-sync prints no EBADENGINE warning, on the machine Node that runs npm', async () => {
    // The machine's own Node (Debian's or a distribution's, often older than the project's)
    // runs npm; the launcher then runs on the project's Node from node_modules/.bin.
    const machineNode = existsSync('/usr/bin/node') ? '/usr/bin' : dirname(process.execPath);
    const r = await npx(['scim-audit-sync', '--version'], `${machineNode}:/usr/bin:/bin`);
    expect(r.stderr).not.toMatch(/EBADENGINE/);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(r.code).toBe(0);
  });

  it('an offline validate refuses a source file that does not exist, naming the key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'first-week-'));
    const config = join(dir, 'config.yaml');
    writeFileSync(
      config,
      'platform: { baseUrl: https://acme.example.com, token: x }\nprovisioning:\n  source: { type: file, path: people.yaml }\n',
    );
    const missing = await runCli(['validate', '--config', config]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`provisioning.source.path: ${join(dir, 'people.yaml')} does not exist`);
    writeFileSync(join(dir, 'people.yaml'), 'users: []\ngroups: []\n');
    const present = await runCli(['validate', '--config', config]);
    expect(present.code).toBe(0);
  });
});
