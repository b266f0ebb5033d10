/**
 * A real TCP relay on 127.0.0.1:0 in front of a server: counts the connections made through it
 * and can cut every open one, as a firewall or a server's idle timeout does.
 */
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

export interface TcpRelay {
  port: number;
  /** Connections accepted so far. */
  readonly connections: number;
  /** Destroys every open connection (both sides). */
  cut(): void;
  close(): Promise<void>;
}

export async function startTcpRelay(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpRelay> {
  const open = new Set<Socket>();
  let connections = 0;
  const server = createServer((client) => {
    connections++;
    const upstream = connect(targetPort, targetHost);
    for (const s of [client, upstream]) {
      open.add(s);
      s.on('close', () => open.delete(s));
      s.on('error', () => undefined);
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = (): void => {
    for (const s of open) s.destroy();
  };
  return {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return connections;
    },
    cut,
    close: () =>
      new Promise<void>((resolve) => {
        cut();
        server.close(() => resolve());
      }),
  };
}
