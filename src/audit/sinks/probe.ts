/**
 * Read-only health checks of the sinks for `validate --check-connectivity` (Vector's
 * healthchecks): a HEC health endpoint plus a token check that indexes nothing, an
 * Elasticsearch ping, a HEAD to an HTTP sink, a TCP or TLS handshake for syslog, a writable
 * directory for a file sink. Each ends ok or failed with a classified message (401/403 carry
 * E_AUTH_INVALID / E_AUTH_FORBIDDEN so the command can exit 2); none throws, none writes events.
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { connect as tcpConnect } from 'node:net';
import { dirname } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import type { Dispatcher } from 'undici';
import { createDispatcher } from '../../platform/dispatcher.ts';
import { ErrorCodes, errorCodeOf, isSyncError } from '../../errors.ts';
import type { SinkConfig } from './registry.ts';
import { readSecret, redact, resolvePath } from './secrets.ts';
import { loadTls, type TlsOptions } from './tls.ts';
import { joinPath, sinkUrl } from './url.ts';
import { DEFAULT_PORTS } from './syslog/config.ts';
import { RelpSession } from './syslog/relp/session.ts';

export interface SinkProbeResult {
  name: string;
  ok: boolean;
  detail: string;
  code?: string;
}

interface HttpAnswer {
  status: number;
  text: string;
}

async function httpCall(
  url: URL,
  path: string,
  method: 'GET' | 'HEAD' | 'POST',
  headers: Record<string, string>,
  tls: TlsOptions,
  timeoutMs: number,
  body?: string,
): Promise<HttpAnswer> {
  const dispatcher: Dispatcher = createDispatcher({
    connections: 1,
    headersTimeoutMs: timeoutMs,
    bodyTimeoutMs: timeoutMs,
    connectTimeoutMs: timeoutMs,
    tls,
  });
  try {
    const res = await dispatcher.request({
      origin: url.origin,
      path,
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = method === 'HEAD' ? '' : (await res.body.text()).slice(0, 300);
    if (method === 'HEAD') await res.body.dump();
    return { status: res.statusCode, text };
  } finally {
    await dispatcher.close();
  }
}

function authFailure(name: string, where: string, a: HttpAnswer, secrets: string[], hint: string): SinkProbeResult | undefined {
  if (a.status !== 401 && a.status !== 403) return undefined;
  const said = a.text ? `: ${redact(a.text.replace(/\s+/g, ' '), secrets)}` : '';
  return {
    name,
    ok: false,
    code: a.status === 401 ? ErrorCodes.AUTH_INVALID : ErrorCodes.AUTH_FORBIDDEN,
    detail: `${where} answered HTTP ${a.status}${said}; ${hint}`,
  };
}

const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

async function probeSplunk(c: Extract<SinkConfig, { type: 'splunk-hec' }>, name: string, configDir: string): Promise<SinkProbeResult> {
  const url = sinkUrl(c.url, c.allowInsecureHttp, `${name}: url`);
  const tls = await loadTls(c.tls, configDir, name);
  const token = await readSecret(c.token, c.tokenFile, configDir, `${name}: token`);
  const timeoutMs = Math.min(c.timeoutSeconds, 15) * 1000;
  const health = await httpCall(url, joinPath(url, '/services/collector/health'), 'GET', {}, tls, timeoutMs);
  const healthText = health.status === 200 ? 'HEC healthy' : `health endpoint HTTP ${health.status}`;
  if (health.status >= 500) return { name, ok: false, detail: `${url.origin}: ${healthText} (${health.text.replace(/\s+/g, ' ')})` };
  // An empty POST is refused with "No data" (HTTP 400, code 5) once the token is accepted: nothing is indexed.
  const where = `${url.origin}${joinPath(url, '/services/collector/event')}`;
  const probe = await httpCall(
    url,
    joinPath(url, '/services/collector/event'),
    'POST',
    { authorization: `Splunk ${token}`, 'content-type': 'application/json' },
    tls,
    timeoutMs,
    '',
  );
  const denied = authFailure(name, where, probe, [token], 'check token / tokenFile (the HEC token, enabled, allowed on this index)');
  if (denied) return denied;
  if (probe.status === 400 || probe.status === 200) return { name, ok: true, detail: `${url.origin}: ${healthText}; token accepted` };
  return { name, ok: false, detail: `${where} answered HTTP ${probe.status}: ${redact(probe.text, [token])}` };
}

async function probeElasticsearch(
  c: Extract<SinkConfig, { type: 'elasticsearch' }>,
  name: string,
  configDir: string,
): Promise<SinkProbeResult> {
  const url = sinkUrl(c.url, c.allowInsecureHttp, `${name}: url`);
  const tls = await loadTls(c.tls, configDir, name);
  const headers: Record<string, string> = { accept: 'application/json' };
  const secrets: string[] = [];
  const auth = c.auth;
  if (auth?.type === 'basic') {
    const password = await readSecret(auth.password, auth.passwordFile, configDir, `${name}: auth.password`);
    headers['authorization'] = basic(auth.username, password);
    secrets.push(password);
  } else if (auth?.type === 'api-key') {
    const key = await readSecret(auth.apiKey, auth.apiKeyFile, configDir, `${name}: auth.apiKey`);
    headers['authorization'] = `ApiKey ${key}`;
    secrets.push(key);
  }
  const where = `${url.origin}${joinPath(url, '/')}`;
  const a = await httpCall(url, joinPath(url, '/'), 'GET', headers, tls, Math.min(c.timeoutSeconds, 15) * 1000);
  const denied = authFailure(name, where, a, secrets, 'check auth (user/password or API key, and its cluster privileges)');
  if (denied) return denied;
  if (a.status !== 200) return { name, ok: false, detail: `${where} answered HTTP ${a.status}` };
  let version = '';
  try {
    const info = JSON.parse(a.text) as { cluster_name?: string; version?: { number?: string; distribution?: string } };
    version = ` (cluster ${info.cluster_name ?? '?'}, ${info.version?.distribution ?? c.flavor} ${info.version?.number ?? '?'})`;
  } catch {
    // a proxy in front may answer something else on /: reachable is what we check
  }
  return { name, ok: true, detail: `${url.origin}: ping ok${version}` };
}

async function probeHttp(c: Extract<SinkConfig, { type: 'http' }>, name: string, configDir: string): Promise<SinkProbeResult> {
  const url = sinkUrl(c.url, c.allowInsecureHttp, `${name}: url`);
  const tls = await loadTls(c.tls, configDir, name);
  const headers: Record<string, string> = {};
  const secrets: string[] = [];
  const auth = c.auth;
  if (auth?.type === 'bearer') {
    const token = await readSecret(auth.token, auth.tokenFile, configDir, `${name}: auth.token`);
    headers['authorization'] = `Bearer ${token}`;
    secrets.push(token);
  } else if (auth?.type === 'basic') {
    const password = await readSecret(auth.password, auth.passwordFile, configDir, `${name}: auth.password`);
    headers['authorization'] = basic(auth.username, password);
    secrets.push(password);
  }
  // HEAD sends no event; any answer below 500 other than 401/403 proves reachability (405 included).
  const a = await httpCall(url, joinPath(url, ''), 'HEAD', headers, tls, Math.min(c.timeoutSeconds, 15) * 1000);
  const denied = authFailure(name, url.href, a, secrets, 'check auth');
  if (denied) return denied;
  if (a.status >= 500) return { name, ok: false, detail: `${url.href} answered HTTP ${a.status}` };
  return { name, ok: true, detail: `${url.origin}: reachable (HEAD answered ${a.status})` };
}

async function probeSyslog(c: Extract<SinkConfig, { type: 'syslog' }>, name: string, configDir: string): Promise<SinkProbeResult> {
  const port = c.port ?? DEFAULT_PORTS[c.protocol];
  const useTls = c.protocol === 'tls' || (c.protocol === 'relp' && c.relp.tls);
  const tls = useTls ? await loadTls(c.tls, configDir, name) : undefined;
  const where = `${c.protocol}://${c.host}:${port}`;
  if (c.protocol === 'relp') {
    // A RELP open and close: the receiver answers the offer, no message is sent.
    const timeoutMs = c.connectTimeoutSeconds * 1000;
    const session = await RelpSession.open({ host: c.host, port, tls, connectTimeoutMs: timeoutMs, window: 1, timeoutMs });
    await session.close();
    return { name, ok: true, detail: `${where}: RELP session accepted${tls ? ' over TLS' : ''}` };
  }
  await new Promise<void>((resolve, reject) => {
    const socket = tls
      ? tlsConnect({ host: c.host, port, ...tls, servername: tls.servername ?? c.host })
      : tcpConnect({ host: c.host, port });
    socket.setTimeout(c.connectTimeoutSeconds * 1000, () => socket.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
    socket.once(tls ? 'secureConnect' : 'connect', () => {
      socket.end();
      resolve();
    });
    socket.once('error', reject);
  });
  return { name, ok: true, detail: `${where}: ${tls ? 'TLS handshake ok' : 'TCP connection ok'}` };
}

async function probeFile(c: Extract<SinkConfig, { type: 'file' }>, name: string, configDir: string): Promise<SinkProbeResult> {
  const path = resolvePath(configDir, c.path);
  const dir = dirname(path);
  const st = await stat(dir).catch(() => undefined);
  if (!st?.isDirectory()) return { name, ok: false, detail: `${dir} does not exist or is not a directory (create it, or fix path)` };
  await access(dir, constants.W_OK);
  const existing = await stat(path).catch(() => undefined);
  if (existing) await access(path, constants.W_OK);
  return { name, ok: true, detail: `${dir} is writable` };
}

export async function probeSink(c: SinkConfig, configDir: string): Promise<SinkProbeResult> {
  const name = `sink ${c.name}`;
  try {
    switch (c.type) {
      case 'stdout':
        return { name, ok: true, detail: 'stdout' };
      case 'file':
        return await probeFile(c, name, configDir);
      case 'http':
        return await probeHttp(c, name, configDir);
      case 'splunk-hec':
        return await probeSplunk(c, name, configDir);
      case 'elasticsearch':
        return await probeElasticsearch(c, name, configDir);
      case 'syslog':
        return await probeSyslog(c, name, configDir);
    }
  } catch (e) {
    if (isSyncError(e)) return { name, ok: false, detail: e.message, code: e.code };
    const code = errorCodeOf(e);
    const message = e instanceof Error ? e.message : String(e);
    return { name, ok: false, detail: code && !message.includes(code) ? `${message} (${code})` : message };
  }
}
