/**
 * A change you can review, then apply (`plan --out` / `apply --plan`), and provision on demand
 * (`--only`), through the real CLI against the simulator over sockets.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.ts';
import { runCli } from './run-cli.ts';

const TOKEN = 'plan-apply-tok';
let sim: Simulator;
let dir: string;
let configPath: string;

interface Person {
  ext: string;
  name: string;
  title?: string;
}
const ANN: Person = { ext: 'u-1', name: 'ann@example.com', title: 'Engineer' };
const BOB: Person = { ext: 'u-2', name: 'bob@example.com' };
const CID: Person = { ext: 'u-3', name: 'cid@example.com' };

async function directory(users: Person[], groups: Array<{ ext: string; name: string; members: string[] }> = []): Promise<void> {
  const u = users.map(
    (p) =>
      `  - { externalId: ${p.ext}, userName: ${p.name}, givenName: G, familyName: F${p.title ? `, attributes: { title: ${p.title} }` : ''} }`,
  );
  const g = groups.map((x) => `  - { externalId: ${x.ext}, displayName: ${x.name}, members: [${x.members.join(', ')}] }`);
  await writeFile(join(dir, 'directory.yaml'), ['users:', ...u, `groups:${g.length === 0 ? ' []' : ''}`, ...g, ''].join('\n'));
}

beforeEach(async () => {
  sim = await startSimulator({ tokens: [{ token: TOKEN }] });
  dir = await mkdtemp(join(tmpdir(), 'plan-apply-'));
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
      '  mapping: { user: { title: attributes.title } }',
      '',
    ].join('\n'),
  );
});
afterEach(async () => {
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

const active = () =>
  sim.store
    .users()
    .filter((u) => u.active !== false)
    .map((u) => u.userName)
    .sort();

describe('provision on demand (--only)', () => {
  it('first day: apply --only bob creates bob alone; his group waits for a full apply', async () => {
    await directory([ANN, BOB, CID], [{ ext: 'g-1', name: 'Sales', members: [ANN.ext, BOB.ext] }]);
    const r = await runCli(['apply', '-c', configPath, '--only', 'BOB@example.com', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(active()).toEqual([BOB.name]);
    expect(sim.store.groups()).toEqual([]);
    const out = JSON.parse(r.stdout) as { plan: { only: string; skipped: Array<{ ref: string; reason: string }> } };
    expect(out.plan.only).toBe('BOB@example.com');
    expect(out.plan.skipped).toEqual([
      {
        kind: 'member',
        ref: 'Sales ← BOB@example.com',
        reason: 'the group does not exist on the platform yet; a full apply creates it with its members',
      },
    ]);
  });

  it('leaver plus title change: --only by externalId touches that one user; the leaver is deprovisioned only by a full apply, and one removal never trips the percentage guard', async () => {
    await directory([ANN, BOB, CID], [{ ext: 'g-1', name: 'Sales', members: [ANN.ext, BOB.ext, CID.ext] }]);
    expect((await runCli(['apply', '-c', configPath])).code).toBe(0);
    await directory([{ ...ANN, title: 'Manager' }, BOB], [{ ext: 'g-1', name: 'Sales', members: [ANN.ext, BOB.ext] }]);

    const ann = await runCli(['apply', '-c', configPath, '--only', ANN.ext, '--json']);
    expect(ann.code, ann.stderr).toBe(0);
    expect((sim.store.getUserByUserName(ANN.name) as { title?: string }).title).toBe('Manager');
    expect(active()).toEqual([ANN.name, BOB.name, CID.name]);
    expect(sim.store.groups()[0]?.members?.length).toBe(3);

    // cid left: 1 of 4 managed objects is 25%, above the default 20% guard; restricted to cid it is one removal, not a mass deletion.
    const plan = await runCli(['plan', '-c', configPath, '--only', CID.name, '--json']);
    expect(plan.code, plan.stderr).toBe(0);
    const p = JSON.parse(plan.stdout) as {
      summary: { changes: number; usersDeactivate: number; membersRemove: number };
      guard: { tripped: boolean };
    };
    expect(p.summary).toMatchObject({ usersDeactivate: 1, membersRemove: 1, changes: 2 });
    expect(p.guard.tripped).toBe(false);
    const cid = await runCli(['apply', '-c', configPath, '--only', CID.name]);
    expect(cid.code, cid.stderr).toBe(0);
    expect(active()).toEqual([ANN.name, BOB.name]);
    expect(
      sim.store
        .groups()[0]
        ?.members?.map((m) => m.value)
        .sort(),
    ).toEqual([sim.store.getUserByUserName(ANN.name)!.id, sim.store.getUserByUserName(BOB.name)!.id].sort());
    const after = await runCli(['plan', '-c', configPath, '--json']);
    expect((JSON.parse(after.stdout) as { summary: { changes: number } }).summary.changes).toBe(0);
  });
});

describe('plan --out, then apply --plan', () => {
  it('applies exactly the reviewed plan, then a plan shows no changes', async () => {
    await directory([ANN, BOB]);
    expect((await runCli(['apply', '-c', configPath])).code).toBe(0);
    await directory([{ ...ANN, title: 'Manager' }, BOB, CID]);
    const planFile = join(dir, 'plan.json');
    const plan = await runCli(['plan', '-c', configPath, '--out', planFile]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stderr).toContain(`plan saved to ${planFile}; review it, then run: scim-audit-sync apply --plan ${planFile}`);
    const apply = await runCli(['apply', '-c', configPath, '--plan', planFile]);
    expect(apply.code, apply.stderr).toBe(0);
    expect(active()).toEqual([ANN.name, BOB.name, CID.name]);
    expect((sim.store.getUserByUserName(ANN.name) as { title?: string }).title).toBe('Manager');
    const again = await runCli(['plan', '-c', configPath, '--json']);
    expect((JSON.parse(again.stdout) as { summary: { changes: number } }).summary.changes).toBe(0);
  });

  it('refuses (exit 2, saying what changed) when the source moved an operation of the plan; nothing is applied', async () => {
    await directory([ANN, BOB]);
    expect((await runCli(['apply', '-c', configPath])).code).toBe(0);
    await directory([{ ...ANN, title: 'Manager' }, BOB, CID]);
    const planFile = join(dir, 'plan.json');
    expect((await runCli(['plan', '-c', configPath, '--out', planFile])).code).toBe(0);
    // Before apply, HR corrects the title again and bob leaves.
    await directory([{ ...ANN, title: 'Director' }, CID]);
    const apply = await runCli(['apply', '-c', configPath, '--plan', planFile]);
    expect(apply.code).toBe(2);
    expect(apply.stderr).toContain('the platform or the source changed since');
    expect(apply.stderr).toContain(`  - changed since the plan: update user ${ANN.name}`);
    expect(apply.stderr).not.toContain('create user cid');
    expect(active()).toEqual([ANN.name, BOB.name]);
    expect((sim.store.getUserByUserName(ANN.name) as { title?: string }).title).toBe('Engineer');
  });

  it('refuses when the platform moved: the user was changed by hand since the plan', async () => {
    await directory([ANN]);
    expect((await runCli(['apply', '-c', configPath])).code).toBe(0);
    await directory([{ ...ANN, title: 'Manager' }]);
    const planFile = join(dir, 'plan.json');
    expect((await runCli(['plan', '-c', configPath, '--out', planFile])).code).toBe(0);
    const ann = sim.store.getUserByUserName(ANN.name)!;
    sim.store.updateUser(ann.id, { name: { givenName: 'Hand', familyName: 'Edited' } });
    const apply = await runCli(['apply', '-c', configPath, '--plan', planFile]);
    expect(apply.code).toBe(2);
    expect(apply.stderr).toContain(`changed since the plan: update user ${ANN.name}`);
  });

  it('an operation the reviewer never saw is not applied: it is listed for the next plan', async () => {
    await directory([ANN]);
    const planFile = join(dir, 'plan.json');
    expect((await runCli(['plan', '-c', configPath, '--out', planFile])).code).toBe(0);
    await directory([ANN, BOB]);
    const apply = await runCli(['apply', '-c', configPath, '--plan', planFile]);
    expect(apply.code, apply.stderr).toBe(0);
    expect(apply.stderr).toContain(`not in the reviewed plan, left for the next plan:\n  - new since the plan: create user ${BOB.name}`);
    expect(active()).toEqual([ANN.name]);
  });

  it('refuses a plan file edited after the review', async () => {
    await directory([ANN]);
    const planFile = join(dir, 'plan.json');
    expect((await runCli(['plan', '-c', configPath, '--out', planFile])).code).toBe(0);
    const { readFileSync } = await import('node:fs');
    const file = JSON.parse(readFileSync(planFile, 'utf8')) as { plan: { users: { create: Array<{ resource: { userName: string } }> } } };
    file.plan.users.create[0]!.resource.userName = 'mallory@example.com';
    await writeFile(planFile, JSON.stringify(file));
    const apply = await runCli(['apply', '-c', configPath, '--plan', planFile]);
    expect(apply.code).toBe(2);
    expect(apply.stderr).toContain('was modified after `plan --out` wrote it');
    expect(sim.store.users()).toEqual([]);
  });

  it('refuses a plan made for another tenant or with extra options', async () => {
    await directory([ANN]);
    const planFile = join(dir, 'plan.json');
    expect((await runCli(['plan', '-c', configPath, '--out', planFile])).code).toBe(0);
    const withOnly = await runCli(['apply', '-c', configPath, '--plan', planFile, '--only', ANN.name]);
    expect(withOnly.code).toBe(2);
    expect(withOnly.stderr).toContain('--plan carries its own options');
    await writeFile(
      configPath.replace('config.yaml', 'other.yaml'),
      (await import('node:fs')).readFileSync(configPath, 'utf8').replace('state:', 'tenant: other\nstate:'),
    );
    const other = await runCli(['apply', '-c', join(dir, 'other.yaml'), '--plan', planFile]);
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/made for tenant default at .*, this config is tenant other/);
  });
});
