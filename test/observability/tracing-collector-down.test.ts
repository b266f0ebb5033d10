/**
 * A collector that refuses the spans (HTTP 401: a wrong key in the headers file) costs the
 * daemon nothing but one warning line a minute: the spans are dropped, the work goes on, and
 * the line names neither the key nor the header.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.ts';
import { startTracing } from '../../src/observability/tracing/start.ts';
import { withSpan } from '../../src/observability/tracing/spans.ts';
import { startHttpReceiver } from '../helpers/receivers/http-receiver.ts';
import { waitFor } from '../helpers/daemon-harness.ts';

const WRONG_KEY = 'wrong-collector-key-41c9e2d7b5';

describe('a collector refusing the spans', () => {
  it('a 401 from the collector is one warning without the key, and the traced work still completes', async () => {
    const collector = await startHttpReceiver(() => ({ status: 401, body: { error: `bad key ${WRONG_KEY}` } }));
    const dir = mkdtempSync(join(tmpdir(), 'tracing-down-'));
    try {
      writeFileSync(join(dir, 'headers'), `authorization=Bearer%20${WRONG_KEY}`);
      process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] = collector.url;
      process.env['OTEL_EXPORTER_OTLP_HEADERS_FILE'] = join(dir, 'headers');
      process.env['OTEL_BSP_SCHEDULE_DELAY'] = '20';
      const chunks: string[] = [];
      const destination = new Writable({
        write(chunk: Buffer, _enc, done) {
          chunks.push(chunk.toString('utf8'));
          done();
        },
      });
      const logger = createLogger({ level: 'info', destination });
      const tracing = await startTracing(logger);
      const results = [];
      // Three runs, each exported (and refused) on its own.
      for (let i = 0; i < 3; i++) {
        results.push(await withSpan('reconcile run', { 'scimsync.tenant': 'acme' }, async () => i));
        await waitFor(() => collector.requests.length > i, 'the export of the span');
      }
      expect(results).toEqual([0, 1, 2]);
      await tracing?.shutdown();
      // The collector was asked, with the key from the file.
      expect(collector.requests.length).toBeGreaterThan(0);
      expect(collector.requests[0]?.headers['authorization']).toBe(`Bearer ${WRONG_KEY}`);
      const lines = chunks.join('').split('\n').filter(Boolean);
      const warnings = lines.filter((l) => l.includes('tracing: the OTLP exporter reports a problem'));
      expect(warnings).toHaveLength(1);
      expect(lines.join('\n')).not.toContain(WRONG_KEY);
    } finally {
      await collector.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
