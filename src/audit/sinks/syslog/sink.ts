/**
 * Syslog sink: RFC 5424 over TCP or TLS, octet-counted frames. Syslog has no
 * application-level acknowledgement: a batch is acknowledged once its bytes were written
 * and flushed to the socket (handed to the kernel). A connection error during the write
 * reconnects with backoff and resends the whole batch, so delivery is at-least-once and
 * not idempotent; bytes already in flight when a receiver dies silently can still be lost
 * (that is the protocol's limit, not fixable without RELP).
 */
import { ErrorCodes, SyncError } from '../../../errors.ts';
import type { AuditEvent } from '../../event.ts';
import { chunkEvents } from '../batcher.ts';
import { toRetryPolicy } from '../common-config.ts';
import type { SinkContext } from '../context.ts';
import { SinkInstrument } from '../instrument.ts';
import { TransportFailure, runWithRetry } from '../retry-loop.ts';
import type { RejectedEvent, Sink, WriteResult } from '../sink.ts';
import { isTlsVerifyError } from '../../../errors.ts';
import { loadTls, type TlsOptions } from '../tls.ts';
import { FACILITIES, SEVERITIES, type SyslogSinkConfig } from './config.ts';
import { SyslogConnection } from './connection.ts';
import { encodeSyslogFrame, type SyslogFormat } from './encoder.ts';

export class SyslogSink implements Sink {
  readonly name: string;
  readonly type = 'syslog';
  readonly idempotent = false;
  private readonly config: SyslogSinkConfig;
  private readonly ctx: SinkContext;
  private readonly instrument: SinkInstrument;
  private readonly format: SyslogFormat;
  private readonly port: number;
  private tls: TlsOptions | undefined;
  private conn: SyslogConnection | undefined;
  private opened = false;

  constructor(config: SyslogSinkConfig, ctx: SinkContext) {
    this.name = config.name;
    this.config = config;
    this.ctx = ctx;
    this.instrument = new SinkInstrument(config.name, this.type, ctx);
    this.port = config.port ?? (config.protocol === 'tls' ? 6514 : 601);
    const facility = typeof config.facility === 'number' ? config.facility : FACILITIES[config.facility];
    const severity = typeof config.severity === 'number' ? config.severity : SEVERITIES[config.severity];
    this.format = {
      pri: facility * 8 + severity,
      hostname: config.hostname,
      appName: config.appName,
      procId: String(process.pid),
      msgidField: config.msgidField,
      sdId: config.structuredData ? config.sdId : undefined,
      format: config.format,
      cef: config.cef,
    };
  }

  /** Loads TLS material; the connection itself is made (and remade) by write. */
  async open(): Promise<void> {
    if (this.config.protocol === 'tls') this.tls = await loadTls(this.config.tls, this.ctx.configDir, `sink ${this.name}`);
    this.opened = true;
  }

  async write(events: AuditEvent[], signal?: AbortSignal): Promise<WriteResult> {
    if (!this.opened) throw new SyncError(ErrorCodes.CONFIG_INVALID, 'fatal', `sink ${this.name}: write before open() or after close()`);
    let delivered = 0;
    const rejected: RejectedEvent[] = [];
    for (const chunk of chunkEvents(events, (e) => encodeSyslogFrame(e, this.format), this.config.batch)) {
      rejected.push(...chunk.rejected);
      if (chunk.events.length === 0) continue;
      const n = chunk.events.length;
      const buf = Buffer.concat(chunk.payloads, chunk.bytes);
      await runWithRetry(
        { policy: toRetryPolicy(this.config.retry), instrument: this.instrument, random: this.ctx.random },
        `write ${n} messages to ${this.config.host}:${this.port}`,
        async () => {
          const conn = await this.connection();
          await conn.write(buf, this.config.timeoutSeconds * 1000);
          return { done: true, result: 'ok', events: n };
        },
        signal,
      );
      delivered += n;
    }
    this.instrument.delivered(delivered);
    this.instrument.rejected(rejected);
    return { delivered, rejected };
  }

  async close(): Promise<void> {
    this.opened = false;
    const c = this.conn;
    this.conn = undefined;
    await c?.end();
  }

  private async connection(): Promise<SyslogConnection> {
    if (this.conn?.usable) return this.conn;
    this.conn?.destroy();
    this.conn = undefined;
    try {
      this.conn = await SyslogConnection.open({
        protocol: this.config.protocol,
        host: this.config.host,
        port: this.port,
        tls: this.tls,
        connectTimeoutMs: this.config.connectTimeoutSeconds * 1000,
      });
    } catch (e) {
      if (e instanceof TransportFailure && isTlsVerifyError(e.code)) {
        // The configured trust refuses this certificate: retrying cannot help.
        throw new SyncError(
          ErrorCodes.CONFIG_INVALID,
          'fatal',
          `sink ${this.name}: TLS verification of ${this.config.host}:${this.port} failed (${e.code}): check tls.caFile and tls.servername`,
          { cause: e },
        );
      }
      throw e;
    }
    return this.conn;
  }
}
