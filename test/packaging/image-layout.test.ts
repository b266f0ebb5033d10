/**
 * The image's runtime stage, rebuilt without docker: the sources compiled the way the build
 * stage does it (tsc -p tsconfig.build.json), laid out as the final stage's COPY
 * instructions say, with the production dependencies only, then started with the
 * Dockerfile's own CMD against the real Redis. Proves that the compiled output runs without
 * src/ or any dev dependency, that the daemon comes up ready, serves its metrics, writes
 * nothing next to its code, and stops cleanly on SIGTERM.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { REPO_DIR } from './support/chart-files.ts';
import { execForm, parseDockerfile } from './support/dockerfile.ts';

const root = mkdtempSync(join(tmpdir(), 'scim-image-'));
const app = join(root, 'app');
const keyPrefix = `pkgtest${process.pid}${Date.now().toString(36)}`;
const pkg = JSON.parse(readFileSync(join(REPO_DIR, 'package.json'), 'utf8')) as { version: string };
const finalStage = parseDockerfile(readFileSync(join(REPO_DIR, 'Dockerfile'), 'utf8')).stages.at(-1);
const cmd = execForm(finalStage?.instructions.filter((i) => i.keyword === 'CMD').at(-1)?.args ?? '') ?? [];

/** What the build stage's /app holds after `npm run build` and `npm prune --omit=dev`. */
function buildStage(): Record<string, string> {
  const dist = join(root, 'build', 'dist');
  const tsc = spawnSync(
    process.execPath,
    [join(REPO_DIR, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', dist],
    { cwd: REPO_DIR, encoding: 'utf8' },
  );
  if (!existsSync(join(dist, 'main.js'))) throw new Error(`tsc produced no dist/main.js:\n${tsc.stdout}${tsc.stderr}`);
  // Production dependencies: every top-level package of the lockfile not marked dev, linked from the checkout.
  const modules = join(root, 'build', 'node_modules');
  const lock = JSON.parse(readFileSync(join(REPO_DIR, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (!/^node_modules\/(@[^/]+\/)?[^/]+$/.test(path) || entry.dev === true || !existsSync(join(REPO_DIR, path))) continue;
    const target = join(modules, path.slice('node_modules/'.length));
    mkdirSync(dirname(target), { recursive: true });
    symlinkSync(join(REPO_DIR, path), target, 'dir');
  }
  return {
    '/app/dist': dist,
    '/app/node_modules': modules,
    '/app/package.json': join(REPO_DIR, 'package.json'),
    '/app/bin': join(REPO_DIR, 'bin'),
  };
}

/** Everything under `dir` (not following the dependency links), as relative paths. */
function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => !relative(dir, join(d.parentPath, d.name)).startsWith('node_modules/'))
    .map((d) => relative(dir, join(d.parentPath, d.name)))
    .sort();
}

function run(args: string[], env: Record<string, string> = {}): ChildProcess {
  const [node, ...rest] = args;
  expect(node).toBe('node');
  return spawn(process.execPath, rest, {
    cwd: app,
    env: { PATH: process.env['PATH'] ?? '', NODE_ENV: 'production', TMPDIR: join(root, 'tmp'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

async function output(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

beforeAll(() => {
  const build = buildStage();
  mkdirSync(join(root, 'tmp'));
  // The runtime stage: exactly its COPY --from=build instructions.
  for (const copy of finalStage?.instructions.filter((i) => i.keyword === 'COPY') ?? []) {
    const [src, dest] = copy.args.split(/\s+/) as [string, string];
    const from = build[src];
    if (from === undefined) throw new Error(`the runtime stage copies ${src}, which this test does not know how to build`);
    const to = join(app, dest);
    mkdirSync(dirname(to), { recursive: true });
    cpSync(from, to, { recursive: true, verbatimSymlinks: true });
  }
}, 120_000);

afterAll(async () => {
  const redis = new Redis({ host: '127.0.0.1', port: 6379, lazyConnect: true });
  await redis.connect();
  for (const pattern of [`${keyPrefix}:*`, `{${keyPrefix}}:*`]) {
    const keys = await redis.keys(pattern);
    if (keys.length > 0) await redis.del(...keys);
  }
  await redis.quit();
  rmSync(root, { recursive: true, force: true });
});

describe('the image runtime layout', () => {
  it('holds the compiled daemon and no TypeScript sources', () => {
    expect(readdirSync(app).sort()).toEqual(['bin', 'dist', 'node_modules', 'package.json']);
    expect(existsSync(join(app, 'dist/main.js'))).toBe(true);
    expect(files(app).filter((f) => f.endsWith('.ts'))).toEqual([]);
    expect(existsSync(join(app, 'node_modules/bullmq'))).toBe(true);
    for (const dev of ['typescript', 'vitest', 'node']) expect(existsSync(join(app, 'node_modules', dev)), dev).toBe(false);
  });

  it('answers --version and --help from dist/ with production dependencies only', async () => {
    const version = await output(run(['node', 'bin/scim-audit-sync.mjs', '--version']));
    expect(version).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
    const help = await output(run(['node', 'bin/scim-audit-sync.mjs', '--help']));
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^\s+daemon \[options\]/m);
  });

  it('runs the CMD: ready on /readyz, metrics on /metrics, nothing written next to the code, exit 0 on SIGTERM', async () => {
    expect(cmd.slice(0, 3)).toEqual(['node', 'bin/scim-audit-sync.mjs', 'daemon']);
    const etc = join(root, 'etc');
    mkdirSync(etc);
    writeFileSync(join(etc, 'platform-token'), 'image-test-token\n');
    writeFileSync(join(etc, 'directory.yaml'), stringify({ users: [], groups: [] }));
    const config = {
      tenant: 'image-test',
      platform: { baseUrl: 'https://platform.invalid', tokenFile: join(etc, 'platform-token') },
      provisioning: { source: { type: 'file', path: join(etc, 'directory.yaml') } },
      schedules: { reconcile: { enabled: false }, audit: { enabled: false } },
      redis: { url: 'redis://127.0.0.1:6379', keyPrefix },
      daemon: { http: { host: '127.0.0.1', port: 0 }, shutdownTimeoutSeconds: 5 },
      state: { dir: join(root, 'tmp', 'state') },
    };
    writeFileSync(join(etc, 'config.yaml'), stringify(config));
    const before = files(app);

    const argv = cmd.map((a) => (a === '/etc/scim-audit-sync/config.yaml' ? join(etc, 'config.yaml') : a));
    const daemon = run(argv);
    const result = output(daemon);
    let log = '';
    daemon.stderr?.on('data', (c: Buffer) => (log += c.toString()));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`daemon did not start:\n${log}`)), 20_000);
        daemon.stderr?.on('data', () => {
          const started = log
            .split('\n')
            .map((l) => (l.startsWith('{') ? (JSON.parse(l) as { msg?: string; url?: string }) : {}))
            .find((l) => l.msg === 'daemon started');
          if (started?.url) {
            clearTimeout(timer);
            resolve(started.url);
          }
        });
        daemon.once('exit', () => reject(new Error(`daemon exited:\n${log}`)));
      });
      let ready: Response | undefined;
      for (let i = 0; i < 40 && ready?.status !== 200; i++) {
        ready = await fetch(`${url}/readyz`);
        if (ready.status !== 200) await new Promise((r) => setTimeout(r, 250));
      }
      expect(await ready?.json()).toEqual({ status: 'ready', checks: { redis: true, workers: true } });
      expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: 'ok' });
      const metrics = await (await fetch(`${url}/metrics`)).text();
      expect(metrics).toContain(`scimsync_build_info{version="${pkg.version}"`);
      expect(log).not.toContain('image-test-token');
    } finally {
      daemon.kill('SIGTERM');
    }
    const { code } = await result;
    expect({ code, stopped: log.includes('daemon stopped') }).toEqual({ code: 0, stopped: true });
    expect(files(app)).toEqual(before);
  });
});
