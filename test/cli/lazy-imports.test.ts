/**
 * Commands and their dependencies load on demand (src/cli/program.ts): `--version` and `--help`
 * load no config schema, HTTP client, queue or directory client, and a `plan` of a file source
 * loads only what it uses. Real child processes of bin/scim-audit-sync.mjs; the modules each
 * one resolved (imports and requires) are recorded by test/helpers/record-modules.ts.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.ts';
import { BIN } from './run-cli.ts';

const RECORDER = pathToFileURL(join(import.meta.dirname, '..', 'helpers', 'record-modules.ts')).href;

/** Never needed to print the version or the help. */
const NOT_FOR_HELP = [
  'zod',
  'yaml',
  'undici',
  'p-queue',
  'csv-parse',
  'cli-progress',
  'prom-client',
  'bullmq',
  'ioredis',
  'ldapts',
  '@googleapis/admin',
  'google-auth-library',
];
/** Never needed by a plan of a file source (on a pipe: no progress bar). */
const NOT_FOR_FILE_PLAN = [
  'bullmq',
  'ioredis',
  'ldapts',
  '@googleapis/admin',
  'google-auth-library',
  'prom-client',
  'csv-parse',
  'cli-progress',
];

interface Loaded {
  code: number;
  stdout: string;
  stderr: string;
  /** npm packages, by name (`@scope/name` for scoped ones). */
  packages: Set<string>;
  /** The project's own modules, relative to src/ (or dist/) without extension: `cli/reconcile`. */
  own: string[];
}

let dir: string;
let sim: Simulator;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lazy-imports-'));
  sim = await startSimulator({ tokens: [{ token: 'lazy-tok' }] });
});
afterAll(async () => {
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

async function run(name: string, args: string[], cwd = dir): Promise<Loaded> {
  const out = join(dir, `${name}.modules`);
  const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(
      process.execPath,
      ['--import', RECORDER, BIN, ...args],
      { cwd, env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', RECORD_MODULES_OUT: out }, timeout: 20_000 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    ),
  );
  const urls = (await readFile(out, 'utf8')).split('\n');
  const packages = new Set<string>();
  const own: string[] = [];
  for (const url of urls) {
    const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    if (pkg?.[1] !== undefined) packages.add(pkg[1]);
    else {
      const mine = /\/(?:src|dist)\/(.+)\.(?:ts|js)$/.exec(url);
      if (mine?.[1] !== undefined) own.push(mine[1]);
    }
  }
  return { code, stdout, stderr, packages, own };
}

describe('lazy command loading', () => {
  it('--version loads no command module and none of the heavy dependencies', async () => {
    const r = await run('version', ['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+/);
    expect(r.packages).toContain('commander'); // the recorder sees packages
    for (const pkg of NOT_FOR_HELP) expect(r.packages, pkg).not.toContain(pkg);
    expect(r.own.filter((m) => /^cli\/(?!program$|options$|exit-codes$|output$)/.test(m))).toEqual([]);
  });

  it('--help lists every command without loading their dependencies', async () => {
    const r = await run('help', ['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('plan [options]');
    expect(r.stdout).toContain('audit');
    expect(r.own).toContain('cli/reconcile');
    for (const pkg of NOT_FOR_HELP) expect(r.packages, pkg).not.toContain(pkg);
    expect(r.own.filter((m) => /^(config\/load|reconcile\/engine|audit\/runtime|jobs\/|simulator\/server)/.test(m))).toEqual([]);
  });

  it('a plan of a file source loads the config, the engine and the HTTP client, and no queue, other source, LDAP, Google, metrics or sink code', async () => {
    await writeFile(
      join(dir, 'directory.yaml'),
      'users:\n  - { externalId: u-1, userName: ann@example.com, givenName: Ann, familyName: Lee }\ngroups:\n  - { externalId: g-1, displayName: Eng, members: [u-1] }\n',
    );
    await writeFile(
      join(dir, 'config.yaml'),
      [
        'platform:',
        `  baseUrl: ${sim.url}`,
        '  token: lazy-tok',
        '  allowInsecureHttp: true',
        'state: { dir: ./state }',
        'provisioning:',
        '  source: { type: file, path: directory.yaml }',
        '',
      ].join('\n'),
    );
    const r = await run('plan', ['plan', '--config', 'config.yaml', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { summary: { usersCreate: number } }).summary.usersCreate).toBe(1);
    for (const pkg of ['zod', 'yaml', 'undici', 'pino']) expect(r.packages, pkg).toContain(pkg);
    for (const pkg of NOT_FOR_FILE_PLAN) expect(r.packages, pkg).not.toContain(pkg);
    expect(
      r.own.filter((m) =>
        /^(jobs\/|ui\/(?!config-schema$)|simulator\/|audit\/sinks\/[^/]+\/sink$|audit\/runtime|observability\/metrics|app$)/.test(m),
      ),
    ).toEqual([]);
    // Only the configured source's code (the others' config schemas are part of the config's).
    expect(r.own).toContain('sources/file/file-source');
    expect(r.own.filter((m) => /^sources\/(?!file\/)[^/]+\/(?!schema$|presets$)/.test(m))).toEqual([]);
  });

  it('a plan loads no apply code: the executor, its progress bar and the provisioning log come with apply', async () => {
    const r = await run('plan-again', ['plan', '--config', 'config.yaml', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.own).toContain('reconcile/engine');
    expect(r.own.filter((m) => /^(reconcile\/apply|reconcile\/tasks|cli\/progress|provisioning-log\/(?!config-schema$))/.test(m))).toEqual(
      [],
    );
  });
});
