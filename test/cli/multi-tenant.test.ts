/** One-shot commands on a multi-tenant config: `--tenant` picks the tenant; without it the CLI says which exist. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.ts';
import { runCli } from './run-cli.ts';

let alpha: Simulator;
let beta: Simulator;
let dir: string;
let configPath: string;

beforeAll(async () => {
  [alpha, beta] = await Promise.all([
    startSimulator({ tokens: [{ token: 'alpha-tok' }] }),
    startSimulator({ tokens: [{ token: 'beta-tok' }] }),
  ]);
  dir = await mkdtemp(join(tmpdir(), 'multi-tenant-cli-'));
  const user = (n: number) => `  - { externalId: u-${n}, userName: u${n}@example.com, givenName: U, familyName: "${n}" }`;
  await writeFile(join(dir, 'alpha.yaml'), ['users:', user(1), user(2), 'groups: []', ''].join('\n'));
  await writeFile(join(dir, 'beta.yaml'), ['users:', user(3), 'groups: []', ''].join('\n'));
  configPath = join(dir, 'config.yaml');
  const tenant = (id: string, sim: Simulator, token: string) =>
    [
      `  - tenant: ${id}`,
      '    platform:',
      `      baseUrl: ${sim.url}`,
      `      token: ${token}`,
      '      allowInsecureHttp: true',
      '    provisioning:',
      `      source: { type: file, path: ${id}.yaml }`,
    ].join('\n');
  await writeFile(
    configPath,
    ['state: { dir: ./state }', 'tenants:', tenant('alpha', alpha, 'alpha-tok'), tenant('beta', beta, 'beta-tok'), ''].join('\n'),
  );
});

afterAll(async () => {
  await Promise.all([alpha?.close(), beta?.close()]);
  await rm(dir, { recursive: true, force: true });
});

describe('multi-tenant config with one-shot commands', () => {
  it('refuses to guess the tenant, naming the ones that exist', async () => {
    const r = await runCli(['plan', '--config', configPath]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/lists 2 tenants/);
    expect(r.stderr).toMatch(/--tenant: pass one of alpha, beta/);
  });

  it('applies to the chosen tenant only, with its own platform, token and state', async () => {
    const r = await runCli(['apply', '--config', configPath, '--tenant', 'beta', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { plan: { tenant: string } }).plan.tenant).toBe('beta');
    expect(beta.store.counts().users).toBe(1);
    expect(alpha.store.counts().users).toBe(0);
    const unknown = await runCli(['plan', '--config', configPath, '--tenant', 'gamma']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no tenant "gamma"/);
  });
});
