/**
 * Rotated file names and retention. `audit.ndjson` rotates to
 * `audit.20260102T030405123Z.ndjson` (UTC time of the rotation, sortable as text); a
 * same-millisecond clash gets `-1`, `-2`… The rotation time bounds the events inside:
 * every event was written, hence happened, before it.
 */
import { readdir, unlink } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';

export interface RotatedFile {
  path: string;
  rotatedAtMs: number;
}

export interface FileNaming {
  dir: string;
  stem: string;
  ext: string;
}

export function naming(path: string): FileNaming {
  const ext = extname(path);
  return { dir: dirname(path), stem: basename(path, ext), ext };
}

export function stamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:.]/g, '');
}

export function rotatedName(n: FileNaming, ms: number, seq: number): string {
  return join(n.dir, `${n.stem}.${stamp(ms)}${seq > 0 ? `-${seq}` : ''}${n.ext}`);
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Rotated files of this sink, oldest first. */
export async function listRotated(n: FileNaming): Promise<RotatedFile[]> {
  const re = new RegExp(`^${escapeRe(n.stem)}\\.(\\d{4})(\\d{2})(\\d{2})T(\\d{2})(\\d{2})(\\d{2})(\\d{3})Z(?:-(\\d+))?${escapeRe(n.ext)}$`);
  let names: string[];
  try {
    names = await readdir(n.dir);
  } catch (e) {
    if ((e as { code?: unknown }).code === 'ENOENT') return [];
    throw e;
  }
  const out: Array<RotatedFile & { seq: number }> = [];
  for (const name of names) {
    const m = re.exec(name);
    if (!m) continue;
    const [, y, mo, d, h, mi, s, ms, seq] = m;
    const at = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), Number(ms));
    out.push({ path: join(n.dir, name), rotatedAtMs: at, seq: Number(seq ?? 0) });
  }
  out.sort((a, b) => a.rotatedAtMs - b.rotatedAtMs || a.seq - b.seq);
  return out.map(({ path, rotatedAtMs }) => ({ path, rotatedAtMs }));
}

/** Delete the oldest rotated files beyond `maxFiles` (0 keeps all). Returns what was deleted. */
export async function applyRetention(n: FileNaming, maxFiles: number): Promise<string[]> {
  if (maxFiles <= 0) return [];
  const rotated = await listRotated(n);
  const excess = rotated.slice(0, Math.max(0, rotated.length - maxFiles));
  for (const f of excess)
    await unlink(f.path).catch((e: unknown) => {
      if ((e as { code?: unknown }).code !== 'ENOENT') throw e;
    });
  return excess.map((f) => f.path);
}

/** Start of the time bucket holding `ms`; buckets align to the epoch (hourly rotation turns at :00 UTC). */
export function bucketStart(ms: number, everyMinutes: number): number {
  const size = everyMinutes * 60_000;
  return Math.floor(ms / size) * size;
}
