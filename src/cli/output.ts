/**
 * Terminal output helpers. Colour only when the stream is a terminal and NO_COLOR is not
 * set (node:util styleText checks both); JSON output is never coloured.
 */
import { styleText } from 'node:util';

export type Style = Parameters<typeof styleText>[0];

export function paint(style: Style, text: string, stream: NodeJS.WriteStream = process.stdout): string {
  return styleText(style, text, { stream });
}

export function printJson(value: unknown, stream: NodeJS.WritableStream = process.stdout): void {
  stream.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Text is handed to the stream in pieces of about this size. */
const CHUNK = 64 * 1024;

/**
 * The same text as printJson (`JSON.stringify(value, null, 2)` and a newline), written piece
 * by piece as it is produced: a plan of 100,000 creates is ~100 MB of JSON, which as one
 * string (and its encoded copy on the way out) would be the largest thing the process holds.
 * Waits for 'drain' when the stream asks for it.
 */
export async function streamJson(value: unknown, stream: NodeJS.WritableStream = process.stdout): Promise<void> {
  for (const piece of jsonPieces(value)) {
    if (!stream.write(piece)) await new Promise<void>((resolve) => stream.once('drain', resolve));
  }
}

/** What JSON.stringify serializes a value as (its toJSON), before the replacer-free rules. */
function jsonValue(v: unknown): unknown {
  return v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function'
    ? (v as { toJSON(): unknown }).toJSON()
    : v;
}

const omitted = (v: unknown): boolean => v === undefined || typeof v === 'function' || typeof v === 'symbol';

/** Arrays longer than this are written entry by entry; anything smaller in one JSON.stringify (faster). */
const LONG = 256;

function isLong(x: object): boolean {
  if (Array.isArray(x)) return x.length > LONG;
  for (const v of Object.values(x)) if (Array.isArray(v) && v.length > LONG) return true;
  return false;
}

type Frame = { items: unknown[]; keys: string[] | undefined; next: number; indent: string };

/** `JSON.stringify(value, null, 2)` + newline, in pieces of ~CHUNK characters. */
export function* jsonPieces(value: unknown): Generator<string> {
  let buf = '';
  // Iterative: one frame per open array or object, so neither depth nor length costs more.
  const stack: Frame[] = [];
  const open = (v: unknown, indent: string, inArray: boolean): void => {
    const x = jsonValue(v);
    if (x === null || typeof x !== 'object') {
      const text = omitted(x) ? undefined : JSON.stringify(x);
      buf += text ?? (inArray ? 'null' : '');
      return;
    }
    if (indent !== '' && !isLong(x)) {
      buf += (JSON.stringify(x, null, 2) as string).replaceAll('\n', `\n${indent}`);
      return;
    }
    if (Array.isArray(x)) {
      if (x.length === 0) buf += '[]';
      else {
        buf += '[';
        stack.push({ items: x, keys: undefined, next: 0, indent });
      }
      return;
    }
    const keys: string[] = [];
    const items: unknown[] = [];
    for (const [k, el] of Object.entries(x as Record<string, unknown>)) {
      const j = jsonValue(el);
      if (omitted(j)) continue;
      keys.push(k);
      items.push(j);
    }
    if (keys.length === 0) buf += '{}';
    else {
      buf += '{';
      stack.push({ items, keys, next: 0, indent });
    }
  };
  open(value, '', false);
  while (stack.length > 0) {
    const f = stack[stack.length - 1] as Frame;
    const inner = `${f.indent}  `;
    if (f.next === f.items.length) {
      stack.pop();
      buf += `\n${f.indent}${f.keys ? '}' : ']'}`;
    } else {
      const i = f.next++;
      buf += `${i === 0 ? '' : ','}\n${inner}`;
      if (f.keys) buf += `${JSON.stringify(f.keys[i])}: `;
      open(f.items[i], inner, f.keys === undefined);
    }
    if (buf.length >= CHUNK) {
      yield buf;
      buf = '';
    }
  }
  yield `${buf}\n`;
}

export function printLines(lines: readonly string[], stream: NodeJS.WritableStream = process.stdout): void {
  if (lines.length > 0) stream.write(`${lines.join('\n')}\n`);
}

/** `key   value` rows with the keys padded to one column. */
export function table(rows: ReadonlyArray<readonly [string, string]>): string[] {
  const width = Math.max(0, ...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`);
}
