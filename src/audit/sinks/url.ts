import { ConfigError } from '../../errors.ts';

/**
 * What is wrong with a sink URL, or undefined: HTTPS unless the operator opted into plain
 * HTTP for this sink (an in-cluster receiver or a loopback sidecar); credentials then travel
 * in clear text, which the docs spell out. The config schema (at load, so `validate` and the
 * daemon's start refuse it) and the sink's constructor apply this same rule.
 */
export function sinkUrlProblem(raw: string, allowInsecureHttp: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a valid URL';
  }
  if (url.username || url.password) return "must not contain credentials: use the sink's auth settings";
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && allowInsecureHttp) return undefined;
  if (url.protocol === 'http:') return 'uses plain http://; use https:// or set allowInsecureHttp: true for a trusted network';
  return `must use https:// (got ${url.protocol})`;
}

export function sinkUrl(raw: string, allowInsecureHttp: boolean, keyPath: string): URL {
  const problem = sinkUrlProblem(raw, allowInsecureHttp);
  if (problem !== undefined) throw new ConfigError(`${keyPath} ${problem}`);
  return new URL(raw);
}

/** zod refinement for a sink config with `url` and `allowInsecureHttp`: reports on the `url` key. */
export function refineSinkUrl(
  c: { url: string; allowInsecureHttp: boolean },
  ctx: { addIssue(issue: { code: 'custom'; path: string[]; message: string }): void },
): void {
  const problem = sinkUrlProblem(c.url, c.allowInsecureHttp);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', path: ['url'], message: problem });
}

/** Base path without trailing slash + suffix, keeping a proxy prefix such as /splunk. */
export function joinPath(base: URL, suffix: string): string {
  return `${base.pathname.replace(/\/+$/, '')}${suffix}${base.search}`;
}
