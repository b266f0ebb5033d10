/**
 * HTTP sinks against a receiver that misbehaves on the socket: a response body that never
 * ends (past the sink's response cap), a chunked body cut short, a reset right after the
 * request. Each write fails classified after the sink's retries; no socket or body error
 * escapes as an unhandled `error` event (vitest fails a file on one).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isSyncError } from '../../../src/errors.ts';
import { answer, startHostileServer, type HostileServer, type Responder } from '../../helpers/hostile-http.ts';
import { FAST_RETRY, makeEvents, openSink, rejectionOf } from './fixtures.ts';

let server: HostileServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const SINKS = {
  http: (url: string) => ({ name: 'collector', type: 'http' as const, url: `${url}/ingest`, allowInsecureHttp: true, retry: FAST_RETRY }),
  'splunk-hec': (url: string) => ({
    name: 'splunk',
    type: 'splunk-hec' as const,
    url,
    token: 'hostile-hec-token-7f3a',
    allowInsecureHttp: true,
    retry: FAST_RETRY,
  }),
  elasticsearch: (url: string) => ({ name: 'es', type: 'elasticsearch' as const, url, allowInsecureHttp: true, retry: FAST_RETRY }),
};

const FAULTS: Record<string, Responder> = {
  'a response body that never ends': answer.endlessLine('application/json', '{"text":"'),
  'a chunked response cut short': answer.chunked('application/json', ['{"items":[', '{"index":'], false),
  'a reset right after the request': (io) => io.destroy(),
};

describe('HTTP sinks against a hostile receiver', () => {
  for (const [type, config] of Object.entries(SINKS)) {
    for (const [fault, respond] of Object.entries(FAULTS)) {
      it(`${type}: ${fault} fails the write, classified`, async () => {
        server = await startHostileServer(respond);
        const sink = await openSink(config(server.url));
        try {
          const err = await rejectionOf(sink.write(makeEvents(2)));
          expect(isSyncError(err)).toBe(true);
          expect(err.kind).toBe('transient');
          expect(server.requests.length).toBe(FAST_RETRY.maxAttempts);
        } finally {
          await sink.close();
        }
      });
    }
  }
});
