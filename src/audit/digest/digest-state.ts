/**
 * How a commit's digests change the stored ones — the file store applies it as written here,
 * the Redis store's commit script does the same in Lua (state/redis-digest.ts).
 */
import type { DigestCommit, DigestState } from '../state/store.ts';
import { addHash, type WindowDigest } from './window-digest.ts';

export function emptyDigestState(): DigestState {
  return { windowMs: null, sinceMs: null, windows: [] };
}

/** Digests as a map by window start (the form the file store keeps while it runs). */
export interface DigestMap {
  windowMs: number | null;
  sinceMs: number | null;
  windows: Map<number, WindowDigest>;
}

export function digestMapOf(s: DigestState): DigestMap {
  return { windowMs: s.windowMs, sinceMs: s.sinceMs, windows: new Map(s.windows.map((w) => [w.startMs, w])) };
}

export function digestStateOf(m: DigestMap): DigestState {
  return { windowMs: m.windowMs, sinceMs: m.sinceMs, windows: [...m.windows.values()].sort((a, b) => a.startMs - b.startMs) };
}

export function applyDigestCommit(m: DigestMap, d: DigestCommit): void {
  if (d.reset) {
    m.windows.clear();
    m.sinceMs = d.reset.sinceMs;
  }
  m.windowMs = d.windowMs;
  for (const w of d.add) {
    const cur = m.windows.get(w.startMs);
    m.windows.set(
      w.startMs,
      cur ? { startMs: w.startMs, endMs: w.endMs, count: cur.count + w.count, hash: addHash(cur.hash, w.hash) } : { ...w },
    );
  }
  for (const start of m.windows.keys()) if (start < d.pruneBeforeMs) m.windows.delete(start);
  if (m.sinceMs !== null && m.sinceMs < d.pruneBeforeMs) m.sinceMs = d.pruneBeforeMs;
}
