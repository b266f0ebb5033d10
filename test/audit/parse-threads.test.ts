/**
 * readCsv over its parse threads: threads reused across bodies, concurrent bodies kept
 * apart, handler and stream failures (and a reader that still works after them), and
 * backpressure all the way to the body.
 */
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it, vi } from 'vitest';

/** Parse threads started so far (the pool's Worker, counted), and the last one. */
const started = vi.hoisted(() => ({ n: 0, last: undefined as { terminate(): Promise<number> } | undefined }));
vi.mock('node:worker_threads', async (importOriginal) => {
  const orig = await importOriginal<typeof import('node:worker_threads')>();
  class CountingWorker extends orig.Worker {
    constructor(...args: ConstructorParameters<typeof orig.Worker>) {
      super(...args);
      started.n++;
      started.last = this;
    }
  }
  return { ...orig, default: { ...orig, Worker: CountingWorker }, Worker: CountingWorker };
});

const { readCsv } = await import('../../src/audit/csv/read-csv.ts');
const { closeParseThreads } = await import('../../src/audit/csv/parse-threads.ts');
const { SyncError } = await import('../../src/platform/errors.ts');
type CsvHandler = import('../../src/audit/csv/read-csv.ts').CsvHandler;

afterAll(async () => {
  await closeParseThreads();
});

interface Got {
  header: string[] | undefined;
  rows: Array<{ values: string[]; line: number }>;
  bad: Array<{ line: number; raw: string }>;
}

function recorder(got: Got = { header: undefined, rows: [], bad: [] }, slow = false): { got: Got; handler: CsvHandler } {
  const tick = (): Promise<void> => new Promise((r) => setImmediate(r));
  return {
    got,
    handler: {
      header: (cells) => void (got.header = cells),
      row: (values, line) => {
        got.rows.push({ values, line });
        return slow && line % 3 === 0 ? tick() : undefined;
      },
      bad: (b) => void got.bad.push({ line: b.line, raw: b.raw }),
    },
  };
}

function chunked(text: string, size: number): Readable {
  const buf = Buffer.from(text, 'utf8');
  const parts: Buffer[] = [];
  for (let i = 0; i < buf.length; i += size) parts.push(buf.subarray(i, i + size));
  return Readable.from(parts);
}

/** A body of `n` rows tagged with `tag`, and what readCsv should make of it. */
function body(tag: string, n: number): { text: string; expected: Got } {
  let text = 'id,tag,v\n';
  const rows: Got['rows'] = [];
  for (let i = 0; i < n; i++) {
    text += `${i},${tag},"v ${i}, é"\n`;
    rows.push({ values: [String(i), tag, `v ${i}, é`], line: i + 2 });
  }
  text += `${tag} ragged\n`;
  return { text, expected: { header: ['id', 'tag', 'v'], rows, bad: [{ line: n + 2, raw: `${tag} ragged` }] } };
}

describe('parse threads', () => {
  it('reuses one thread over many sequential bodies, each read correctly', async () => {
    await readCsv(chunked('a\n1\n', 4), recorder().handler); // a thread in the pool
    const before = started.n;
    expect(before).toBeGreaterThan(0); // the count sees the pool's threads
    for (let i = 0; i < 20; i++) {
      const { text, expected } = body(`b${i}`, 5 + i * 3);
      const { got, handler } = recorder();
      await readCsv(chunked(text, 7 + i), handler);
      expect(got, `body ${i}`).toEqual(expected);
    }
    expect(started.n - before).toBe(0);
  });

  it('keeps two concurrent bodies apart, each with its own rows', async () => {
    const one = body('one', 400);
    const two = body('two', 300);
    const a = recorder(undefined, true);
    const b = recorder(undefined, true);
    await Promise.all([readCsv(chunked(one.text, 50), a.handler), readCsv(chunked(two.text, 33), b.handler)]);
    expect(a.got).toEqual(one.expected);
    expect(b.got).toEqual(two.expected);
  });

  it('rejects with the handler’s own error, and the next body still reads', async () => {
    const { text } = body('t', 2000);
    const boom = new Error('sink broke');
    let seen = 0;
    const handler: CsvHandler = {
      header: () => undefined,
      row: () => {
        if (++seen === 500) throw boom;
      },
      bad: () => undefined,
    };
    await expect(readCsv(chunked(text, 64), handler)).rejects.toBe(boom);
    expect(seen).toBe(500);
    // Async rejection, from the header.
    const early = new Error('no header for you');
    await expect(
      readCsv(chunked(text, 64), {
        header: () => {
          throw early;
        },
        row: () => undefined,
        bad: () => undefined,
      }),
    ).rejects.toBe(early);
    const async = new Error('async sink broke');
    await expect(readCsv(chunked(text, 64), { header: () => undefined, row: (_v, line) => (line === 40 ? Promise.reject(async) : undefined), bad: () => undefined })).rejects.toBe(async);
    const next = body('after', 50);
    const r = recorder();
    await readCsv(chunked(next.text, 16), r.handler);
    expect(r.got).toEqual(next.expected);
  });

  it('rejects a body that breaks off with a transient SyncError, and the next body still reads', async () => {
    const { text } = body('x', 200);
    const buf = Buffer.from(text);
    async function* breaking(): AsyncGenerator<Buffer> {
      for (let i = 0; i < 40; i++) yield buf.subarray(i * 64, (i + 1) * 64);
      throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    }
    const r = recorder();
    const err = await readCsv(Readable.from(breaking()), r.handler).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SyncError);
    expect(err).toMatchObject({ kind: 'transient', code: 'E_TRANSIENT', message: expect.stringContaining('ECONNRESET') });
    expect(r.got.header).toEqual(['id', 'tag', 'v']);
    // What was handled before the break was in order.
    r.got.rows.forEach((row, i) => expect(row.values[0]).toBe(String(i)));

    // A stream destroyed with an error while the reader waits for it.
    const stalled = new Readable({ read() {} });
    stalled.push('a,b\n1,2\n');
    setTimeout(() => stalled.destroy(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' })), 20);
    await expect(readCsv(stalled, recorder().handler)).rejects.toMatchObject({ kind: 'transient', code: 'E_TRANSIENT' });

    const next = body('after', 30);
    const r2 = recorder();
    await readCsv(chunked(next.text, 10), r2.handler);
    expect(r2.got).toEqual(next.expected);
  });

  it('stops pulling the body while the handler holds the first row, then reads it all once released', async () => {
    const rows = 1000;
    const line = (i: number): string => `${String(i).padStart(6, '0')},${'x'.repeat(56)}\n`; // 64 bytes
    expect(Buffer.byteLength(line(0))).toBe(64);
    let pulled = 0;
    async function* source(): AsyncGenerator<Buffer> {
      yield Buffer.from('id,data\n');
      for (let i = 0; i < rows; i++) {
        pulled++;
        yield Buffer.from(line(i));
      }
    }
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let firstRow!: () => void;
    const firstRowSeen = new Promise<void>((r) => (firstRow = r));
    const got: string[] = [];
    const done = readCsv(Readable.from(source()), {
      header: () => undefined,
      row: (values) => {
        got.push(values[0] as string);
        if (got.length === 1) {
          firstRow();
          return gate;
        }
        return undefined;
      },
      bad: () => undefined,
    });
    await firstRowSeen;
    // Wait until the reader has stopped pulling (stable for 100 ms; a loaded machine is slow to fill the pipeline).
    let whileBlocked = -1;
    for (let waited = 0; waited < 3000 && pulled !== whileBlocked; waited += 100) {
      whileBlocked = pulled;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(pulled).toBe(whileBlocked); // it stopped
    // Bounded: the parse thread's MAX_AHEAD chunks plus the stream's own small buffer, not the body.
    expect(whileBlocked).toBeLessThan(40);
    expect(got).toHaveLength(1);
    release();
    await done;
    expect(pulled).toBe(rows);
    expect(got).toEqual(Array.from({ length: rows }, (_, i) => String(i).padStart(6, '0')));
  });

  it('reports a handler error without waiting for a stalled body to send more', async () => {
    const stalled = new Readable({ read() {} });
    stalled.push('a,b\n1,2\n3,4\n'); // then nothing more, and no end
    const boom = new Error('sink broke');
    const result = readCsv(stalled, {
      header: () => undefined,
      row: () => {
        throw boom;
      },
      bad: () => undefined,
    }).then(
      () => 'resolved',
      (e: unknown) => e,
    );
    const timeout = new Promise((r) => setTimeout(() => r('still waiting after 1 s'), 1000));
    const outcome = await Promise.race([result, timeout]);
    stalled.destroy();
    await result;
    expect(outcome).toBe(boom);
    expect(stalled.destroyed).toBe(true);
  });

  it('turns a parse thread that dies mid-body into a transient error, and starts a new one for the next body', async () => {
    await closeParseThreads(); // the next read starts its own thread
    const { text } = body('crash', 3000);
    let rows = 0;
    const err = await readCsv(chunked(text, 256), {
      header: () => undefined,
      row: () => {
        // The thread goes away while the reader is still handing it chunks.
        if (++rows === 100) void started.last?.terminate();
        return rows % 50 === 0 ? new Promise((r) => setTimeout(r, 5)) : undefined;
      },
      bad: () => undefined,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SyncError);
    expect(err).toMatchObject({ kind: 'transient', code: 'E_TRANSIENT', message: expect.stringContaining('ERR_PARSE_THREAD_EXIT') });
    const before = started.n;
    const next = body('after-crash', 40);
    const r = recorder();
    await readCsv(chunked(next.text, 32), r.handler);
    expect(r.got).toEqual(next.expected);
    expect(started.n).toBe(before + 1);
  });
});
