/**
 * The digest of a window's events: how many, and an order-independent hash of their keys —
 * the sum, modulo 2^128, of the first 128 bits of each key's SHA-256 (of the key itself when it
 * is one: 64 hex digits, the row hash of an export without an id column). A sum (not an XOR)
 * is a multiset hash: an event counted twice changes it, and any subset of events sums to
 * something else than the whole with overwhelming probability. Digests add up: a window
 * exported in pieces (runs, checkpoints) has the sum of its pieces' digests, which is how
 * the state records it commit by commit and how `audit verify` compares it with a re-export.
 */
import { hash } from 'node:crypto';

const TWO32 = 4_294_967_296;

export interface WindowDigest {
  /** Grid window, epoch ms: `[startMs, endMs)`, `startMs` a multiple of the window length. */
  startMs: number;
  endMs: number;
  count: number;
  /** 32 hex digits: the sum of the keys' hashes, modulo 2^128. */
  hash: string;
}

export const ZERO_HASH = '0'.repeat(32);

/** 128 bits as four 32-bit limbs, most significant first. */
type Limbs = [number, number, number, number];

function limbsOf(hex: string): Limbs {
  return [0, 1, 2, 3].map((i) => Number.parseInt(hex.slice(i * 8, i * 8 + 8), 16) || 0) as Limbs;
}

function hexOf(l: Limbs): string {
  return l.map((v) => v.toString(16).padStart(8, '0')).join('');
}

function addInto(t: Limbs, a: number, b: number, c: number, d: number): void {
  let s = t[3] + d;
  let carry = s >= TWO32 ? 1 : 0;
  t[3] = s - carry * TWO32;
  s = t[2] + c + carry;
  carry = s >= TWO32 ? 1 : 0;
  t[2] = s - carry * TWO32;
  s = t[1] + b + carry;
  carry = s >= TWO32 ? 1 : 0;
  t[1] = s - carry * TWO32;
  s = t[0] + a + carry;
  t[0] = s >= TWO32 ? s - TWO32 : s;
}

/** a + b modulo 2^128, as hex. */
export function addHash(a: string, b: string): string {
  const t = limbsOf(a);
  const [w, x, y, z] = limbsOf(b);
  addInto(t, w, x, y, z);
  return hexOf(t);
}

/** a − b modulo 2^128, as hex. */
export function subHash(a: string, b: string): string {
  // −b = (~b) + 1 modulo 2^128.
  const neg = limbsOf(b).map((v) => TWO32 - 1 - v) as Limbs;
  addInto(neg, 0, 0, 0, 1);
  return addHash(a, hexOf(neg));
}

/** The element of a key that is 64 lowercase hex digits (a SHA-256), as limbs into `out`; false for any other key. */
function hexElement(key: string, out: Limbs): boolean {
  if (key.length !== 64) return false;
  let v = 0;
  for (let i = 0; i < 64; i++) {
    const c = key.charCodeAt(i);
    const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1;
    if (d < 0) return false;
    if (i < 32) {
      v = v * 16 + d;
      if (i % 8 === 7) {
        out[(i - 7) / 8] = v;
        v = 0;
      }
    }
  }
  return true;
}

/**
 * The element a key adds to a digest, as four 32-bit limbs: the first 128 bits of the SHA-256
 * of its UTF-8 bytes, or of the key itself when it already is a SHA-256 (the row hash of an
 * export without an id column: hashing it again would add a second SHA-256 per event to the
 * export's CPU for no gain in spread).
 */
function elementLimbs(key: string, out: Limbs): void {
  if (hexElement(key, out)) return;
  const h = hash('sha256', key, 'buffer');
  out[0] = h.readUInt32BE(0);
  out[1] = h.readUInt32BE(4);
  out[2] = h.readUInt32BE(8);
  out[3] = h.readUInt32BE(12);
}

/** The element of a key as 32 hex digits. */
export function keyElement(key: string): string {
  const out: Limbs = [0, 0, 0, 0];
  elementLimbs(key, out);
  return hexOf(out);
}

interface Acc {
  endMs: number;
  count: number;
  sum: Limbs;
}

/** Digests of keys, per window of a fixed grid (`windowMs` since the epoch). */
export class DigestAccumulator {
  readonly windowMs: number;
  private windows = new Map<number, Acc>();
  /** Scratch limbs of the key being added. */
  private readonly element: Limbs = [0, 0, 0, 0];

  constructor(windowMs: number) {
    this.windowMs = windowMs;
  }

  get empty(): boolean {
    return this.windows.size === 0;
  }

  add(key: string, timestampMs: number): void {
    const e = this.element;
    elementLimbs(key, e);
    const startMs = Math.floor(timestampMs / this.windowMs) * this.windowMs;
    let acc = this.windows.get(startMs);
    if (!acc) {
      acc = { endMs: startMs + this.windowMs, count: 0, sum: [0, 0, 0, 0] };
      this.windows.set(startMs, acc);
    }
    acc.count++;
    addInto(acc.sum, e[0], e[1], e[2], e[3]);
  }

  /** The digests so far, by window start, and a fresh start. */
  take(): WindowDigest[] {
    const out = this.peek();
    this.windows = new Map();
    return out;
  }

  peek(): WindowDigest[] {
    return [...this.windows]
      .sort((a, b) => a[0] - b[0])
      .map(([startMs, a]) => ({ startMs, endMs: a.endMs, count: a.count, hash: hexOf(a.sum) }));
  }
}

/** The digests of `pairs`' keys per window (keys starting with `skipPrefix` left out). */
export function digestsOf(pairs: Iterable<readonly [string, number]>, windowMs: number, skipPrefix?: string): WindowDigest[] {
  const acc = new DigestAccumulator(windowMs);
  for (const [k, ts] of pairs) if (skipPrefix === undefined || !k.startsWith(skipPrefix)) acc.add(k, ts);
  return acc.take();
}

/** Sum (sign 1) or difference (sign −1) of two digest lists, per window start. */
export function combineDigests(a: readonly WindowDigest[], b: readonly WindowDigest[], sign: 1 | -1): WindowDigest[] {
  const out = new Map<number, WindowDigest>();
  for (const d of a) out.set(d.startMs, { ...d });
  for (const d of b) {
    const cur = out.get(d.startMs) ?? { startMs: d.startMs, endMs: d.endMs, count: 0, hash: ZERO_HASH };
    out.set(d.startMs, {
      startMs: d.startMs,
      endMs: d.endMs,
      count: cur.count + sign * d.count,
      hash: sign === 1 ? addHash(cur.hash, d.hash) : subHash(cur.hash, d.hash),
    });
  }
  return [...out.values()].sort((x, y) => x.startMs - y.startMs);
}
