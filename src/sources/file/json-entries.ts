/**
 * Reads a JSON directory file `{ "users": [...], "groups": [...] }` entry by entry, from
 * the bytes as they are read: the top level (the mapping, its keys, the two lists) is
 * followed here byte by byte, and each list entry, once its closing byte has arrived, is
 * decoded and parsed alone with JSON.parse, which checks it fully. Neither the whole text
 * nor the whole parsed tree is ever held: at most one entry's text and its object.
 *
 * Only the boundaries are found here (strings, escapes and nesting depth); JSON.parse
 * judges each entry, so every entry is exactly what JSON.parse of the whole file gave.
 * Structural bytes are ASCII and never occur inside a UTF-8 sequence, so the bytes can be
 * scanned before they are decoded.
 *
 * The top level is checked as it arrives, with the same SourceErrors as the YAML read
 * (top-level.ts): not a mapping, an unknown key (with a suggestion), a key given twice
 * (JSON.parse kept the last silently), a value that is not a list, a list missing at the
 * end. Invalid or truncated JSON fails the whole read, naming the entry and byte offset.
 *
 * Pays for: bench:sources, "The file source at scale": JSON.parse of the whole text held
 * the text, its tree and the normalized copy at once (100,000 users: peak RSS 283 → 222 MB;
 * 1,000,000: 1,442 → 817 MB; CPU time the same). The ecosystem's streaming parsers were measured first, in the
 * same runs, at 100,000 users: stream-json 3.8 (tokenizer + Assembler per entry) took ~20%
 * more CPU than the whole-text read, peaked higher (329 vs 301 MB) and kept 23 MB more live,
 * its strings being slices of its input chunks; @streamparser/json took about twice stream-json's CPU.
 */
import { SourceError } from '../../errors.ts';
import { isListKey, notAList, notAMapping, TOP_LEVEL_KEYS, unknownKey, type ListKey } from './top-level.ts';

export type OnEntry = (list: ListKey, raw: unknown, index: number) => void;

/**
 * Where the reader is: `open` before the `{`; `key`/`nextKey` before a key (the first may
 * be `}` instead); `inKey` inside one; `colon`; `list` before its `[`; `firstEntry` after
 * the `[` (or `]`); `entry` inside an entry; `afterList` after the `]`; `end` after the `}`.
 */
type State = 'open' | 'key' | 'nextKey' | 'inKey' | 'colon' | 'list' | 'firstEntry' | 'entry' | 'afterList' | 'end';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const VALUE_START = /["[\-\dtfn]/;
const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

export class JsonEntryReader {
  private state: State = 'open';
  private readonly seen = new Set<ListKey>();
  private list: ListKey = 'users';
  private index = 0;
  /** Bytes of the value being read (an entry or a key) from earlier chunks. */
  private pieces: Buffer[] = [];
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Bytes of the file before the current chunk. */
  private offset = 0;
  private readonly describe: string;
  private readonly onEntry: OnEntry;

  constructor(describe: string, onEntry: OnEntry) {
    this.describe = describe;
    this.onEntry = onEntry;
  }

  /** The next bytes of the file. */
  write(chunk: Buffer): void {
    let i = 0;
    // A byte-order mark, which JSON.parse of the decoded text used to refuse, is skipped.
    if (this.offset === 0 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) i = 3;
    let start = this.state === 'entry' || this.state === 'inKey' ? 0 : -1;
    const n = chunk.length;
    while (i < n) {
      if (this.state === 'entry') {
        const end = this.scanEntry(chunk, i);
        if (end === n) break;
        this.entry(chunk, start, end);
        start = this.state === 'entry' ? end + 1 : -1;
        i = end + 1;
        continue;
      }
      if (this.state === 'inKey') {
        const end = this.scanString(chunk, i);
        if (end === n) break;
        this.key(chunk, start, end + 1);
        start = -1;
        i = end + 1;
        continue;
      }
      const c = chunk[i] as number;
      if (isSpace(c)) {
        i++;
        continue;
      }
      switch (this.state) {
        case 'open':
          // Another JSON value (a list, a string, a number…) is not a directory.
          if (c !== OPEN_BRACE) throw VALUE_START.test(String.fromCharCode(c)) ? notAMapping(this.describe) : this.invalid(i);
          this.state = 'key';
          break;
        case 'key':
        case 'nextKey':
          if (c === CLOSE_BRACE && this.state === 'key') this.state = 'end';
          else if (c === QUOTE) {
            this.state = 'inKey';
            start = i;
          } else throw this.invalid(i);
          break;
        case 'colon':
          if (c !== COLON) throw this.invalid(i);
          this.state = 'list';
          break;
        case 'list':
          if (c !== OPEN_BRACKET) throw notAList(this.describe, this.list);
          this.state = 'firstEntry';
          this.index = 0;
          break;
        case 'firstEntry':
          if (c === CLOSE_BRACKET) this.state = 'afterList';
          else {
            this.state = 'entry';
            start = i;
            continue; // the entry's first byte is scanned as part of it
          }
          break;
        case 'afterList':
          if (c === COMMA) this.state = 'nextKey';
          else if (c === CLOSE_BRACE) this.state = 'end';
          else throw this.invalid(i);
          break;
        case 'end':
          throw this.invalid(i, 'content after the end of the document');
      }
      i++;
    }
    if (start >= 0 && (this.state === 'entry' || this.state === 'inKey')) this.pieces.push(start === 0 ? chunk : chunk.subarray(start));
    this.offset += n;
  }

  /** The end of the file: a document that is not complete fails here. */
  end(): void {
    if (this.state !== 'end') {
      const within = this.state === 'entry' ? ` in ${this.list}[${this.index}]` : '';
      throw new SourceError(`${this.describe}: not valid JSON (the file ends${within} before the document does)`);
    }
    for (const key of TOP_LEVEL_KEYS) if (!this.seen.has(key)) throw notAList(this.describe, key);
  }

  /** Index of the byte that ends the entry (`,` or `]` outside any string or nesting), or `chunk.length`. */
  private scanEntry(chunk: Buffer, from: number): number {
    let { depth, inString, escaped } = this;
    const n = chunk.length;
    let i = from;
    for (; i < n; i++) {
      const c = chunk[i] as number;
      if (inString) {
        if (escaped) escaped = false;
        else if (c === BACKSLASH) escaped = true;
        else if (c === QUOTE) inString = false;
      } else if (c === QUOTE) inString = true;
      else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        if (depth === 0) break;
        depth--;
      } else if (c === COMMA && depth === 0) break;
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    return i;
  }

  /** Index of the closing quote of the key being read, or `chunk.length`. */
  private scanString(chunk: Buffer, from: number): number {
    const n = chunk.length;
    for (let i = from; i < n; i++) {
      const c = chunk[i] as number;
      if (this.escaped) this.escaped = false;
      else if (c === BACKSLASH) this.escaped = true;
      else if (c === QUOTE) return i;
    }
    return n;
  }

  /** The bytes `[start, end)` of this chunk, after any earlier pieces of the same value. */
  private text(chunk: Buffer, start: number, end: number): string {
    if (this.pieces.length === 0) return chunk.toString('utf8', start, end);
    const text = Buffer.concat([...this.pieces, chunk.subarray(0, end)]).toString('utf8');
    this.pieces = [];
    return text;
  }

  private entry(chunk: Buffer, start: number, end: number): void {
    const at = this.offset + end;
    const text = this.text(chunk, start, end);
    const closing = chunk[end];
    if (closing === CLOSE_BRACE) throw this.invalid(end);
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (e) {
      throw new SourceError(`${this.describe}: not valid JSON in ${this.list}[${this.index}], before byte ${at} (${(e as Error).message})`);
    }
    this.onEntry(this.list, raw, this.index++);
    this.state = closing === CLOSE_BRACKET ? 'afterList' : 'entry';
    this.depth = 0;
  }

  private key(chunk: Buffer, start: number, end: number): void {
    let key: string;
    try {
      key = JSON.parse(this.text(chunk, start, end)) as string;
    } catch (e) {
      throw new SourceError(
        `${this.describe}: not valid JSON in a top-level key, before byte ${this.offset + end} (${(e as Error).message})`,
      );
    }
    if (!isListKey(key)) throw unknownKey(this.describe, key);
    if (this.seen.has(key)) throw new SourceError(`${this.describe}: top-level key "${key}" appears twice; refusing a partial read`);
    this.seen.add(key);
    this.list = key;
    this.state = 'colon';
  }

  private invalid(i: number, what?: string): SourceError {
    const where = this.state === 'afterList' && this.index > 0 ? ` after ${this.list}[${this.index - 1}]` : '';
    return new SourceError(`${this.describe}: not valid JSON${where} at byte ${this.offset + i} (${what ?? 'unexpected character'})`);
  }
}
