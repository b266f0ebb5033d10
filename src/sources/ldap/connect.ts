/**
 * Open a bound LDAP connection: TCP or TLS (ldaps://), optional StartTLS upgrade, simple bind.
 * Every step is bounded in time and every failure leaves as a classified SourceError.
 */
import { isIP } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import type { Client } from 'ldapts';
import { errorCodeOf } from '../../errors.ts';
import { ldapError, type LdapErrorContext, type LdapStage } from './classify.ts';
import type { LdapSettings } from './settings.ts';

export interface LdapCredentials {
  password: string;
  /** PEM CA bundle; undefined = the system trust store. */
  ca?: string | undefined;
}

export function errorContext(s: LdapSettings, what?: string): LdapErrorContext {
  return {
    url: s.url,
    bindDn: s.bindDn,
    ...(what === undefined ? {} : { what }),
    timeoutSeconds: s.timeoutSeconds,
    connectTimeoutSeconds: s.connectTimeoutMs / 1000,
    pageSize: s.pageSize,
  };
}

function tlsOptions(hostname: string, ca: string | undefined): ConnectionOptions {
  // SNI must not be an IP address; the certificate is still checked against `host`.
  return {
    host: hostname,
    ...(isIP(hostname) === 0 ? { servername: hostname } : {}),
    ...(ca === undefined ? {} : { ca }),
    minVersion: 'TLSv1.2',
  };
}

/** Rejects after `ms`, running `onTimeout` so the hung socket is released. */
async function within<T>(p: Promise<T>, ms: number, onTimeout: () => void, err: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(err());
    }, ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export async function openLdap(s: LdapSettings, creds: LdapCredentials, signal?: AbortSignal): Promise<Client> {
  signal?.throwIfAborted();
  const url = new URL(s.url);
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  // Loaded on first use: commands that never touch LDAP do not pay for the library.
  const { Client } = await import('ldapts');
  const client = new Client({
    url: s.url,
    connectTimeout: s.connectTimeoutMs,
    timeout: s.timeoutMs,
    // ldapts treats any tlsOptions as "connect with TLS": only pass them for ldaps://.
    ...(url.protocol === 'ldaps:' ? { tlsOptions: tlsOptions(hostname, creds.ca) } : {}),
    // DNs are passed back exactly as the server spelled them (e.g. for range retrieval).
    strictDN: false,
  });
  const ctx = errorContext(s);
  let stage: LdapStage = s.startTls ? 'starttls' : 'bind';
  const steps = async (): Promise<void> => {
    if (s.startTls) {
      stage = 'starttls';
      await client.startTLS(tlsOptions(hostname, creds.ca));
    }
    stage = 'bind';
    await client.bind(s.bindDn, creds.password);
  };
  const abort = (): void => void client.unbind().catch(() => undefined);
  signal?.addEventListener('abort', abort, { once: true });
  try {
    // A TLS handshake has no timeout of its own: bound the whole sequence.
    await within(steps(), s.connectTimeoutMs + s.timeoutMs, abort, () => new Error('Connection timeout'));
    return client;
  } catch (e) {
    await client.unbind().catch(() => undefined);
    signal?.throwIfAborted();
    // A socket-level failure before any LDAP message is a connect failure, whatever the stage.
    const code = errorCodeOf(e);
    const connectLevel = code !== undefined && !/^(ERR_TLS|ERR_SSL|UNABLE_TO|CERT_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME)/.test(code);
    throw ldapError(e, connectLevel || (e instanceof Error && e.message === 'Connection timeout') ? 'connect' : stage, ctx);
  } finally {
    signal?.removeEventListener('abort', abort);
  }
}
