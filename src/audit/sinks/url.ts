import { ConfigError } from '../../platform/errors.ts';

/**
 * HTTPS unless the operator opted into plain HTTP for this sink (an in-cluster receiver or a
 * loopback sidecar); credentials then travel in clear text, which the docs spell out.
 */
export function sinkUrl(raw: string, allowInsecureHttp: boolean, keyPath: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${keyPath} is not a valid URL`);
  }
  if (url.username || url.password) throw new ConfigError(`${keyPath} must not contain credentials: use the sink's auth settings`);
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && allowInsecureHttp) return url;
  if (url.protocol === 'http:') throw new ConfigError(`${keyPath} uses plain http://; use https:// or set allowInsecureHttp: true for a trusted network`);
  throw new ConfigError(`${keyPath} must use https:// (got ${url.protocol})`);
}

/** Base path without trailing slash + suffix, keeping a proxy prefix such as /splunk. */
export function joinPath(base: URL, suffix: string): string {
  return `${base.pathname.replace(/\/+$/, '')}${suffix}${base.search}`;
}
