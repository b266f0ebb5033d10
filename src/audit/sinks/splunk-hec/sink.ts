/**
 * Splunk HEC sink. A request is acknowledged on HEC code 0 and, with indexer acknowledgement
 * on, only once Splunk reports its ackId indexed. Per-event refusals (`invalid-event-number`)
 * reject that one event and resend the others in a new request: Splunk may or may not have
 * indexed the events before the bad one, so they are sent again rather than risked (a possible
 * duplicate beats a loss). Not idempotent: HEC has no event id, delivery is at-least-once.
 */
import { randomUUID } from 'node:crypto';
import type { AuditEvent } from '../../event.ts';
import { ErrorCodes, SyncError } from '../../../errors.ts';
import { chunkEvents } from '../batcher.ts';
import type { SinkContext } from '../context.ts';
import { HttpSinkBase, type SinkCredentials } from '../http-sink-base.ts';
import { type HttpTransport, authError, classifyStatus, retryAfterMs, type AttemptOutcome, type HttpResponse } from '../http-transport.ts';
import { readSecret } from '../secrets.ts';
import type { RejectedEvent, WriteResult } from '../sink.ts';
import { joinPath } from '../url.ts';
import { waitForAck } from './ack.ts';
import { HEC_CODES, HEC_CONFIG_HINTS, parseHecBody } from './codes.ts';
import type { SplunkHecSinkConfig } from './config.ts';
import { encodeHecEvent, type HecEnvelope } from './encoder.ts';

type Verdict =
  | { kind: 'delivered' }
  | { kind: 'reject-event'; index: number; code: string; reason: string }
  | { kind: 'reject-all'; code: string; reason: string };

export class SplunkHecSink extends HttpSinkBase<SplunkHecSinkConfig> {
  readonly idempotent = false;
  private readonly channel: string;
  private readonly envelope: HecEnvelope;

  constructor(config: SplunkHecSinkConfig, ctx: SinkContext) {
    super('splunk-hec', config, ctx);
    this.channel = config.channel ?? randomUUID();
    this.envelope = { index: config.index, source: config.source, sourcetype: config.sourcetype, host: config.host };
  }

  protected async credentials(): Promise<SinkCredentials> {
    const { config, ctx } = this;
    const token = await readSecret(config.token, config.tokenFile, ctx.configDir, `sink ${config.name}: token`);
    const headers = { authorization: `Splunk ${token}`, 'content-type': 'application/json', 'x-splunk-request-channel': this.channel };
    return { headers, secrets: [token] };
  }

  async write(events: AuditEvent[], signal?: AbortSignal): Promise<WriteResult> {
    const transport = this.openTransport();
    let delivered = 0;
    const rejected: RejectedEvent[] = [];
    for (const chunk of chunkEvents(events, (e) => encodeHecEvent(e, this.envelope), this.config.batch)) {
      rejected.push(...chunk.rejected);
      let pending = chunk.events;
      let payloads = chunk.payloads;
      // Each pass either finishes the request or removes one refused event, so this ends.
      while (pending.length > 0) {
        const verdict = await this.sendOnce(payloads, pending.length, signal);
        if (verdict.kind === 'delivered') {
          delivered += pending.length;
          break;
        }
        if (verdict.kind === 'reject-all') {
          for (const event of pending) rejected.push({ event, code: verdict.code, reason: verdict.reason });
          break;
        }
        const bad = pending[verdict.index];
        if (bad) rejected.push({ event: bad, code: verdict.code, reason: verdict.reason });
        pending = pending.filter((_, i) => i !== verdict.index);
        payloads = payloads.filter((_, i) => i !== verdict.index);
      }
    }
    this.instrument.delivered(delivered);
    this.instrument.rejected(rejected);
    return { delivered, rejected };
  }

  /** One logical request (with its retries and, if on, its indexer acknowledgement). */
  private async sendOnce(payloads: Buffer[], n: number, signal?: AbortSignal): Promise<Verdict> {
    const transport = this.openTransport();
    const req = await transport.prepare({
      method: 'POST',
      path: joinPath(this.url, '/services/collector/event'),
      headers: this.headers,
      body: Buffer.concat(payloads),
      gzip: this.config.compression === 'gzip',
    });
    return transport.run(
      `POST /services/collector/event (${n} events)`,
      async (): Promise<AttemptOutcome<Verdict>> => {
        const res = await transport.send(req, signal);
        const verdict = this.classify(res, n);
        if ('retry' in verdict) return verdict;
        if (verdict.done.kind !== 'delivered' || !this.config.indexerAcknowledgement.enabled) return verdict;
        const ackId = parseHecBody(res.text).ackId;
        if (ackId === undefined) {
          throw new SyncError(
            ErrorCodes.CONFIG_INVALID,
            'fatal',
            `sink ${this.name}: HEC answered without an ackId: ${HEC_CONFIG_HINTS[14]}`,
          );
        }
        const ack = this.config.indexerAcknowledgement;
        const acked = await waitForAck(
          transport,
          ackId,
          {
            sink: this.name,
            path: joinPath(this.url, `/services/collector/ack?channel=${encodeURIComponent(this.channel)}`),
            headers: this.headers,
            pollIntervalMs: ack.pollIntervalMs,
            timeoutMs: ack.timeoutSeconds * 1000,
          },
          signal,
        );
        return acked ? verdict : { retry: `indexer acknowledgement ${ackId} not received within ${ack.timeoutSeconds}s`, events: n };
      },
      signal,
    );
  }

  private classify(res: HttpResponse, n: number): AttemptOutcome<Verdict> {
    const body = parseHecBody(res.text);
    const known = body.code === undefined ? undefined : HEC_CODES[body.code];
    const status = classifyStatus(res);
    if (status === 'auth' || known?.verdict === 'auth') {
      throw authError(
        this.name,
        this.type,
        res.status === 401 || res.status === 403 ? res.status : 403,
        'token / tokenFile (and that the HEC token is enabled)',
      );
    }
    if (known?.verdict === 'config') {
      throw new SyncError(
        ErrorCodes.CONFIG_INVALID,
        'fatal',
        `sink ${this.name}: HEC code ${body.code} (${known.text}): ${HEC_CONFIG_HINTS[body.code!] ?? 'check the sink configuration'}`,
        { status: res.status },
      );
    }
    if (status === 'ok' && (known === undefined || known.verdict === 'ok')) return { done: { kind: 'delivered' }, result: 'ok', events: n };
    if (known?.verdict === 'retry' || status === 'retry') {
      return {
        retry: `HTTP ${res.status}${known ? ` HEC code ${body.code} (${known.text})` : ''}`,
        retryAfterMs: retryAfterMs(res),
        events: n,
      };
    }
    const code = known?.name ?? (body.code !== undefined ? `hec_${body.code}` : `http_${res.status}`);
    const reason = `HTTP ${res.status}${body.code !== undefined ? ` HEC code ${body.code}` : ''}: ${transportQuote(this.openTransport(), body.text ?? res.text)}`;
    const index = body.invalidEventNumber;
    if (known?.verdict === 'reject-event' && index !== undefined && Number.isInteger(index) && index >= 0 && index < n) {
      return { done: { kind: 'reject-event', index, code, reason }, result: 'partial', events: n };
    }
    return { done: { kind: 'reject-all', code, reason }, result: 'rejected', events: n };
  }
}

function transportQuote(t: HttpTransport, text: string): string {
  return t.quote(text) || 'no detail';
}
