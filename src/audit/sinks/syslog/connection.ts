/**
 * One TCP or TLS connection to a syslog receiver, for one batch. Plain syslog has no
 * acknowledgement, and bytes the kernel accepted are not bytes the receiver read: a receiver
 * that restarts loses what sat in its socket buffer. So a batch is written, then committed by
 * closing our side and waiting for the receiver to close its own: rsyslog and syslog-ng
 * close only once they have read to the end of the stream, while a receiver that dies with
 * unread data resets the connection instead. A connection that saw an error is never reused.
 * Reads are drained and ignored (syslog has no application-level answer).
 */
import type { Socket } from 'node:net';
import { TransportFailure } from '../retry-loop.ts';
import { codeOf, failure, openSocket, type SocketOptions } from './socket.ts';

export class SyslogConnection {
  private readonly socket: Socket;
  private broken: Error | undefined;
  /** Our side has ended: the receiver's end of stream is then the answer we wait for. */
  private ending = false;
  private peerEnded = false;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', () => undefined);
    socket.on('error', (e) => (this.broken ??= e));
    socket.on('end', () => {
      this.peerEnded = true;
      if (!this.ending) this.broken ??= failure('ECONNRESET', 'the receiver closed the connection');
    });
    socket.on('close', () => {
      if (!this.peerEnded) this.broken ??= failure('ECONNRESET', 'connection closed');
    });
  }

  static async open(o: SocketOptions): Promise<SyslogConnection> {
    return new SyslogConnection(await openSocket(o));
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

  /**
   * Ends our side (FIN, after TLS close_notify) and resolves once the receiver closed its side
   * in answer, without an error: it has read everything written. A reset, an error, or no
   * answer within `timeoutMs` rejects, and the batch is sent again on a new connection.
   */
  commit(timeoutMs: number): Promise<void> {
    if (this.broken) return Promise.reject(failure(codeOf(this.broken), this.broken.message));
    this.ending = true;
    return new Promise((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        if (this.broken || !this.peerEnded) {
          const e = this.broken ?? failure('ECONNRESET', 'connection closed before the receiver confirmed');
          reject(e instanceof TransportFailure ? e : failure(codeOf(e), `commit failed (${codeOf(e)})`, e));
        } else resolve();
      };
      const timer = setTimeout(() => {
        this.broken ??= failure('ETIMEDOUT', `the receiver did not close within ${timeoutMs} ms of the end of the batch`);
        this.socket.destroy();
      }, timeoutMs);
      if (this.socket.destroyed) done();
      else {
        this.socket.once('close', done);
        this.socket.end();
      }
    });
  }

  destroy(): void {
    this.socket.destroy();
  }
}
