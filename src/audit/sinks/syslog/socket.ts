/**
 * Opens the TCP or TLS socket a syslog or RELP session runs on, within a connect timeout.
 * Failures are TransportFailures carrying Node's code (a TLS verification code among them,
 * which the sink turns into a fatal configuration error).
 */
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { errorCodeOf } from '../../../errors.ts';
import { TransportFailure } from '../retry-loop.ts';
import type { TlsOptions } from '../tls.ts';

export interface SocketOptions {
  host: string;
  port: number;
  /** TLS settings, or undefined for plain TCP. */
  tls: TlsOptions | undefined;
  connectTimeoutMs: number;
}

export function openSocket(o: SocketOptions): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket: Socket = o.tls
      ? tlsConnect({
          host: o.host,
          port: o.port,
          ...o.tls,
          // SNI must be a host name, never an IP literal.
          ...(o.tls.servername ? {} : isIP(o.host) ? {} : { servername: o.host }),
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
    socket.once(o.tls ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      socket.off('error', onError);
      socket.setNoDelay(true);
      socket.setKeepAlive(true, 30_000);
      resolve(socket);
    });
  });
}

export function codeOf(e: Error): string {
  return errorCodeOf(e) ?? 'ERR';
}

export function failure(code: string, message: string, cause?: unknown): TransportFailure {
  return new TransportFailure(code, message, cause);
}
