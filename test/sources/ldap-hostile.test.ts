/**
 * An LDAP server that misbehaves at the socket level — resets, garbage, a connection cut
 * mid-search, silence — fails the read with a classified SourceError; no socket error escapes
 * as an unhandled `error` event (vitest fails a file on one), and the process goes on.
 */
import { mkdtempSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes, isSyncError } from '../../src/errors.ts';
import { ldapSourceSchema } from '../../src/sources/ldap/schema.ts';
import { LdapSource } from '../../src/sources/ldap/source.ts';

type Behaviour = (socket: Socket, messageId: number, op: number, n: number) => void;

let server: Server | undefined;
const sockets = new Set<Socket>();
afterEach(async () => {
  for (const s of sockets) s.destroy();
  sockets.clear();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** The message id and protocol operation of each LDAP request (short ids only: enough here). */
async function hostileLdap(behave: Behaviour): Promise<string> {
  server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    let n = 0;
    socket.on('data', (d: Buffer) => {
      // 30 <len> 02 01 <id> <op> …; a long-form length adds bytes after 0x8N.
      const lenBytes = (d[1] as number) & 0x80 ? ((d[1] as number) & 0x7f) + 1 : 1;
      const at = 1 + lenBytes;
      const id = d[at + 2] as number;
      const op = d[at + 3] as number;
      behave(socket, id, op, n++);
    });
  });
  const listening = server;
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
  return `ldap://127.0.0.1:${(listening.address() as AddressInfo).port}`;
}

const BIND_REQUEST = 0x60;
const bindOk = (id: number): Buffer => Buffer.from([0x30, 0x0c, 0x02, 0x01, id, 0x61, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00]);

function source(url: string): LdapSource {
  return new LdapSource(
    ldapSourceSchema.parse({
      type: 'ldap',
      url,
      allowInsecure: true,
      bindDn: 'cn=reader,dc=example,dc=org',
      bindPassword: 'hostile-ldap-password',
      users: { baseDn: 'ou=people,dc=example,dc=org' },
      groups: { baseDn: 'ou=groups,dc=example,dc=org' },
      connectTimeoutSeconds: 1,
      timeoutSeconds: 1,
    }),
    { configDir: mkdtempSync(join(tmpdir(), 'ldap-hostile-')) },
  );
}

async function expectClassifiedFailure(url: string): Promise<void> {
  const err = await source(url)
    .read()
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(isSyncError(err)).toBe(true);
  expect((err as { code: string }).code).toBe(ErrorCodes.SOURCE_FAILED);
  expect(String((err as Error).message)).not.toContain('hostile-ldap-password');
}

describe('LDAP server faults at the socket level', () => {
  it('a connection reset on the bind request fails the read, classified', async () => {
    await expectClassifiedFailure(await hostileLdap((s) => s.resetAndDestroy()));
  });

  it('garbage instead of a bind response fails the read, classified', async () => {
    await expectClassifiedFailure(await hostileLdap((s) => s.write(Buffer.from([0x30, 0x84, 0xff, 0xff, 0xff, 0xff, 0x01, 0x02]))));
  });

  it('a reset in the middle of a search result fails the read, classified', async () => {
    await expectClassifiedFailure(
      await hostileLdap((s, id, op) => {
        if (op === BIND_REQUEST) return void s.write(bindOk(id));
        // Half a SearchResultEntry, then a TCP reset.
        s.write(Buffer.from([0x30, 0x40, 0x02, 0x01, id, 0x64, 0x3b, 0x04, 0x1c]), () => s.resetAndDestroy());
      }),
    );
  });

  it('a connection closed in the middle of a search result fails the read, classified', async () => {
    await expectClassifiedFailure(
      await hostileLdap((s, id, op) => {
        if (op === BIND_REQUEST) return void s.write(bindOk(id));
        s.end(Buffer.from([0x30, 0x40, 0x02, 0x01, id, 0x64]));
      }),
    );
  });

  it('a server that never answers the search fails the read within its timeout, classified', async () => {
    const started = Date.now();
    await expectClassifiedFailure(await hostileLdap((s, id, op) => (op === BIND_REQUEST ? void s.write(bindOk(id)) : undefined)));
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
