/**
 * A saved plan is bound to what the reviewer saw (`plan --out`, then `apply --plan`): when an
 * object the plan touches moved on the platform or in the source since the plan was made, apply
 * refuses (exit 2), lists what moved and changes nothing, as Terraform refuses a stale plan.
 * Real CLI, simulator over a socket.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from './run-cli.ts';
import { startScenario, type Scenario } from './support-directory.ts';

const TOKEN = 'stale-plan-tok';
let s: Scenario;
let planFile: string;
beforeEach(async () => {
  s = await startScenario(TOKEN);
  planFile = join(s.dir, 'plan.json');
});
afterEach(async () => {
  await s.close();
});

const ANN = { externalId: 'u-1', userName: 'ann@example.com', displayName: 'Ann' };
const BOB = { externalId: 'u-2', userName: 'bob@example.com', displayName: 'Bob' };

describe('a stale saved plan', () => {
  it('an admin edits the displayName the plan replaces: apply --plan refuses instead of overwriting the edit', async () => {
    await s.directory([ANN, BOB]);
    expect((await runCli(['apply', '-c', s.configPath])).code).toBe(0);
    await s.directory([{ ...ANN, displayName: 'Ann Source' }, BOB]);
    const plan = await runCli(['plan', '-c', s.configPath, '--out', planFile]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain('displayName: "Ann" → "Ann Source"');
    // The write is the same (displayName := "Ann Source"), but not over the value the reviewer saw.
    const ann = s.sim.store.getUserByUserName(ANN.userName)!;
    s.sim.store.updateUser(ann.id, { displayName: 'Ann (set by the admin)' });

    const apply = await runCli(['apply', '-c', s.configPath, '--plan', planFile]);
    expect(apply.code).toBe(2);
    expect(apply.stderr).toContain('the plan is stale');
    expect(apply.stderr).toContain('nothing was applied');
    expect(apply.stderr).toContain(`  - changed since the plan: update user ${ANN.userName}`);
    expect(apply.stderr).toContain(`  - user ${ANN.userName} changed on the platform since the plan (displayName)`);
    expect(s.sim.store.getUserByUserName(ANN.userName)?.displayName).toBe('Ann (set by the admin)');
  });

  it('an admin edits another attribute of a user the plan deactivates: refused, the edit listed', async () => {
    await s.directory([ANN, BOB]);
    expect((await runCli(['apply', '-c', s.configPath])).code).toBe(0);
    await s.directory([ANN]);
    expect((await runCli(['plan', '-c', s.configPath, '--out', planFile, '--allow-deletes'])).code).toBe(0);
    const bob = s.sim.store.getUserByUserName(BOB.userName)!;
    s.sim.store.updateUser(bob.id, { name: { givenName: 'Robert', familyName: 'Admin' } });

    const apply = await runCli(['apply', '-c', s.configPath, '--plan', planFile]);
    expect(apply.code).toBe(2);
    expect(apply.stderr).toContain(`  - user ${BOB.userName} changed on the platform since the plan (name.familyName, name.givenName)`);
    expect(s.sim.store.getUserByUserName(BOB.userName)?.active).not.toBe(false);
  });

  it('the source edits a group the plan adds a member to: refused, the group listed', async () => {
    await s.directory([ANN, BOB], [{ externalId: 'g-1', displayName: 'Sales', members: [] }]);
    expect((await runCli(['apply', '-c', s.configPath])).code).toBe(0);
    await s.directory([ANN, BOB], [{ externalId: 'g-1', displayName: 'Sales', members: [ANN.externalId] }]);
    expect((await runCli(['plan', '-c', s.configPath, '--out', planFile])).code).toBe(0);
    await s.directory([ANN, BOB], [{ externalId: 'g-1', displayName: 'Sales', members: [ANN.externalId, BOB.externalId] }]);

    const apply = await runCli(['apply', '-c', s.configPath, '--plan', planFile]);
    expect(apply.code).toBe(2);
    expect(apply.stderr).toContain('  - group Sales changed in the source since the plan (members)');
    expect(s.sim.store.groups()[0]?.members ?? []).toEqual([]);
  });

  it('nothing moved: the saved plan applies, and its file holds the basis of each object it touches', async () => {
    await s.directory([ANN, BOB]);
    expect((await runCli(['apply', '-c', s.configPath])).code).toBe(0);
    await s.directory([{ ...ANN, displayName: 'Ann Source' }, BOB]);
    expect((await runCli(['plan', '-c', s.configPath, '--out', planFile])).code).toBe(0);
    const file = JSON.parse(await readFile(planFile, 'utf8')) as {
      fileVersion: number;
      basis: Record<string, Record<string, string> | null>;
    };
    expect(file.fileVersion).toBe(2);
    const ann = s.sim.store.getUserByUserName(ANN.userName)!;
    expect(Object.keys(file.basis).sort()).toEqual([`platform:user:${ann.id}`, `source:user:${ANN.externalId}`]);
    expect(file.basis[`platform:user:${ann.id}`]).toHaveProperty('displayName');

    const apply = await runCli(['apply', '-c', s.configPath, '--plan', planFile]);
    expect(apply.code, apply.stderr).toBe(0);
    expect(s.sim.store.getUserByUserName(ANN.userName)?.displayName).toBe('Ann Source');
  });
});
