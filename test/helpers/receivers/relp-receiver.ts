/**
 * A scripted RELP receiver on 127.0.0.1:0: it accepts the `open` offer, then answers each
 * `syslog` command as `script` says (`200 OK` by default): another status, a `serverclose`
 * (the session is closed before answering), or silence. It records every message received
 * and every session opened.
 */
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { RelpParser, encodeRelpFrame } from '../../../src/audit/sinks/syslog/relp/frame.ts';

export type RelpScript = (message: string, index: number) => string | 'serverclose' | 'silent';

export interface RelpReceiver {
  port: number;
  messages: string[];
  sessions: number;
  script: RelpScript;
  close(): Promise<void>;
}

export async function startRelpReceiver(): Promise<RelpReceiver> {
  const sockets = new Set<Socket>();
  const r: RelpReceiver = { port: 0, messages: [], sessions: 0, script: () => '200 OK', close: async () => undefined };
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const parser = new RelpParser(1 << 20);
    socket.on('data', (chunk: Buffer) => {
      for (const f of parser.push(chunk)) {
        if (f.command === 'open') {
          r.sessions++;
          socket.write(encodeRelpFrame(f.txnr, 'rsp', Buffer.from('200 OK\nrelp_version=0\ncommands=syslog')));
        } else if (f.command === 'close') {
          socket.end(encodeRelpFrame(f.txnr, 'rsp'));
        } else if (f.command === 'syslog') {
          const msg = f.data.toString('utf8');
          const answer = r.script(msg, r.messages.length);
          r.messages.push(msg);
          if (answer === 'serverclose') {
            socket.end(encodeRelpFrame(0, 'serverclose'));
            return;
          }
          if (answer !== 'silent') socket.write(encodeRelpFrame(f.txnr, 'rsp', Buffer.from(answer)));
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.port = (server.address() as AddressInfo).port;
  r.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return r;
}
