/**
 * The one place outbound HTTP connections are made from: the platform client, the HTTP-based
 * sinks and the SCIM source all get their undici dispatcher here. Enterprise networks reach
 * the outside through a proxy: HTTPS_PROXY / HTTP_PROXY / NO_PROXY (either case) are honoured
 * with undici's EnvHttpProxyAgent (CONNECT tunnel for https://, NO_PROXY hosts go direct).
 * A custom CA or client certificate applies to the target's TLS, through the tunnel too.
 */
import { Agent, type Dispatcher, EnvHttpProxyAgent } from 'undici';

export interface TargetTls {
  ca?: string;
  cert?: string;
  key?: string;
  rejectUnauthorized?: boolean;
  servername?: string;
}

export interface DispatcherOptions {
  /** Max sockets per origin. */
  connections?: number;
  keepAliveTimeoutMs?: number;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  connectTimeoutMs?: number;
  tls?: TargetTls;
  /** Where the proxy variables are read; default process.env. */
  env?: Readonly<Record<string, string | undefined>>;
}

export interface ProxySettings {
  httpProxy?: string;
  httpsProxy?: string;
  noProxy?: string;
}

const pick = (env: Readonly<Record<string, string | undefined>>, name: string): string | undefined => {
  const v = env[name.toLowerCase()] ?? env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
};

/** The proxy variables, lower case first (curl's precedence); empty when none is set. */
export function proxyFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): ProxySettings {
  const out: ProxySettings = {};
  const http = pick(env, 'HTTP_PROXY');
  const https = pick(env, 'HTTPS_PROXY');
  const no = pick(env, 'NO_PROXY');
  if (http !== undefined) out.httpProxy = http;
  if (https !== undefined) out.httpsProxy = https;
  if (no !== undefined) out.noProxy = no;
  return out;
}

/** Proxy URL for logs and messages: without credentials (a proxy URL may carry user:password). */
export function describeProxy(raw: string): string {
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}`;
  } catch {
    return 'an invalid proxy URL';
  }
}

export function createDispatcher(opts: DispatcherOptions = {}): Dispatcher {
  const tls = opts.tls ?? {};
  const base = {
    connections: opts.connections ?? 32,
    keepAliveTimeout: opts.keepAliveTimeoutMs ?? 30_000, // ms
    headersTimeout: opts.headersTimeoutMs ?? 30_000, // ms
    bodyTimeout: opts.bodyTimeoutMs ?? 60_000, // ms
    connect: { timeout: opts.connectTimeoutMs ?? 10_000, ...tls },
  };
  const proxy = proxyFromEnv(opts.env);
  if (proxy.httpProxy === undefined && proxy.httpsProxy === undefined) return new Agent(base);
  // `requestTls` is the target's TLS inside the CONNECT tunnel; `connect` serves NO_PROXY hosts.
  return new EnvHttpProxyAgent({ ...base, ...proxy, requestTls: { timeout: opts.connectTimeoutMs ?? 10_000, ...tls } });
}
