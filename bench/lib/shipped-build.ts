/**
 * `npm run build` into a temp dir laid out like the image (dist/, bin/, package.json, and
 * node_modules linked): benchmarks of the shipped daemon run this, not the sources.
 * IMAGE_ENV is read from the Dockerfile's ENV instructions, so the benches run the process
 * in exactly the environment the image gives it.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './simulator-process.ts';

/** What the Dockerfile and the Helm chart set for the process. */
export const IMAGE_ENV: Record<string, string> = imageEnv(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));

/** `KEY=value` pairs of every ENV instruction of the Dockerfile (line continuations joined). */
function imageEnv(dockerfile: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of dockerfile.replace(/\\\n/g, ' ').split('\n')) {
    const m = /^ENV\s+(.*)$/.exec(line.trim());
    if (!m) continue;
    for (const pair of (m[1] as string).trim().split(/\s+/)) {
      const eq = pair.indexOf('=');
      if (eq > 0) env[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
  }
  return env;
}

export const shippedBin = (build: string): string => join(build, 'bin', 'scim-audit-sync.mjs');

export async function buildShipped(prefix: string): Promise<string> {
  const build = await mkdtemp(join(tmpdir(), `${prefix}-`));
  const tsc = spawn(
    process.execPath,
    [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', join(build, 'dist')],
    { stdio: 'inherit' },
  );
  const [code] = (await once(tsc, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`tsc exited ${code}`);
  await mkdir(join(build, 'bin'));
  await copyFile(join(ROOT, 'bin', 'scim-audit-sync.mjs'), shippedBin(build));
  await copyFile(join(ROOT, 'package.json'), join(build, 'package.json'));
  await symlink(join(ROOT, 'node_modules'), join(build, 'node_modules'));
  return build;
}
