/**
 * The two pieces of Helm's behaviour the value tests need: how a values file is merged over
 * the defaults, and the daemon config the chart's ConfigMap ends up holding (the keys
 * templates/_helpers.tpl adds to `config`).
 */
import { CHART_OWNED_KEYS } from './chart-config-schema.ts';

type Values = Record<string, unknown>;

const isObject = (v: unknown): v is Values => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Helm's coalescing: maps merge key by key, anything else (lists included) replaces, null deletes. */
export function helmMerge(base: Values, override: Values): Values {
  const out: Values = structuredClone(base);
  for (const [k, v] of Object.entries(override)) {
    if (v === null) delete out[k];
    else if (isObject(v) && isObject(out[k])) out[k] = helmMerge(out[k] as Values, v);
    else out[k] = structuredClone(v);
  }
  return out;
}

export const SECRETS_DIR = '/var/run/secrets/scim-audit-sync';

/**
 * What `include "scim-audit-sync.config"` renders for these values: `config` plus the
 * chart-owned keys. Mirrors the helper; the tests tie the two together through
 * CHART_OWNED_KEYS.
 */
export function renderedConfig(values: Values): Values {
  const cfg = structuredClone((values['config'] as Values | undefined) ?? {});
  const redisValues = values['redis'] as Values;
  const token = values['platformToken'] as Values;
  const platform = cfg['platform'] as Values | undefined;
  if (platform && !('token' in platform) && !('tokenFile' in platform) && (token['existingSecret'] || token['value'])) {
    platform['tokenFile'] = `${SECRETS_DIR}/platform-token`;
  }
  const redis: Values = { ...((cfg['redis'] as Values | undefined) ?? {}), url: redisValues['url'], keyPrefix: redisValues['keyPrefix'] };
  if (redisValues['existingSecret'] || redisValues['password']) redis['passwordFile'] = `${SECRETS_DIR}/redis-password`;
  cfg['redis'] = redis;
  const daemon = (cfg['daemon'] as Values | undefined) ?? {};
  const ui = values['ui'] as { port: number; ingressFrom: unknown[]; oauth2Proxy: { enabled: boolean } };
  const ingress = values['ingress'] as { enabled: boolean; host: string };
  const userUi = (daemon['ui'] as Values | undefined) ?? {};
  const exposed = !ui.oauth2Proxy.enabled && (ui.ingressFrom.length > 0 || ingress.enabled);
  cfg['daemon'] = {
    ...daemon,
    http: { host: '0.0.0.0', port: values['httpPort'] },
    ui: {
      ...userUi,
      host: exposed ? '0.0.0.0' : '127.0.0.1',
      port: ui.port,
      // The release's Service names (release "scim" in namespace "identity" in these tests) and the Ingress host.
      allowedHosts: [
        ...['', '.identity', '.identity.svc', '.identity.svc.cluster.local'].map((s) => `scim-scim-audit-sync${s}`),
        ...(ingress.host ? [ingress.host] : []),
        ...((userUi['allowedHosts'] as string[] | undefined) ?? []),
      ],
      ...(ui.oauth2Proxy.enabled ? { trustedProxy: { addresses: ['127.0.0.1'] } } : {}),
    },
    shutdownTimeoutSeconds: values['shutdownTimeoutSeconds'],
  };
  cfg['state'] = { dir: '/tmp/scim-audit-sync', ...((cfg['state'] as Values | undefined) ?? {}) };
  return cfg;
}

/** The chart-owned key paths, e.g. `daemon.http`, `redis.url`. */
export function chartOwnedPaths(): string[] {
  return Object.entries(CHART_OWNED_KEYS).flatMap(([section, keys]) => keys.map((k) => `${section}.${k}`));
}
