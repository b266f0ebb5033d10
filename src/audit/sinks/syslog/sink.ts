/**
 * Syslog sink: RFC 5424 messages over TCP, TLS or RELP. A message counts as delivered only
 * once the receiver confirmed it: over TCP/TLS when the receiver closed the request's
 * connection in answer to ours (it read everything), over RELP on its `200` answer. Anything
 * written on a connection that broke first is sent again (at-least-once, resends counted).
 * Every message fits `maxMessageBytes` first: truncated with a marker, or dead-lettered.
 * A receiver still down when the retry budget is spent: see when-down.ts.
 */
import { ErrorCodes, SyncError, isTlsVerifyError } from '../../../errors.ts';
import type { AuditEvent } from '../../event.ts';
import { toRetryPolicy } from '../common-config.ts';
import type { SinkContext } from '../context.ts';
import { SinkInstrument } from '../instrument.ts';
import { TransportFailure, type RetryLoopOptions } from '../retry-loop.ts';
import type { RejectedEvent, Sink, WriteResult } from '../sink.ts';
import { loadTls, type TlsOptions } from '../tls.ts';
import { DEFAULT_PORTS, FACILITIES, SEVERITIES, type SyslogSinkConfig } from './config.ts';
import { SyslogConnection } from './connection.ts';
import type { Delivery } from './delivery.ts';
import type { SyslogFormat } from './encoder.ts';
import { fitMessage } from './fit.ts';
import { PlainDelivery } from './plain-delivery.ts';
import { RelpDelivery } from './relp-delivery.ts';
import { RelpRefusedError, RelpSession } from './relp/session.ts';
import type { SocketOptions } from './socket.ts';
import { WhenDown } from './when-down.ts';

export class SyslogSink implements Sink {
  readonly name: string;
  readonly type = 'syslog';
  readonly idempotent = false;
  private readonly config: SyslogSinkConfig;
  private readonly ctx: SinkContext;
  private readonly instrument: SinkInstrument;
  private readonly format: SyslogFormat;
  private readonly port: number;
  private delivery: Delivery | undefined;
  private readonly whenDown: WhenDown;

  constructor(config: SyslogSinkConfig, ctx: SinkContext) {
    this.name = config.name;
    this.config = config;
    this.ctx = ctx;
    this.instrument = new SinkInstrument(config.name, this.type, ctx);
    this.port = config.port ?? DEFAULT_PORTS[config.protocol];
    this.whenDown = new WhenDown({
      mode: config.whenDown,
      target: `${config.host}:${this.port}`,
      logger: ctx.logger?.child({ sink: config.name, sinkType: this.type }),
    });
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
      // RELP frames by length; a raw line break is harmless there.
      framing: config.protocol === 'relp' ? 'octet-counting' : config.framing,
    };
  }

  /** Loads TLS material; connections are made (and remade) by write. */
  async open(): Promise<void> {
    const c = this.config;
    const useTls = c.protocol === 'tls' || (c.protocol === 'relp' && c.relp.tls);
    const tls: TlsOptions | undefined = useTls ? await loadTls(c.tls, this.ctx.configDir, `sink ${this.name}`) : undefined;
    const socket: SocketOptions = { host: c.host, port: this.port, tls, connectTimeoutMs: c.connectTimeoutSeconds * 1000 };
    const retry: RetryLoopOptions = { policy: toRetryPolicy(c.retry), instrument: this.instrument, random: this.ctx.random };
    const target = `${c.host}:${this.port}`;
    const timeoutMs = c.timeoutSeconds * 1000;
    this.whenDown.reset();
    this.delivery =
      c.protocol === 'relp'
        ? new RelpDelivery({
            retry,
            target,
            open: () => this.fatalOnRefusal(RelpSession.open({ ...socket, window: c.relp.windowSize, timeoutMs })),
          })
        : new PlainDelivery({
            retry,
            target,
            framing: c.framing,
            timeoutMs,
            connect: () => this.fatalOnRefusal(SyslogConnection.open(socket)),
          });
  }

  async write(events: AuditEvent[], signal?: AbortSignal): Promise<WriteResult> {
    const delivery = this.delivery;
    if (!delivery) throw new SyncError(ErrorCodes.CONFIG_INVALID, 'fatal', `sink ${this.name}: write before open() or after close()`);
    const rejected: RejectedEvent[] = [];
    const truncated: string[] = [];
    let delivered = 0;
    let batch: Array<{ event: AuditEvent; message: Buffer }> = [];
    let bytes = 0;
    const scope = { failed: false };
    const send = async (): Promise<void> => {
      const outcomes = await this.whenDown.deliver(
        delivery,
        batch.map((b) => b.message),
        signal,
        scope,
      );
      outcomes.forEach((o, i) => {
        if (o.delivered) delivered++;
        else rejected.push({ event: (batch[i] as { event: AuditEvent }).event, code: o.code, reason: o.reason });
      });
      batch = [];
      bytes = 0;
    };
    for (const event of events) {
      const message = this.encode(event, rejected, truncated);
      if (!message) continue;
      const limits = this.config.batch;
      if (batch.length >= limits.maxEvents || (batch.length > 0 && bytes + message.length > limits.maxBytes)) await send();
      batch.push({ event, message });
      bytes += message.length;
    }
    if (batch.length > 0) await send();
    this.instrument.truncated(truncated, this.config.maxMessageBytes);
    this.instrument.delivered(delivered);
    this.instrument.rejected(rejected);
    return { delivered, rejected };
  }

  async close(): Promise<void> {
    const d = this.delivery;
    this.delivery = undefined;
    await d?.close();
  }

  /** The event's message within `maxMessageBytes`, or undefined with the event rejected. */
  private encode(event: AuditEvent, rejected: RejectedEvent[], truncated: string[]): Buffer | undefined {
    const max = this.config.maxMessageBytes;
    try {
      const fit = fitMessage(event, this.format, max, this.config.oversize);
      if ('message' in fit) {
        if (fit.truncatedFromBytes !== undefined) truncated.push(event.key);
        return fit.message;
      }
      rejected.push({
        event,
        code: 'syslog_oversize',
        reason: `message of ${fit.oversizeBytes} bytes exceeds maxMessageBytes ${max} (oversize: ${this.config.oversize})`,
      });
    } catch (e) {
      rejected.push({ event, code: 'encode_failed', reason: `event could not be encoded: ${(e as Error).message}` });
    }
    return undefined;
  }

  /** A certificate the configured trust refuses, or a receiver refusing RELP: retrying cannot help. */
  private async fatalOnRefusal<T>(p: Promise<T>): Promise<T> {
    try {
      return await p;
    } catch (e) {
      const where = `${this.config.host}:${this.port}`;
      if (e instanceof TransportFailure && isTlsVerifyError(e.code)) {
        throw new SyncError(
          ErrorCodes.CONFIG_INVALID,
          'fatal',
          `sink ${this.name}: TLS verification of ${where} failed (${e.code}): check tls.caFile and tls.servername`,
          { cause: e },
        );
      }
      if (e instanceof RelpRefusedError) {
        throw new SyncError(ErrorCodes.CONFIG_INVALID, 'fatal', `sink ${this.name}: ${where}: ${e.message}`, { cause: e });
      }
      throw e;
    }
  }
}
