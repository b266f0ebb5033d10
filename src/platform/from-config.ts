/**
 * Config → PlatformClient options, in one place for every command: units are converted
 * here (seconds → ms, megabytes → bytes) so the client only ever sees its own units.
 */
import type { LoadedConfig } from '../config/load.ts';
import { VERSION } from '../version.ts';
import { PlatformClient, type PlatformClientOptions } from './http-client.ts';
import type { RetryPolicy } from './retry.ts';

export type PlatformConfigSource = Pick<LoadedConfig, 'config' | 'secrets'>;

/** `overrides.retry` is merged into the configured policy, e.g. `{ retry: { maxAttempts: 2 } }` for a quick probe. */
export function platformClientOptions(loaded: PlatformConfigSource, overrides: Partial<PlatformClientOptions> = {}): PlatformClientOptions {
  const p = loaded.config.platform;
  const timeoutMs = p.timeoutSeconds * 1000;
  const ca = loaded.secrets.files.get('platform.caFile')?.reveal();
  const retry: RetryPolicy = {
    maxAttempts: p.retry.maxAttempts,
    baseDelayMs: p.retry.baseDelayMs,
    maxDelayMs: p.retry.maxDelayMs,
    maxRetryAfterMs: p.retry.maxRetryAfterSeconds * 1000,
  };
  return {
    baseUrl: p.baseUrl,
    token: loaded.secrets.platformToken.reveal(),
    authScheme: p.authScheme,
    allowInsecureHttp: p.allowInsecureHttp,
    maxConnections: p.maxConnections,
    connectTimeoutMs: Math.min(timeoutMs, 10_000),
    headersTimeoutMs: timeoutMs,
    bodyTimeoutMs: timeoutMs,
    maxResponseBytes: Math.round(p.maxResponseMegabytes * 1024 * 1024),
    userAgent: `scim-audit-sync/${VERSION}`,
    ...(ca !== undefined ? { ca } : {}),
    ...overrides,
    retry: { ...retry, ...overrides.retry },
  };
}

export function createPlatformClient(loaded: PlatformConfigSource, overrides: Partial<PlatformClientOptions> = {}): PlatformClient {
  return new PlatformClient(platformClientOptions(loaded, overrides));
}
