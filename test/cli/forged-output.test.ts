/**
 * A source value cannot fake the output an operator reads: a name holding terminal escape
 * sequences, a CR/LF or a bidi override is shown escaped in the plan table, the apply summary,
 * `log` and error messages, while `--json` keeps it exactly. Real CLI, simulator over a socket.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from './run-cli.ts';
import { startScenario, type Scenario } from './support-directory.ts';

const TOKEN = 'forged-output-tok';
let s: Scenario;
beforeEach(async () => {
  s = await startScenario(TOKEN);
});
afterEach(async () => {
  await s.close();
});

const TITLE_AND_CLEAR = 'Eve\u001b]0;pwned\u0007\u001b[2J';
const FAKE_LINE = 'Mallory\r\nDELETION GUARD: none';
const BIDI = 'Trudy \u202egpj.exe\u2066x\u2069\u200f';
const NEL = 'Oscar\u0085\u2028\u2029\u007f\u009b31m';

/** Any character a terminal would act on, or that reorders text. */
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;

function expectNoRawControls(text: string): void {
  const hit = RAW.exec(text);
  expect(
    hit,
    hit
      ? `raw U+${hit[0].charCodeAt(0).toString(16).padStart(4, '0')} near ${JSON.stringify(text.slice(Math.max(0, hit.index - 30), hit.index + 30))}`
      : '',
  ).toBeNull();
}

describe('a name holding control characters in the plan', () => {
  it('source entries holding them are rejected, and the plan shows them and a platform value holding them escaped; --json keeps it exact', async () => {
    // A value the platform holds (an admin's edit) reaches the plan as the before-value.
    await s.directory([{ externalId: 'u-9', userName: 'pat@example.com', displayName: 'Pat' }]);
    expect((await runCli(['apply', '-c', s.configPath])).code).toBe(0);
    const pat = s.sim.store.getUserByUserName('pat@example.com')!;
    s.sim.store.updateUser(pat.id, { displayName: TITLE_AND_CLEAR });
    await s.directory(
      [
        { externalId: 'u-9', userName: 'pat@example.com', displayName: 'Pat' },
        { externalId: 'u-1', userName: 'eve@example.com', displayName: TITLE_AND_CLEAR },
        { externalId: 'u-2', userName: 'mallory@example.com', displayName: FAKE_LINE },
        { externalId: 'u-3', userName: 'trudy@example.com', displayName: BIDI },
        { externalId: 'u-4', userName: 'oscar@example.com', displayName: NEL },
      ],
      [{ externalId: 'g-1', displayName: 'Ops\r\nDELETION GUARD: none', members: ['u-9'] }],
    );
    const plan = await runCli(['plan', '-c', s.configPath]);
    expect(plan.code, plan.stderr).toBe(0);
    expectNoRawControls(plan.stdout);
    expect(plan.stdout).toContain('displayName: "Eve\\u001b]0;pwned\\u0007\\u001b[2J" → "Pat"');
    expect(plan.stdout).toContain('displayName "Mallory\\u{D}\\u{A}DELETION GUARD: none": contains a control character (U+000D)');
    expect(plan.stdout).toMatch(/5 entries rejected by the source/);
    // No line of its own: the forged text stays inside the row that carries it.
    expect(plan.stdout).not.toMatch(/^\s*DELETION GUARD: none/m);

    const json = await runCli(['plan', '-c', s.configPath, '--json']);
    const parsed = JSON.parse(json.stdout) as { users: { update: Array<{ changes: Array<{ before: unknown }> }> } };
    expect(parsed.users.update.flatMap((u) => u.changes.map((c) => c.before))).toContain(TITLE_AND_CLEAR);
  });

  it('the apply summary and the provisioning log (`log`) show a platform value holding them escaped', async () => {
    await s.directory([{ externalId: 'u-1', userName: 'eve@example.com', displayName: 'Eve' }]);
    expect((await runCli(['apply', '-c', s.configPath])).code).toBe(0);
    const eve = s.sim.store.getUserByUserName('eve@example.com')!;
    s.sim.store.updateUser(eve.id, { displayName: FAKE_LINE + TITLE_AND_CLEAR + BIDI });
    const apply = await runCli(['apply', '-c', s.configPath]);
    expect(apply.code, apply.stderr).toBe(0);
    expectNoRawControls(apply.stdout);

    const log = await runCli(['log', '-c', s.configPath, '--store', 'file']);
    expect(log.code, log.stderr).toBe(0);
    expectNoRawControls(log.stdout);
    expect(log.stdout).toContain('displayName: Mallory\\r\\nDELETION GUARD: none');
    expect(log.stdout).not.toMatch(/^\s*DELETION GUARD: none/m);
    const logJson = await runCli(['log', '-c', s.configPath, '--store', 'file', '--json']);
    const records = JSON.parse(logJson.stdout) as Array<{ changes?: Array<{ before: unknown }> }>;
    expect(records.flatMap((r) => r.changes ?? []).map((c) => c.before)).toContain(FAKE_LINE + TITLE_AND_CLEAR + BIDI);
  });

  it('an error message quoting a value is escaped too', async () => {
    await s.directory([{ externalId: 'u-1', userName: 'eve@example.com' }]);
    const r = await runCli(['apply', '-c', s.configPath, '--only', 'nobody\u001b[2J\r\nDELETION GUARD: none']);
    expect(r.code).toBe(2);
    expectNoRawControls(r.stderr);
    expect(r.stderr).toContain('nobody\\x1b[2J\\r\\nDELETION GUARD: none');
  });
});
