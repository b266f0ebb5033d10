/**
 * The README's test command is the one that prepares the machine: `npm test` runs
 * scripts/test-env.sh before vitest, .ci/run calls `npm test`, and the script stops with one
 * line saying what to run when it cannot install a missing piece itself.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_DIR } from './support/chart-files.ts';

const readme = readFileSync(join(REPO_DIR, 'README.md'), 'utf8');
const pkg = JSON.parse(readFileSync(join(REPO_DIR, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
const ciRun = readFileSync(join(REPO_DIR, '.ci/run'), 'utf8');
const script = join(REPO_DIR, 'scripts/test-env.sh');

describe('the README test command', () => {
  it('is npm test, which prepares the machine before vitest runs', () => {
    const quickStart = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('## Using it'));
    expect(quickStart).toMatch(/^npm test\b/m);
    expect(pkg.scripts.test).toBe('bash scripts/test-env.sh && vitest run');
  });

  it('is what .ci/run calls, and .ci/run installs no service of its own', () => {
    expect(ciRun).toMatch(/^npm test -- /m);
    expect(ciRun).not.toMatch(/apt_install (redis|slapd|chromium|rsyslog)/);
  });

  it('names every package scripts/test-env.sh installs in the README', () => {
    const text = readFileSync(script, 'utf8');
    const installed = [...text.matchAll(/missing\+=\(([\w.-]+)\)/g)].map((m) => m[1] as string);
    expect(installed.length).toBeGreaterThan(5);
    for (const name of [...installed, 'syslog-ng-core']) expect(readme, name).toContain(`\`${name}\``);
  });

  it('leaves a ready machine as it is (exit 0)', () => {
    const run = spawnSync('bash', [script], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it('stops with one line naming the fix when it may not install what is missing', () => {
    const empty = mkdtempSync(join(tmpdir(), 'no-syslog-ng-'));
    const run = spawnSync('bash', [script], {
      encoding: 'utf8',
      env: { ...process.env, SYSLOG_NG_ROOT: empty, TEST_ENV_NO_INSTALL: '1' },
    });
    expect(run.status).toBe(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\[test-env\] missing: syslog-ng in .*Run as root: bash scripts\/test-env\.sh$/);
  });
});
