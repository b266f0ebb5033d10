import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, prettyStream, REDACT_PATHS } from '../../src/observability/logger.ts';
import { Secret } from '../../src/config/secret.ts';

function capture(): { stream: Writable; lines: () => string[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  return { stream, lines: () => chunks.join('').split('\n').filter(Boolean) };
}

const SECRETS = ['tok-top-1', 'tok-nested-2', 'pw-3', 'Bearer tok-hdr-4', 'key-5', 'tok-secret-6', 'pw-deep-7'];

describe('logger', () => {
  it('redacts tokens, passwords and authorization headers wherever they sit', () => {
    const { stream, lines } = capture();
    const log = createLogger({ level: 'info', destination: stream });
    log.info(
      {
        token: 'tok-top-1',
        platform: { baseUrl: 'https://acme.example.com', token: 'tok-nested-2' },
        redis: { password: 'pw-3' },
        req: { headers: { authorization: 'Bearer tok-hdr-4', 'x-api-key': 'key-5', accept: 'application/json' } },
        secrets: { platformToken: new Secret('tok-secret-6', 'platform.token') },
        a: { b: { bindPassword: 'pw-deep-7' } },
      },
      'request sent',
    );
    const [line] = lines();
    expect(line).toBeDefined();
    for (const s of SECRETS) expect(line).not.toContain(s);
    const rec = JSON.parse(line as string) as Record<string, any>;
    expect(rec['msg']).toBe('request sent');
    expect(rec['token']).toBe('[redacted]');
    expect(rec['platform']).toEqual({ baseUrl: 'https://acme.example.com', token: '[redacted]' });
    expect(rec['req'].headers).toEqual({ authorization: '[redacted]', 'x-api-key': '[redacted]', accept: 'application/json' });
    expect(rec['secrets'].platformToken).toBe('[redacted]');
    expect(rec['a'].b.bindPassword).toBe('[redacted]');
  });

  it('honours the level and writes JSON lines with numeric levels', () => {
    const { stream, lines } = capture();
    const log = createLogger({ level: 'warn', destination: stream });
    log.info('hidden');
    log.warn({ n: 1 }, 'shown');
    expect(lines().map((l) => JSON.parse(l) as { level: number; msg: string; n: number })).toEqual([
      expect.objectContaining({ level: 40, msg: 'shown', n: 1 }),
    ]);
  });

  it('pretty-prints redacted lines for a terminal', () => {
    const { stream, lines } = capture();
    const log = createLogger({ level: 'info', destination: prettyStream(stream) });
    log.info({ token: 'tok-top-1', users: 3 }, 'read source');
    const [line] = lines();
    expect(line).toMatch(/^\d\d:\d\d:\d\d INFO {2}read source token=\[redacted\] users=3$/);
  });

  it('exports its redaction paths', () => {
    expect(REDACT_PATHS).toEqual(
      expect.arrayContaining(['token', '*.token', 'password', '*.password', '*.headers.authorization', 'headers["x-api-key"]']),
    );
  });
});
