/**
 * Generic HTTP sink: a JSON array (or NDJSON) per request. 2xx acknowledges the whole
 * request; 408/429/5xx are retried; 401/403 are fatal; any other status rejects the
 * request's events with code `http_<status>` (a plain HTTP receiver gives no per-event
 * verdict). At-least-once: a retried request may arrive twice.
 */
import type { AuditEvent } from '../../event.ts';
import { chunkEvents } from '../batcher.ts';
import type { SinkContext } from '../context.ts';
import { HttpSinkBase, type SinkCredentials } from '../http-sink-base.ts';
import { authError, classifyStatus, retryAfterMs, type AttemptOutcome } from '../http-transport.ts';
import { readSecret } from '../secrets.ts';
import type { RejectedEvent, WriteResult } from '../sink.ts';
import { joinPath } from '../url.ts';
import type { HttpSinkConfig } from './config.ts';
import { CONTENT_TYPES, encodeBody, encodeDoc } from './encoder.ts';

/** `ok`, or the refusing status with the server's (scrubbed) explanation. */
type Verdict = 'ok' | { status: number; detail: string };

export class HttpSink extends HttpSinkBase<HttpSinkConfig> {
  readonly idempotent = false;

  constructor(config: HttpSinkConfig, ctx: SinkContext) {
    super('http', config, ctx);
  }

  protected async credentials(): Promise<SinkCredentials> {
    const { config, ctx } = this;
    const secrets: string[] = [];
    const headers: Record<string, string> = { ...lowerKeys(config.headers), 'content-type': CONTENT_TYPES[config.format] };
    if (config.auth?.type === 'bearer') {
      const token = await readSecret(config.auth.token, config.auth.tokenFile, ctx.configDir, `sink ${config.name}: auth.token`);
      secrets.push(token);
      headers['authorization'] = `Bearer ${token}`;
    } else if (config.auth?.type === 'basic') {
      const password = await readSecret(
        config.auth.password,
        config.auth.passwordFile,
        ctx.configDir,
        `sink ${config.name}: auth.password`,
      );
      const basic = Buffer.from(`${config.auth.username}:${password}`).toString('base64');
      secrets.push(password, basic);
      headers['authorization'] = `Basic ${basic}`;
    }
    return { headers, secrets };
  }

  async write(events: AuditEvent[], signal?: AbortSignal): Promise<WriteResult> {
    const transport = this.openTransport();
    let delivered = 0;
    const rejected: RejectedEvent[] = [];
    for (const chunk of chunkEvents(events, encodeDoc, this.config.batch)) {
      rejected.push(...chunk.rejected);
      if (chunk.events.length === 0) continue;
      const req = await transport.prepare({
        method: this.config.method,
        path: joinPath(this.url, ''),
        headers: this.headers,
        body: encodeBody(chunk.payloads, this.config.format),
        gzip: this.config.compression === 'gzip',
      });
      const n = chunk.events.length;
      const verdict = await transport.run(
        `${this.config.method} ${n} events`,
        async (): Promise<AttemptOutcome<Verdict>> => {
          const res = await transport.send(req, signal);
          const c = classifyStatus(res);
          if (c === 'ok') return { done: 'ok', result: 'ok', events: n };
          if (c === 'auth')
            throw authError(this.name, this.type, res.status, 'auth.token / auth.tokenFile or auth.password / auth.passwordFile');
          if (c === 'retry') return { retry: `HTTP ${res.status}`, retryAfterMs: retryAfterMs(res), events: n };
          return { done: { status: res.status, detail: transport.quote(res.text) }, result: 'rejected', events: n };
        },
        signal,
      );
      if (verdict === 'ok') {
        delivered += n;
      } else {
        const reason = `HTTP ${verdict.status}${verdict.detail ? `: ${verdict.detail}` : ''}`;
        for (const event of chunk.events) rejected.push({ event, code: `http_${verdict.status}`, reason });
      }
    }
    this.instrument.delivered(delivered);
    this.instrument.rejected(rejected);
    return { delivered, rejected };
  }
}

function lowerKeys(h: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
}
