/**
 * Exit codes tell the truth: `--only` naming nobody is an error (exit 2), rejected entries are
 * named in the headline and `--fail-on-rejected` gives them their own exit code (4), and the
 * README's exit-code table is the one in src/cli/exit-codes.ts. Real CLI, simulator over a socket.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EXIT_CODES, ExitCode, exitCodeTable } from '../../src/cli/exit-codes.ts';
import { runCli } from './run-cli.ts';
import { startScenario, type Scenario } from './support-directory.ts';

const TOKEN = 'exit-truth-tok';
let s: Scenario;
beforeEach(async () => {
  s = await startScenario(TOKEN);
});
afterEach(async () => {
  await s.close();
});

const ANN = { externalId: 'u-1', userName: 'ann@example.com' };
/** Four entries the file source rejects (no userName, a broken e-mail, a duplicate userName, an unknown key). */
const REJECTED = [
  { externalId: 'u-7' },
  { externalId: 'u-8', userName: 'x@example.com', emails: ['not an address'] },
  { externalId: 'u-9', userName: 'ann@example.com' },
  { externalId: 'u-10', userName: 'y@example.com', shoeSize: 44 },
];

describe('--only that matches nobody', () => {
  it('apply --only nobody@example.com exits 2 and says no user has that name; nothing is written', async () => {
    await s.directory([ANN]);
    const r = await runCli(['apply', '-c', s.configPath, '--only', 'nobody@example.com']);
    expect(r.code).toBe(ExitCode.CONFIG);
    expect(r.stderr).toContain('--only nobody@example.com matches no user');
    expect(r.stderr).toContain(
      'no user in the source (kept or rejected) or on the platform has the userName or externalId "nobody@example.com"',
    );
    expect(s.sim.store.users()).toEqual([]);
    const plan = await runCli(['plan', '-c', s.configPath, '--only', 'nobody@example.com', '--json']);
    expect(plan.code).toBe(ExitCode.CONFIG);
    expect(plan.stdout).toBe('');
  });

  it('--only naming a user who is in sync exits 0 and says there is nothing to do', async () => {
    await s.directory([ANN]);
    expect((await runCli(['apply', '-c', s.configPath])).code).toBe(0);
    const r = await runCli(['apply', '-c', s.configPath, '--only', ANN.userName]);
    expect(r.code, r.stderr).toBe(ExitCode.OK);
    expect(r.stderr).toContain(`--only ${ANN.userName}: this user is in sync; nothing to do`);
  });
});

describe('rejected entries', () => {
  it('a plan with 4 rejected entries says so in its headline instead of "No changes. The platform matches the source."', async () => {
    await s.directory([ANN, ...REJECTED]);
    expect((await runCli(['apply', '-c', s.configPath])).code).toBe(0);
    const plan = await runCli(['plan', '-c', s.configPath]);
    expect(plan.code, plan.stderr).toBe(ExitCode.OK);
    expect(plan.stdout).not.toContain('No changes. The platform matches the source.');
    expect(plan.stdout).toContain(
      'No changes, but 4 entries rejected by the source (listed below): the platform matches the rest of the source.',
    );
    expect(plan.stdout).toContain('Rejected by the source (4)');
  });

  it('--fail-on-rejected: plan and apply exit 4 after doing the rest; the apply summary names the rejected entries', async () => {
    await s.directory([ANN, ...REJECTED]);
    const plan = await runCli(['plan', '-c', s.configPath, '--fail-on-rejected']);
    expect(plan.code).toBe(ExitCode.REJECTED);
    expect(plan.stdout).toContain('4 entries rejected by the source (listed below): left out, the rest is planned.');
    const apply = await runCli(['apply', '-c', s.configPath, '--fail-on-rejected']);
    expect(apply.code, apply.stderr).toBe(ExitCode.REJECTED);
    expect(apply.stdout).toContain(
      '4 entries rejected by the source (listed in the plan above): not applied; the platform matches the rest',
    );
    expect(s.sim.store.users().map((u) => u.userName)).toEqual([ANN.userName]);
    // Without the flag the same apply is a success.
    expect((await runCli(['apply', '-c', s.configPath])).code).toBe(ExitCode.OK);
  });
});

describe('the exit-code table', () => {
  it('the README shows exactly the table of src/cli/exit-codes.ts, one row per code', async () => {
    const readme = await readFile(join(import.meta.dirname, '../../README.md'), 'utf8');
    expect(readme).toContain(`## Exit codes\n\n${exitCodeTable()}\n`);
    expect(EXIT_CODES.map((e) => e.code)).toEqual(Object.values(ExitCode));
  });
});
