/**
 * What the three HTTP-based sinks (http, splunk-hec, elasticsearch) share: the URL check,
 * the instrument, opening the transport with the sink's credentials (scrubbed from every
 * error), the "open first" guard and close(). Each sink adds its headers and its write().
 */
import type { AuditEvent } from '../event.ts';
import { ErrorCodes, SyncError } from '../../errors.ts';
import { toRetryPolicy, type SinkRetryConfig } from './common-config.ts';
import type { SinkContext } from './context.ts';
import { HttpTransport } from './http-transport.ts';
import { SinkInstrument } from './instrument.ts';
import type { Sink, WriteResult } from './sink.ts';
import { loadTls, type TlsConfig } from './tls.ts';
import { sinkUrl } from './url.ts';

export interface HttpSinkCommonConfig {
  name: string;
  url: string;
  allowInsecureHttp: boolean;
  timeoutSeconds: number;
  retry: SinkRetryConfig;
  tls: TlsConfig;
}

export interface SinkCredentials {
  headers: Record<string, string>;
  /** Secret values in those headers, scrubbed from any server text the sink quotes. */
  secrets: string[];
}

export abstract class HttpSinkBase<C extends HttpSinkCommonConfig> implements Sink {
  readonly name: string;
  readonly type: string;
  abstract readonly idempotent: boolean;
  protected readonly config: C;
  protected readonly ctx: SinkContext;
  protected readonly url: URL;
  protected readonly instrument: SinkInstrument;
  protected headers: Record<string, string> = {};
  private transport: HttpTransport | undefined;

  protected constructor(type: string, config: C, ctx: SinkContext) {
    this.name = config.name;
    this.type = type;
    this.config = config;
    this.ctx = ctx;
    this.url = sinkUrl(config.url, config.allowInsecureHttp, `sink ${config.name}: url`);
    this.instrument = new SinkInstrument(config.name, type, ctx);
  }

  /** The sink's request headers, with the credentials read from config or files. */
  protected abstract credentials(): Promise<SinkCredentials>;

  abstract write(events: AuditEvent[], signal?: AbortSignal): Promise<WriteResult>;

  async open(): Promise<void> {
    const { headers, secrets } = await this.credentials();
    this.headers = headers;
    this.transport = new HttpTransport({
      origin: this.url.origin,
      policy: toRetryPolicy(this.config.retry),
      instrument: this.instrument,
      timeoutMs: this.config.timeoutSeconds * 1000,
      tls: await loadTls(this.config.tls, this.ctx.configDir, `sink ${this.config.name}`),
      secrets,
      ...(this.ctx.random ? { random: this.ctx.random } : {}),
    });
  }

  protected openTransport(): HttpTransport {
    if (!this.transport) throw new SyncError(ErrorCodes.CONFIG_INVALID, 'fatal', `sink ${this.name}: write before open() or after close()`);
    return this.transport;
  }

  async close(): Promise<void> {
    const t = this.transport;
    this.transport = undefined;
    await t?.close();
  }
}
