/**
 * The JSON schema of the chart's `config` value, derived from the daemon's own zod schema
 * (src/config/schema.ts) so `helm install` refuses exactly the keys the daemon would, and
 * clear-text secrets on top (refuseClearTextSecrets). Rules
 * a JSON schema cannot express (token xor tokenFile, URL checks) stay with the daemon, which
 * validates again at start. write-values-schema.ts splices the result into
 * values.schema.json; the tests fail when the two drift apart.
 */
import { z } from 'zod';
import { configSchema } from '../../../src/config/schema.ts';
import type { JsonSchema } from './json-schema.ts';

/**
 * Keys the chart sets from its own values (templates/_helpers.tpl), so `config` must not:
 * the HTTP port must match the container port and probes, the status page's bind address and
 * port must match its container port and the NetworkPolicy (`ui`), the shutdown bound must
 * stay under terminationGracePeriodSeconds, and the Redis password comes from a mounted
 * Secret. A dotted key is one level down (`ui.port`: `daemon.ui.port`).
 */
export const CHART_OWNED_KEYS: Readonly<Record<'daemon' | 'redis', readonly string[]>> = {
  daemon: ['http', 'ui.host', 'ui.port', 'shutdownTimeoutSeconds'],
  redis: ['url', 'keyPrefix', 'passwordFile'],
};

const SECTIONS = ['platform', 'provisioning', 'audit', 'state', 'redis', 'logging', 'schedules', 'daemon'] as const;

const SECTION_DOCS: Record<(typeof SECTIONS)[number] | 'tenant', string> = {
  tenant: 'Tenant id used in state keys, metrics and logs (lower-case, not secret).',
  platform: 'The platform API: baseUrl, token/tokenFile, retries, SCIM dialect (README "Configuration reference").',
  provisioning: 'Source, mapping, scope, matching, ownership, deprovisioning, guards (docs/reconcile.md, docs/sources.md).',
  audit: 'Audit-log export windows, columns, field style and sinks (docs/sinks.md).',
  state: 'One-shot state directory; the chart defaults it to /tmp/scim-audit-sync (the daemon keeps state in Redis).',
  redis: `Redis options beyond the chart's redis values: username, tls, sentinel, cluster, connectTimeoutSeconds, failoverTimeoutSeconds (set by the chart: ${CHART_OWNED_KEYS.redis.join(', ')}).`,
  logging: 'Log level.',
  schedules: 'Cron patterns (UTC) of the reconcile, audit and audit-verify jobs (docs/daemon.md).',
  daemon: `Worker concurrency, apply chunking, rate limit, job attempts, quarantine (docs/daemon.md; set by the chart: ${CHART_OWNED_KEYS.daemon.join(', ')}).`,
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Drops what Helm's validators treat inconsistently (`format`) and zod's integer noise bounds. */
function tidy(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tidy);
  if (!isObject(node)) return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'format' && typeof v === 'string') continue;
    if ((k === 'maximum' && v === Number.MAX_SAFE_INTEGER) || (k === 'minimum' && v === Number.MIN_SAFE_INTEGER)) continue;
    out[k] =
      k === 'properties' || k === 'definitions' ? Object.fromEntries(Object.entries(v as object).map(([n, s]) => [n, tidy(s)])) : tidy(v);
  }
  return out;
}

/** `${VAR}`: the value comes from an environment variable (set from a Secret), not from the values file. */
export const ENV_REFERENCE = '^\\$\\{[A-Za-z_][A-Za-z0-9_]*\\}$';

/**
 * Clear-text secrets are refused in the chart's `config`: values files end up in Git and in
 * the Helm release (a Secret readable by anyone who can read releases). Every key that has a
 * `<key>File` twin (token, password, bindPassword, apiKey…) accepts only a `${VAR}` reference;
 * the secret itself comes from a Secret: mounted as a file (`<key>File`, the chart's
 * `credentials` / `platformToken`) or exposed as the variable.
 */
export function refuseClearTextSecrets(node: unknown, path = ''): string[] {
  const restricted: string[] = [];
  const walk = (n: unknown, at: string): void => {
    if (Array.isArray(n)) {
      n.forEach((x, i) => walk(x, `${at}[${i}]`));
      return;
    }
    if (!isObject(n)) return;
    const props = n['properties'];
    if (isObject(props)) {
      for (const key of Object.keys(props)) {
        if (!(`${key}File` in props)) continue;
        props[key] = {
          type: 'string',
          pattern: ENV_REFERENCE,
          description: `No clear-text secret in the chart's config: use ${key}File (a file mounted from a Secret by the chart, see credentials) or "\${VAR}" with VAR set from a Secret.`,
        };
        restricted.push(`${at}.${key}`);
      }
    }
    for (const [k, v] of Object.entries(n)) walk(v, `${at}/${k}`);
  };
  walk(node, path);
  return restricted;
}

function withoutKeys(schema: JsonSchema, keys: readonly string[]): JsonSchema {
  const props = { ...(schema['properties'] as Record<string, unknown>) };
  const nested = new Map<string, string[]>();
  for (const k of keys.filter((key) => key.includes('.'))) {
    const [head, ...rest] = k.split('.') as [string, ...string[]];
    nested.set(head, [...(nested.get(head) ?? []), rest.join('.')]);
  }
  for (const [head, sub] of nested) {
    if (!(head in props))
      throw new Error(`the daemon schema has no key ${head} any more: update CHART_OWNED_KEYS and templates/_helpers.tpl`);
    props[head] = withoutKeys(props[head] as JsonSchema, sub);
  }
  for (const k of keys.filter((key) => !key.includes('.'))) {
    if (!(k in props)) throw new Error(`the daemon schema has no key ${k} any more: update CHART_OWNED_KEYS and templates/_helpers.tpl`);
    delete props[k];
  }
  const required = ((schema['required'] as string[] | undefined) ?? []).filter((k) => !keys.includes(k));
  const { required: _dropped, ...rest } = schema;
  return { ...rest, properties: props, ...(required.length > 0 ? { required } : {}) };
}

export interface ChartConfigSchema {
  /** The schema of `config` (one tenant, or a `tenants:` list with shared keys). */
  config: JsonSchema;
  /** Section schemas referenced from `config` as `#/definitions/config.<section>`. */
  definitions: Record<string, JsonSchema>;
}

export function chartConfigSchema(): ChartConfigSchema {
  const shape = configSchema.shape;
  // Each section is emitted once, under a readable name, and referenced from both shapes.
  const names = z.registry<{ id: string; description: string }>();
  names.add(shape.tenant, { id: 'config.tenant', description: SECTION_DOCS.tenant });
  for (const s of SECTIONS) names.add(shape[s], { id: `config.${s}`, description: SECTION_DOCS[s] });

  const tenantEntry = z.strictObject({
    tenant: shape.tenant.unwrap(),
    platform: shape.platform,
    provisioning: shape.provisioning,
    audit: shape.audit,
    schedules: shape.schedules,
  });
  const multiTenant = z.strictObject({
    tenants: z.array(tenantEntry).min(1),
    state: shape.state,
    redis: shape.redis,
    logging: shape.logging,
    daemon: shape.daemon,
  });
  const generated = tidy(
    z.toJSONSchema(z.union([configSchema, multiTenant]), { io: 'input', target: 'draft-7', metadata: names, unrepresentable: 'throw' }),
  ) as JsonSchema;

  const definitions = { ...(generated['definitions'] as Record<string, JsonSchema>) };
  for (const section of ['daemon', 'redis'] as const) {
    definitions[`config.${section}`] = withoutKeys(definitions[`config.${section}`] as JsonSchema, CHART_OWNED_KEYS[section]);
  }
  refuseClearTextSecrets(definitions);
  const [single, multi] = generated['anyOf'] as [JsonSchema, JsonSchema];
  refuseClearTextSecrets(single);
  refuseClearTextSecrets(multi);
  // `platform` is checked by the chart's template instead, which can say "platform or tenants".
  const { required: _platform, ...singleTenant } = single;
  return {
    config: {
      description:
        'The daemon configuration (config.yaml). One tenant: tenant, platform, provisioning, audit, schedules at the top; several: a tenants list. Validated again by the daemon at start.',
      anyOf: [
        { description: 'One tenant.', ...singleTenant },
        { description: 'Several tenants sharing state, redis, logging and daemon.', ...multi },
      ],
    },
    definitions,
  };
}
