/** Dead letters written before events carried their JSON text still replay with their document. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileDeadLetterStore } from '../../src/audit/dead-letter/file-store.ts';
import type { DeadLetter } from '../../src/audit/dead-letter/store.ts';
import { replayDeadLetters } from '../../src/audit/replay.ts';
import { createSink, sinkConfigSchema } from '../../src/audit/sinks/registry.ts';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('audit replay of older dead letters', () => {
  it('sends the document of an entry that holds it as an object (no json text)', async () => {
    dir = mkdtempSync(join(tmpdir(), 'replay-legacy-'));
    const store = new FileDeadLetterStore(join(dir, 'state'));
    const legacy = { key: 'evt-1', timestampMs: 1_768_471_200_000, doc: { '@timestamp': '2026-01-15T10:00:00.000Z', note: 'old format' } };
    const letter: DeadLetter = {
      id: 'l1',
      sink: 'siem',
      atMs: 1,
      code: 'http_400',
      reason: 'HTTP 400',
      attempts: 0,
      event: legacy as unknown as DeadLetter['event'],
    };
    await store.add([letter]);
    const sink = createSink(sinkConfigSchema.parse({ type: 'file', name: 'siem', path: join(dir, 'out.ndjson') }), { configDir: dir });
    const summary = await replayDeadLetters({ tenant: 't', deadLetters: store, sinks: [sink] }, 'siem');
    expect(summary).toMatchObject({ taken: 1, delivered: 1, rejectedAgain: 0 });
    const lines = readFileSync(join(dir, 'out.ndjson'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toEqual([{ _key: 'evt-1', _ts: legacy.timestampMs, ...legacy.doc }]);
  });
});
