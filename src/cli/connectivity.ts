/**
 * Read-only probes for `validate --check-connectivity`: one GET to the platform's SCIM
 * endpoint, the source's own `check()` and each sink's health check (audit/sinks/probe.ts). Each ends ok or failed with the classified
 * message; none throws, so every check is reported even when the first fails.
 */
import type { LoadedConfig } from '../config/load.ts';
import type { Logger } from '../observability/logger.ts';
import { isSyncError, ErrorCodes } from '../errors.ts';
import { createPlatformClient } from '../platform/from-config.ts';
import type { PlatformClient } from '../platform/http-client.ts';
import type { ListResponse, ServiceProviderConfig } from '../platform/scim/types.ts';
import { createSource, sourceContext } from '../sources/registry.ts';

export interface CheckResult {
  /** `platform`, `source` or `sink NAME`. */
  name: string;
  ok: boolean;
  detail: string;
  /** Stable error code when failed (E_AUTH_INVALID…). */
  code?: string;
}

function failed(name: string, e: unknown): CheckResult {
  if (isSyncError(e)) return { name, ok: false, detail: e.message, code: e.code };
  return { name, ok: false, detail: e instanceof Error ? e.message : String(e) };
}

export async function checkPlatform(loaded: LoadedConfig, signal?: AbortSignal): Promise<CheckResult> {
  let client: PlatformClient;
  try {
    // Two attempts: enough to ride out a blip, short enough for an interactive check.
    // Read-only: a connectivity check can never write (non-GET requests fail with E_READ_ONLY).
    client = createPlatformClient(loaded, { retry: { maxAttempts: 2 }, readOnly: true });
  } catch (e) {
    return failed('platform', e);
  }
  const scim = loaded.config.platform.scimPath.replace(/\/+$/, '');
  const where = `${client.baseUrl.origin}${client.resolvePath(scim)}`;
  try {
    try {
      const res = await client.requestJson<ServiceProviderConfig>('GET', `${scim}/ServiceProviderConfig`, {
        route: 'scim_service_provider_config',
        what: 'GET ServiceProviderConfig',
        ...(signal ? { signal } : {}),
      });
      const spc = res.body;
      const patch = spc?.patch?.supported === true ? 'PATCH supported' : 'PATCH not advertised';
      const filter =
        spc?.filter?.supported === true ? `filter supported (maxResults ${spc.filter.maxResults ?? '?'})` : 'filter not advertised';
      return { name: 'platform', ok: true, detail: `${where}: ServiceProviderConfig read; ${patch}, ${filter}` };
    } catch (e) {
      // Some servers do not publish ServiceProviderConfig; a one-item user list proves the same.
      if (!(isSyncError(e) && e.code === ErrorCodes.NOT_FOUND)) throw e;
    }
    const res = await client.requestJson<ListResponse<unknown>>('GET', `${scim}/Users`, {
      route: 'scim_users',
      what: 'GET Users',
      query: { count: 1 },
      ...(signal ? { signal } : {}),
    });
    return {
      name: 'platform',
      ok: true,
      detail: `${where}: Users readable (totalResults ${res.body?.totalResults ?? 'unknown'}); no ServiceProviderConfig`,
    };
  } catch (e) {
    return failed('platform', e);
  } finally {
    await client.close();
  }
}

export async function checkSource(loaded: LoadedConfig, logger: Logger, signal?: AbortSignal): Promise<CheckResult | undefined> {
  const sourceConfig = loaded.config.provisioning?.source;
  if (sourceConfig === undefined) return undefined;
  try {
    const source = await createSource(sourceConfig, sourceContext(loaded, logger));
    try {
      return { name: 'source', ok: true, detail: `${source.describe}: ${await source.check(signal)}` };
    } finally {
      await source.close?.();
    }
  } catch (e) {
    return failed('source', e);
  }
}

/** Every audit sink, probed side by side (audit/sinks/probe.ts); an empty list without an audit section. */
export async function checkSinks(loaded: LoadedConfig): Promise<CheckResult[]> {
  const sinks = loaded.config.audit?.sinks ?? [];
  const { probeSink } = await import('../audit/sinks/probe.ts');
  return Promise.all(sinks.map((s) => probeSink(s, loaded.configDir)));
}
