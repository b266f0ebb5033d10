/**
 * The Dockerfile and .dockerignore, read instruction by instruction (docker does not run
 * here): multi-stage, production install, Node 24, numeric non-root user, node started
 * directly, OCI labels, and a build context that holds nothing secret or stale.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_DIR } from './support/chart-files.ts';
import { execForm, expandArgs, isIgnored, keyValues, parseDockerfile, type Instruction } from './support/dockerfile.ts';
import { nodeFlags, runtimeFlagCalls, tuningEnv } from './support/runtime-tuning.ts';

const dockerfile = parseDockerfile(readFileSync(join(REPO_DIR, 'Dockerfile'), 'utf8'));
const dockerignore = readFileSync(join(REPO_DIR, '.dockerignore'), 'utf8');
const finalStage = dockerfile.stages[dockerfile.stages.length - 1];
const final = finalStage?.instructions ?? [];
const named = (name: string): Instruction[] => dockerfile.stages.find((s) => s.name === name)?.instructions ?? [];
const runs = (ins: Instruction[]): string[] => ins.filter((i) => i.keyword === 'RUN').map((i) => i.args);
const last = (ins: Instruction[], keyword: string): Instruction | undefined => ins.filter((i) => i.keyword === keyword).at(-1);

describe('the Dockerfile reader', () => {
  it('joins continuations, drops comments inside them, and keeps flags and exec forms apart', () => {
    const parsed = parseDockerfile(
      [
        '# syntax=docker/dockerfile:1',
        'ARG BASE=node:24-slim',
        'FROM ${BASE} AS build',
        'RUN --mount=type=cache,target=/root/.npm \\',
        '    # a comment inside',
        '    npm ci \\',
        '    && echo done',
        'FROM scratch',
        'COPY --from=build --chown=1:1 /a /b',
        'CMD ["node", "x.mjs"]',
        'ENV A=1 B="two words"',
        'ENV LEGACY some value',
      ].join('\n'),
    );
    expect(parsed.directives).toEqual({ syntax: 'docker/dockerfile:1' });
    expect(parsed.globalArgs).toEqual({ BASE: 'node:24-slim' });
    expect(parsed.stages.map((s) => [s.from, s.name])).toEqual([
      ['${BASE}', 'build'],
      ['scratch', undefined],
    ]);
    expect(expandArgs('${BASE}', parsed.globalArgs)).toBe('node:24-slim');
    expect(parsed.stages[0]?.instructions[0]).toEqual({
      keyword: 'RUN',
      flags: { mount: 'type=cache,target=/root/.npm' },
      args: 'npm ci && echo done',
      line: 4,
    });
    const [copy, cmd, env, legacy] = parsed.stages[1]?.instructions ?? [];
    expect(copy?.flags).toEqual({ from: 'build', chown: '1:1' });
    expect(execForm(cmd?.args ?? '')).toEqual(['node', 'x.mjs']);
    expect(execForm('node x.mjs')).toBeUndefined();
    expect(keyValues(env?.args ?? '')).toEqual({ A: '1', B: 'two words' });
    expect(keyValues(legacy?.args ?? '')).toEqual({ LEGACY: 'some value' });
    expect(() => parseDockerfile('FROM a\nRUN x \\')).toThrow(/continuation/);
  });

  it('reads .dockerignore like docker: last match wins, ! re-includes, directories cover their contents', () => {
    const rules = '*\n!src/\n**/*.log\n!keep.log\nnode_modules';
    expect(isIgnored(rules, 'README.md')).toBe(true);
    expect(isIgnored(rules, 'src/main.ts')).toBe(false);
    expect(isIgnored(rules, 'src/deep/x.log')).toBe(true);
    expect(isIgnored(rules, 'keep.log')).toBe(false);
    expect(isIgnored('node_modules', 'node_modules/a/b.js')).toBe(true);
    expect(isIgnored('node_modules', 'src/node_modules.ts')).toBe(false);
  });
});

describe('Dockerfile', () => {
  it('is multi-stage: a build stage and a runtime stage on Node 24', () => {
    expect(dockerfile.stages.length).toBeGreaterThanOrEqual(2);
    expect(named('build').length).toBeGreaterThan(0);
    for (const stage of dockerfile.stages)
      expect(expandArgs(stage.from, dockerfile.globalArgs)).toMatch(
        /^(docker\.io\/(library\/)?)?node:24([.-][\w.-]*)?(@sha256:[a-f0-9]{64})?$/,
      );
  });

  it('installs with npm ci, builds with npm run build, and drops the dev dependencies', () => {
    const build = runs(named('build')).join('\n');
    expect(build).toMatch(/\bnpm ci\b/);
    expect(build).not.toMatch(/\bnpm (install|i)\b/);
    expect(build).toMatch(/\bnpm run build\b/);
    expect(build).toMatch(/\bnpm (prune|ci) [^\n]*--omit=dev\b/);
    // The lockfile is copied before npm ci, so the install is reproducible.
    const copyLock = named('build').findIndex((i) => i.keyword === 'COPY' && /package-lock\.json/.test(i.args));
    const ci = named('build').findIndex((i) => i.keyword === 'RUN' && /\bnpm ci\b/.test(i.args));
    expect(copyLock).toBeGreaterThanOrEqual(0);
    expect(copyLock).toBeLessThan(ci);
  });

  it('ships the compiled output and production node_modules only, never the sources or an install', () => {
    const copies = final.filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD');
    expect(
      copies.every((c) => c.keyword === 'COPY' && c.flags['from'] === 'build'),
      'runtime copies only from the build stage',
    ).toBe(true);
    const sources = copies.map((c) => c.args.split(/\s+/)[0]);
    expect(sources).toEqual(expect.arrayContaining(['/app/dist', '/app/node_modules', '/app/bin', '/app/package.json']));
    expect(sources.some((s) => /\/src\b|^\.$/.test(s ?? ''))).toBe(false);
    expect(runs(final).join('\n')).not.toMatch(/\bnpm (ci|install|i)\b/);
  });

  it('runs as a numeric non-root user', () => {
    const user = last(final, 'USER');
    expect(user?.args).toMatch(/^\d+(:\d+)?$/);
    const [uid, gid] = (user?.args ?? '0').split(':').map(Number);
    expect(uid).toBeGreaterThan(0);
    if (gid !== undefined) expect(gid).toBeGreaterThan(0);
    // Nothing after USER switches back to root.
    expect(final.slice(final.indexOf(user as Instruction) + 1).some((i) => i.keyword === 'USER')).toBe(false);
  });

  it('starts the daemon with node directly, in exec form, never through npm or a shell', () => {
    const cmd = last(final, 'CMD');
    expect(execForm(cmd?.args ?? '')).toEqual([
      'node',
      'bin/scim-audit-sync.mjs',
      'daemon',
      '--config',
      '/etc/scim-audit-sync/config.yaml',
    ]);
    const entrypoint = last(final, 'ENTRYPOINT');
    // The base image's docker-entrypoint.sh is reset: node is PID 1 and receives SIGTERM.
    expect(entrypoint && execForm(entrypoint.args)).toEqual([]);
    for (const i of [...final, ...named('build')]) expect(`${i.keyword} ${i.args}`).not.toMatch(/npm start|npm run (start|daemon)/);
  });

  it('sets NODE_ENV=production and a TMPDIR, so a read-only root filesystem works', () => {
    const env = Object.assign({}, ...final.filter((i) => i.keyword === 'ENV').map((i) => keyValues(i.args))) as Record<string, string>;
    expect(env).toMatchObject({ NODE_ENV: 'production', TMPDIR: '/tmp' });
    expect(Object.keys(env).filter((k) => /TOKEN|PASSWORD|SECRET|KEY/i.test(k))).toEqual([]);
    expect(final.filter((i) => i.keyword === 'EXPOSE').map((i) => i.args)).toEqual(['9464']);
  });

  it('leaves Node, V8 and the allocator at their defaults: no tuning env, no node flags, no flags set by the launcher', () => {
    const env = Object.assign({}, ...final.filter((i) => i.keyword === 'ENV').map((i) => keyValues(i.args))) as Record<string, string>;
    expect(tuningEnv(Object.keys(env))).toEqual([]);
    expect(nodeFlags(execForm(last(final, 'CMD')?.args ?? '') ?? [])).toEqual([]);
    expect(runtimeFlagCalls(readFileSync(join(REPO_DIR, 'bin', 'scim-audit-sync.mjs'), 'utf8'))).toEqual([]);
  });

  it('the tuning checks see what they look for', () => {
    expect(tuningEnv(['NODE_ENV', 'NODE_OPTIONS', 'MALLOC_ARENA_MAX', 'TMPDIR', 'GLIBC_TUNABLES'])).toEqual([
      'NODE_OPTIONS',
      'MALLOC_ARENA_MAX',
      'GLIBC_TUNABLES',
    ]);
    expect(nodeFlags(['node', '--max-semi-space-size=8', 'bin/scim-audit-sync.mjs', 'daemon', '--config', 'c.yaml'])).toEqual([
      '--max-semi-space-size=8',
    ]);
    expect(runtimeFlagCalls("const v8 = await import('node:v8');\nv8.setFlagsFromString('--heap-growing-percent=50');")).toEqual([
      'setFlagsFromString',
      '--heap-growing-percent',
    ]);
  });

  it('carries the OCI labels', () => {
    const labels = Object.assign({}, ...final.filter((i) => i.keyword === 'LABEL').map((i) => keyValues(i.args))) as Record<string, string>;
    for (const k of ['title', 'description', 'source', 'licenses', 'version', 'revision', 'created'])
      expect(labels[`org.opencontainers.image.${k}`], k).toBeTruthy();
    const pkg = JSON.parse(readFileSync(join(REPO_DIR, 'package.json'), 'utf8')) as { license: string };
    expect(labels['org.opencontainers.image.licenses']).toBe(pkg.license);
  });
});

describe('.dockerignore', () => {
  it('lets in every path the Dockerfile copies from the build context', () => {
    const fromContext = dockerfile.stages
      .flatMap((s) => s.instructions)
      .filter((i) => i.keyword === 'COPY' && i.flags['from'] === undefined);
    const paths = fromContext.flatMap((c) => c.args.split(/\s+/).slice(0, -1));
    expect(paths).toEqual(expect.arrayContaining(['package.json', 'package-lock.json', 'src', 'bin']));
    for (const p of paths) expect(isIgnored(dockerignore, p), p).toBe(false);
    expect(isIgnored(dockerignore, 'src/main.ts')).toBe(false);
  });

  it('keeps out local state, credentials, dependencies, build output and everything not needed', () => {
    for (const p of [
      'node_modules/zod/index.js',
      'dist/main.js',
      '.git/config',
      '.env',
      'src/.env',
      '.npmrc',
      '.scim-audit-sync/acme/ledger.json',
      '.demo-state/x',
      'test/packaging/dockerfile.test.ts',
      'helm/scim-audit-sync/values.yaml',
      'docs/kubernetes.md',
      'coverage/index.html',
      'npm-debug.log',
    ]) {
      expect(isIgnored(dockerignore, p), p).toBe(true);
    }
  });
});
