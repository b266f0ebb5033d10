/**
 * `npm run build` into a temp dir laid out like the image (dist/, bin/, package.json, and
 * node_modules linked): benchmarks of the shipped daemon run this, not the sources.
 * (bench/audit.ts has the same steps inline.)
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFile, mkdir, mkdtemp, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './simulator-process.ts';

/** What the Dockerfile and the Helm chart set for the process. */
export const IMAGE_ENV = { NODE_ENV: 'production', MALLOC_ARENA_MAX: '2' };

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
