/**
 * Elasticsearch / OpenSearch `_bulk` sink. Idempotent: every event is a `create` with
 * `_id` = event key in an index chosen from the event's own timestamp, so a replayed
 * event answers 409 and counts as delivered. Throttled (429) or failing (5xx) items are
 * resent alone with backoff; other item errors are rejected as `es_<error.type>`.
 */
import type { AuditEvent } from '../../event.ts';
import { chunkEvents } from '../batcher.ts';
import type { SinkContext } from '../context.ts';
import { HttpSinkBase, type SinkCredentials } from '../http-sink-base.ts';
import { authError, classifyStatus, retryAfterMs, type AttemptOutcome } from '../http-transport.ts';
import { readSecret } from '../secrets.ts';
import type { RejectedEvent, WriteResult } from '../sink.ts';
import { joinPath } from '../url.ts';
import { parseBulkResponse } from './bulk-response.ts';
import type { ElasticsearchSinkConfig } from './config.ts';
import { encodeBulkCreate } from './encoder.ts';

export class ElasticsearchSink extends HttpSinkBase<ElasticsearchSinkConfig> {
  readonly idempotent = true;

  constructor(config: ElasticsearchSinkConfig, ctx: SinkContext) {
    super('elasticsearch', config, ctx);
  }

  protected async credentials(): Promise<SinkCredentials> {
    const { config, ctx } = this;
    const secrets: string[] = [];
    const headers: Record<string, string> = { 'content-type': 'application/x-ndjson', accept: 'application/json' };
    if (config.auth?.type === 'basic') {
      const password = await readSecret(
        config.auth.password,
        config.auth.passwordFile,
        ctx.configDir,
        `sink ${config.name}: auth.password`,
      );
      const basic = Buffer.from(`${config.auth.username}:${password}`).toString('base64');
      secrets.push(password, basic);
      headers['authorization'] = `Basic ${basic}`;
    } else if (config.auth?.type === 'api-key') {
      const apiKey = await readSecret(config.auth.apiKey, config.auth.apiKeyFile, ctx.configDir, `sink ${config.name}: auth.apiKey`);
      secrets.push(apiKey);
      headers['authorization'] = `ApiKey ${apiKey}`;
    }
    return { headers, secrets };
  }

  async write(events: AuditEvent[], signal?: AbortSignal): Promise<WriteResult> {
    const transport = this.openTransport();
    let delivered = 0;
    const rejected: RejectedEvent[] = [];
    const path = joinPath(this.url, `/_bulk${this.config.pipeline ? `?pipeline=${encodeURIComponent(this.config.pipeline)}` : ''}`);
    for (const chunk of chunkEvents(events, (e) => encodeBulkCreate(e, this.config.index), this.config.batch)) {
      rejected.push(...chunk.rejected);
      if (chunk.events.length === 0) continue;
      // Positions (in chunk) still owed a verdict; shrinks as items succeed or are rejected.
      let pending = chunk.events.map((_, i) => i);
      await transport.run(
        `POST /_bulk`,
        async (): Promise<AttemptOutcome<true>> => {
          const n = pending.length;
          const req = await transport.prepare({
            method: 'POST',
            path,
            headers: this.headers,
            body: Buffer.concat(pending.map((i) => chunk.payloads[i]!)),
            gzip: this.config.compression === 'gzip',
          });
          const res = await transport.send(req, signal);
          const status = classifyStatus(res);
          if (status === 'auth')
            throw authError(
              this.name,
              `${this.type}/${this.config.flavor}`,
              res.status,
              'auth.username + auth.password / auth.passwordFile or auth.apiKey / auth.apiKeyFile',
            );
          if (status === 'retry') return { retry: `HTTP ${res.status}`, retryAfterMs: retryAfterMs(res), events: n };
          if (status === 'reject') {
            const hint =
              res.status === 413 ? ' (request too large for the cluster: lower batch.maxBytes below http.max_content_length)' : '';
            const reason = `HTTP ${res.status}${hint}: ${transport.quote(res.text) || 'no detail'}`;
            for (const i of pending) rejected.push({ event: chunk.events[i]!, code: `http_${res.status}`, reason });
            pending = [];
            return { done: true, result: 'rejected', events: n };
          }
          const items = parseBulkResponse(res.text, n);
          if (!items) return { retry: `HTTP ${res.status} with an unreadable _bulk answer`, events: n };
          const still: number[] = [];
          let refused = 0;
          let throttled = 0;
          items.forEach((v, j) => {
            const i = pending[j]!;
            if (v.kind === 'delivered') delivered++;
            else if (v.kind === 'rejected') {
              refused++;
              rejected.push({ event: chunk.events[i]!, code: v.code, reason: transport.quote(v.reason, 500) });
            } else {
              if (v.status === 429) throttled++;
              still.push(i);
            }
          });
          pending = still;
          if (still.length > 0) return { retry: `${still.length} of ${n} items not accepted (${throttled} throttled)`, events: n };
          return { done: true, result: refused === 0 ? 'ok' : refused === n ? 'rejected' : 'partial', events: n };
        },
        signal,
      );
    }
    this.instrument.delivered(delivered);
    this.instrument.rejected(rejected);
    return { delivered, rejected };
  }
}
