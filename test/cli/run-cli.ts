/** Runs the real CLI (bin/scim-audit-sync.mjs) in a child process, as a user would. */
import { execFile } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export const BIN = join(import.meta.dirname, '../../bin/scim-audit-sync.mjs');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], env: Record<string, string> = {}, cwd?: string): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      // A clean environment: nothing from the developer's shell (e.g. SCIM_AUDIT_SYNC_CONFIG) leaks in.
      { env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', ...env }, cwd: cwd ?? process.cwd(), timeout: 20_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

export interface SeenRequest {
  method: string;
  url: string;
  authorization: string | undefined;
}

export interface FakePlatform {
  url: string;
  seen: SeenRequest[];
  /** What the next requests get, by path without query. */
  routes: Map<string, { status: number; body?: unknown }>;
  close(): Promise<void>;
}

/** A tiny real HTTP server on a free loopback port standing in for the platform. */
export async function startFakePlatform(): Promise<FakePlatform> {
  const seen: SeenRequest[] = [];
  const routes = new Map<string, { status: number; body?: unknown }>();
  const server: Server = createServer((req: IncomingMessage, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization });
    const route = routes.get((req.url ?? '').split('?')[0] ?? '') ?? { status: 404, body: { detail: 'no such route' } };
    res.writeHead(route.status, { 'content-type': 'application/scim+json' });
    res.end(route.body === undefined ? '' : JSON.stringify(route.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    routes,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
