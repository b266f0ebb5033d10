/**
 * One TCP or TLS connection to a syslog receiver. A connection that saw an error, an end
 * or a close is never reused: the sink reconnects and resends. Reads are drained and
 * ignored (syslog has no application-level answer).
 */
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { TlsOptions } from '../tls.ts';
import { TransportFailure } from '../retry-loop.ts';
import { errorCodeOf } from '../../../errors.ts';

export interface SyslogConnectionOptions {
  protocol: 'tcp' | 'tls';
  host: string;
  port: number;
  tls: TlsOptions | undefined;
  connectTimeoutMs: number;
}

export class SyslogConnection {
  private readonly socket: Socket;
  private broken: Error | undefined;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', () => undefined);
    socket.on('error', (e) => (this.broken ??= e));
    socket.on('end', () => (this.broken ??= failure('ECONNRESET', 'the receiver closed the connection')));
    socket.on('close', () => (this.broken ??= failure('ECONNRESET', 'connection closed')));
  }

  static open(o: SyslogConnectionOptions): Promise<SyslogConnection> {
    return new Promise((resolve, reject) => {
      const readyEvent = o.protocol === 'tls' ? 'secureConnect' : 'connect';
      const socket: Socket =
        o.protocol === 'tls'
          ? tlsConnect({
              host: o.host,
              port: o.port,
              ...(o.tls ?? { rejectUnauthorized: true }),
              // SNI must be a host name, never an IP literal.
              ...(o.tls?.servername ? {} : isIP(o.host) ? {} : { servername: o.host }),
            })
          : netConnect({ host: o.host, port: o.port });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(failure('ETIMEDOUT', `connect timeout after ${o.connectTimeoutMs} ms`));
      }, o.connectTimeoutMs);
      const onError = (e: Error): void => {
        clearTimeout(timer);
        socket.destroy();
        reject(failure(codeOf(e), `connect to ${o.host}:${o.port} failed (${codeOf(e)})`, e));
      };
      socket.once('error', onError);
      socket.once(readyEvent, () => {
        clearTimeout(timer);
        socket.off('error', onError);
        socket.setNoDelay(true);
        socket.setKeepAlive(true, 30_000);
        resolve(new SyslogConnection(socket));
      });
    });
  }

  get usable(): boolean {
    return this.broken === undefined && !this.socket.destroyed;
  }

  /**
   * Resolves when the bytes were handed to the kernel (the write callback) and the socket
   * buffer has drained; a stall past `timeoutMs` (receiver not reading) fails the write.
   */
  write(buf: Buffer, timeoutMs: number): Promise<void> {
    if (this.broken) return Promise.reject(failure(codeOf(this.broken), this.broken.message));
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = (err?: Error): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.socket.off('close', onClose);
        if (err) {
          this.broken ??= err;
          this.socket.destroy();
          reject(err instanceof TransportFailure ? err : failure(codeOf(err), `write failed (${codeOf(err)})`, err));
        } else resolve();
      };
      const onClose = (): void => finish(this.broken ?? failure('ECONNRESET', 'connection closed during write'));
      const timer = setTimeout(() => finish(failure('ETIMEDOUT', `write not flushed within ${timeoutMs} ms`)), timeoutMs);
      this.socket.once('close', onClose);
      let flushed = false;
      let drained = this.socket.write(buf, (err) => {
        flushed = true;
        if (err) finish(err);
        else if (drained) finish();
      });
      if (!drained) {
        this.socket.once('drain', () => {
          drained = true;
          if (flushed) finish();
        });
      }
    });
  }

  /** Graceful: flush pending bytes with FIN. */
  async end(): Promise<void> {
    if (this.socket.destroyed) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        this.socket.destroy();
        resolve();
      }, 5_000);
      this.socket.end(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }

  destroy(): void {
    this.socket.destroy();
  }
}

function codeOf(e: Error): string {
  return errorCodeOf(e) ?? 'ERR';
}

function failure(code: string, message: string, cause?: unknown): TransportFailure {
  return new TransportFailure(code, message, cause);
}
