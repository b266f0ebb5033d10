/**
 * Small deterministic PRNGs: generated data must be identical for the same seed on every run,
 * and an audit event must be regenerable from (seed, index) alone, without keeping state.
 */

/** mulberry32: fast 32-bit generator, returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Mixes two integers into a well-distributed 32-bit seed (murmur3 finalizer). */
export function mix(a: number, b: number): number {
  let h = (Math.imul(a >>> 0, 0x9e3779b1) ^ (b >>> 0) ^ Math.imul(Math.floor(b / 4294967296), 0x85ebca6b)) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export function pick<T>(rnd: () => number, items: readonly T[]): T {
  return items[Math.floor(rnd() * items.length)] as T;
}

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

/** 8 hex digits of a 32-bit value (table lookup: this runs once per audit row). */
export function hex8(v: number): string {
  return HEX[(v >>> 24) & 255]! + HEX[(v >>> 16) & 255]! + HEX[(v >>> 8) & 255]! + HEX[v & 255]!;
}

/** A v4-UUID-shaped id from four 32-bit values. */
export function uuidFromWords(a: number, b: number, c: number, d: number): string {
  const h2 = hex8(b);
  const h3 = hex8(c);
  return `${hex8(a)}-${h2.slice(0, 4)}-4${h2.slice(5, 8)}-${'89ab'[(c >>> 28) & 3]}${h3.slice(1, 4)}-${h3.slice(4, 8)}${hex8(d)}`;
}
