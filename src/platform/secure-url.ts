/**
 * The HTTPS rule for the platform's URL, in a module of its own so the config schema can
 * apply it at load without importing the HTTP client.
 */
import { ErrorCodes, SyncError } from '../errors.ts';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK.has(hostname) || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/** HTTPS only, unless explicitly allowed for a loopback host (tests, simulator, sidecars). */
export function assertSecureUrl(raw: string, allowInsecureHttp: boolean, keyPath = 'platform.baseUrl'): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SyncError(ErrorCodes.INSECURE_URL, 'fatal', `${keyPath} is not a valid URL`);
  }
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:') {
    if (!allowInsecureHttp) {
      throw new SyncError(
        ErrorCodes.INSECURE_URL,
        'fatal',
        `${keyPath} uses plain http://; the platform only accepts HTTPS (set platform.allowInsecureHttp: true only for a loopback test server)`,
      );
    }
    if (!isLoopbackHost(url.hostname)) {
      throw new SyncError(
        ErrorCodes.INSECURE_URL,
        'fatal',
        `${keyPath}: plain http:// is allowed only for loopback hosts, not ${url.hostname}`,
      );
    }
    return url;
  }
  throw new SyncError(ErrorCodes.INSECURE_URL, 'fatal', `${keyPath} must use https:// (got ${url.protocol})`);
}
