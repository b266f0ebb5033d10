/**
 * The Helm chart without helm: values.yaml and the ci/ values files against
 * values.schema.json (closed at every level, generated from the daemon's schema for
 * `config`), every `.Values` path a template reads against values.yaml, every YAML file
 * parsing, and the config the chart renders loading in the daemon's real config loader.
 */
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { parseAllTenants } from '../../src/config/load.ts';
import { CHART_OWNED_KEYS } from './support/chart-config-schema.ts';
import {
  chartFiles,
  hasValuesPath,
  keyPaths,
  loadValues,
  readChartFile,
  REPO_DIR,
  templateFiles,
  valuesReferences,
} from './support/chart-files.ts';
import { chartOwnedPaths, helmMerge, renderedConfig, SECRETS_DIR } from './support/helm-values.ts';
import { tuningEnv } from './support/runtime-tuning.ts';
import { validate, type JsonSchema } from './support/json-schema.ts';
import { renderSchema, spliceConfigSchema } from './support/write-values-schema.ts';

const schema = JSON.parse(readChartFile('values.schema.json')) as JsonSchema;
const defaults = loadValues();
const ciFiles = chartFiles().filter((f) => f.startsWith('ci/') && f.endsWith('-values.yaml'));
const ciValues = (f: string): Record<string, unknown> => helmMerge(defaults, loadValues(f));

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every object in a values document with its validator-style path (`a.b[0].c`). */
function objectPaths(value: unknown, path = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => objectPaths(v, `${path}[${i}]`));
  if (!isObject(value)) return [];
  return [path, ...Object.entries(value).flatMap(([k, v]) => objectPaths(v, path ? `${path}.${k}` : k))];
}

function setAt(root: Record<string, unknown>, path: string, key: string, value: unknown): void {
  let node: unknown = root;
  for (const part of path.match(/[^.[\]]+/g) ?? [])
    node = Array.isArray(node) ? node[Number(part)] : (node as Record<string, unknown>)[part];
  (node as Record<string, unknown>)[key] = value;
}

/** Schema nodes that describe objects, with where they are. */
function objectSchemas(node: unknown, where: string, out: Array<{ where: string; node: Record<string, unknown> }> = []): typeof out {
  if (Array.isArray(node)) node.forEach((n, i) => objectSchemas(n, `${where}[${i}]`, out));
  if (!isObject(node)) return out;
  const type = node['type'];
  if (type === 'object' || (Array.isArray(type) && type.includes('object'))) out.push({ where, node });
  for (const [k, v] of Object.entries(node)) {
    if (k === 'properties' || k === 'definitions')
      for (const [name, sub] of Object.entries(v as object)) objectSchemas(sub, `${where}/${k}/${name}`, out);
    else if (['items', 'additionalProperties', 'anyOf', 'oneOf', 'allOf', 'propertyNames'].includes(k))
      objectSchemas(v, `${where}/${k}`, out);
  }
  return out;
}

describe('values.schema.json', () => {
  it('accepts values.yaml and every ci/ values file merged over it', () => {
    expect(ciFiles.length).toBeGreaterThanOrEqual(2);
    expect(validate(schema, defaults)).toEqual([]);
    for (const f of ciFiles) expect({ file: f, issues: validate(schema, ciValues(f)) }).toEqual({ file: f, issues: [] });
  });

  it('closes every object: additionalProperties false, or a typed map without properties', () => {
    const nodes = objectSchemas(schema, '#');
    expect(nodes.length).toBeGreaterThan(100);
    const open = nodes.filter(
      ({ node }) =>
        !(node['additionalProperties'] === false || (isObject(node['additionalProperties']) && node['properties'] === undefined)),
    );
    expect(open.map((o) => o.where)).toEqual([]);
  });

  it('refuses an unknown key at every object level of values.yaml and the ci files', () => {
    for (const doc of [defaults, ...ciFiles.map(ciValues)]) {
      const paths = objectPaths(doc);
      expect(paths.length).toBeGreaterThan(40);
      for (const path of paths) {
        const bad = structuredClone(doc);
        setAt(bad, path, 'zzUnknownKey', 1);
        const where = path ? `${path}.zzUnknownKey` : 'zzUnknownKey';
        expect(
          validate(schema, bad).map((i) => i.path),
          `unknown key under ${path || '(root)'}`,
        ).toContain(where);
      }
    }
  });

  it('refuses what the chart or the daemon would refuse, naming the key', () => {
    const cases: Array<[string, (v: Record<string, unknown>) => void, string]> = [
      ['credentials in the Redis URL', (v) => setAt(v, 'redis', 'url', 'redis://:hunter2@redis:6379'), 'redis.url'],
      ['an HTTP port a non-root user cannot bind', (v) => setAt(v, '', 'httpPort', 80), 'httpPort'],
      ['a misspelled config section', (v) => setAt(v, 'config', 'provisoning', {}), 'config.provisoning'],
      [
        'a misspelled key deep in config',
        (v) => setAt(v, 'config', 'provisioning', { source: { type: 'file', path: 'd.yaml' }, guards: { maxDelete: 5 } }),
        'config.provisioning.guards.maxDelete',
      ],
      ['a log level the daemon does not know', (v) => setAt(v, 'config.logging', 'level', 'verbose'), 'config.logging.level'],
      ['an unknown sink type', (v) => setAt(v, 'config', 'audit', { sinks: [{ name: 's', type: 'kafka' }] }), 'config.audit.sinks[0].type'],
      ['an empty tenants list', (v) => setAt(v, 'config', 'tenants', []), 'config.tenants'],
      ['a bad image digest', (v) => setAt(v, 'image', 'digest', 'latest'), 'image.digest'],
      [
        'a Prometheus duration without unit',
        (v) => setAt(v, 'prometheusRule.thresholds', 'runWindow', '2'),
        'prometheusRule.thresholds.runWindow',
      ],
      [
        'disabling an alert that does not exist',
        (v) => setAt(v, 'prometheusRule', 'disabledAlerts', ['ScimSyncTypo']),
        'prometheusRule.disabledAlerts[0]',
      ],
      [
        'a NetworkPolicy port out of range',
        (v) => setAt(v, 'networkPolicy.redis', 'ports', [{ port: 70000 }]),
        'networkPolicy.redis.ports[0].port',
      ],
      [
        'a chart-created credential with a path in its name',
        (v) => setAt(v, 'credentials', 'values', { '../token': 'x' }),
        'credentials.values.../token',
      ],
    ];
    for (const [what, mutate, path] of cases) {
      const bad = structuredClone(defaults);
      mutate(bad);
      expect(
        validate(schema, bad).map((i) => i.path),
        what,
      ).toContain(path);
    }
  });

  it('refuses clear-text secrets in config (token, password, bindPassword, apiKey), accepting a file or a ${VAR} reference', () => {
    const platform = { baseUrl: 'https://acme.example.com', tokenFile: '/var/run/secrets/scim-audit-sync/platform-token' };
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['the platform token', { platform: { baseUrl: 'https://acme.example.com', token: 'tok-cleartext-1' } }, 'config.platform.token'],
      [
        'an LDAP bind password',
        {
          platform,
          provisioning: {
            source: {
              type: 'ldap',
              url: 'ldaps://dc.example.com',
              bindDn: 'cn=r',
              bindPassword: 'hunter2',
              users: { baseDn: 'dc=example' },
            },
          },
        },
        'config.provisioning.source.bindPassword',
      ],
      [
        'a Splunk HEC token',
        { platform, audit: { sinks: [{ type: 'splunk-hec', name: 's', url: 'https://splunk:8088', token: 'hec-cleartext' }] } },
        'config.audit.sinks[0].token',
      ],
      [
        'an Elasticsearch API key',
        {
          platform,
          audit: { sinks: [{ type: 'elasticsearch', name: 'e', url: 'https://es:9200', auth: { type: 'api-key', apiKey: 'ZXM6a2V5' } }] },
        },
        'config.audit.sinks[0].auth.apiKey',
      ],
      [
        'a basic-auth password',
        {
          platform,
          audit: { sinks: [{ type: 'http', name: 'h', url: 'https://h', auth: { type: 'basic', username: 'u', password: 'pw' } }] },
        },
        'config.audit.sinks[0].auth.password',
      ],
    ];
    for (const [what, config, path] of cases) {
      const bad = structuredClone(defaults);
      bad['config'] = config;
      expect(
        validate(schema, bad).map((i) => i.path),
        what,
      ).toContain(path);
    }
    const ok = structuredClone(defaults);
    ok['config'] = {
      platform: { baseUrl: 'https://acme.example.com', token: '${SCIM_TOKEN}' },
      audit: { sinks: [{ type: 'splunk-hec', name: 's', url: 'https://splunk:8088', tokenFile: '/var/run/secrets/scim-audit-sync/hec' }] },
    };
    expect(validate(schema, ok)).toEqual([]);
    const withDefault = structuredClone(defaults);
    withDefault['config'] = { platform: { baseUrl: 'https://acme.example.com', token: '${SCIM_TOKEN:-cleartext}' } };
    expect(validate(schema, withDefault).map((i) => i.path)).toContain('config.platform.token');
  });

  it('refuses in config every key the chart sets itself', () => {
    const owned = chartOwnedPaths();
    expect(owned).toEqual([
      'daemon.http',
      'daemon.ui.host',
      'daemon.ui.port',
      'daemon.shutdownTimeoutSeconds',
      'redis.url',
      'redis.keyPrefix',
      'redis.passwordFile',
    ]);
    for (const path of owned) {
      const [section, key, sub] = path.split('.') as [string, string, string | undefined];
      const bad = structuredClone(defaults);
      const value = key === 'http' ? { port: 1 } : sub === 'port' ? 1 : 'x';
      setAt(bad, 'config', section, { [key]: sub === undefined ? value : { [sub]: value } });
      expect(
        validate(schema, bad).map((i) => i.path),
        path,
      ).toContain(`config.${path}`);
    }
  });

  it('holds the config schema generated from src/config/schema.ts (run test/packaging/support/write-values-schema.ts after changing it)', () => {
    expect(renderSchema(spliceConfigSchema(schema))).toBe(readChartFile('values.schema.json'));
  });
});

describe('chart templates and files', () => {
  it('parses every YAML and JSON file that is not a Go template', () => {
    const plain = chartFiles().filter((f) => !f.startsWith('templates/') && /\.(ya?ml|json)$/.test(f));
    expect(plain).toEqual(
      expect.arrayContaining([
        'Chart.yaml',
        'values.yaml',
        'values.schema.json',
        'files/prometheus-rules.yaml',
        'dashboards/scim-audit-sync.json',
      ]),
    );
    for (const f of plain) {
      if (f.endsWith('.json')) expect(() => JSON.parse(readChartFile(f)), f).not.toThrow();
      else
        for (const d of parseAllDocuments(readChartFile(f)))
          expect({ f, errors: 'errors' in d ? d.errors.map((e) => e.message) : [] }).toEqual({ f, errors: [] });
    }
  });

  it('reads only values that values.yaml defines', () => {
    const files = templateFiles();
    expect(files).toEqual(
      expect.arrayContaining(['templates/_helpers.tpl', 'templates/deployment.yaml', 'templates/NOTES.txt', 'files/prometheus-rules.yaml']),
    );
    const missing = files.flatMap((f) =>
      valuesReferences(readChartFile(f))
        .filter((r) => !hasValuesPath(defaults, r))
        .map((r) => `${f}: .Values.${r}`),
    );
    expect(missing).toEqual([]);
  });

  it('uses every value values.yaml defines (no dead settings)', () => {
    const used = templateFiles().flatMap((f) => valuesReferences(readChartFile(f)));
    const unused = keyPaths(defaults).filter((p) => !used.some((u) => p === u || p.startsWith(`${u}.`) || u.startsWith(`${p}.`)));
    expect(unused).toEqual([]);
  });

  it('sets in the config helper exactly the keys the schema takes out of config', () => {
    const helpers = readChartFile('templates/_helpers.tpl');
    const body = helpers.slice(helpers.indexOf('define "scim-audit-sync.config"'));
    for (const [section, keys] of Object.entries(CHART_OWNED_KEYS)) {
      expect(body).toContain(`set $cfg "${section}"`);
      for (const k of keys) expect(body, `${section}.${k}`).toContain(`"${k.split('.').at(-1)}"`);
    }
  });

  it('has a Chart.yaml Helm 3 accepts, versioned like the daemon', () => {
    const chart = parse(readChartFile('Chart.yaml')) as Record<string, unknown>;
    const pkg = JSON.parse(readFileSync(join(REPO_DIR, 'package.json'), 'utf8')) as { version: string };
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'scim-audit-sync', type: 'application', appVersion: pkg.version });
    expect(chart['version']).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
  });

  it('ships every resource of the issue', () => {
    const kinds = templateFiles()
      .filter((f) => f.startsWith('templates/') && f.endsWith('.yaml'))
      .flatMap((f) => [...readChartFile(f).matchAll(/^kind: (\w+)$/gm)].map((m) => m[1]));
    expect(new Set(kinds)).toEqual(
      new Set([
        'Deployment',
        'ConfigMap',
        'Secret',
        'Service',
        'ServiceAccount',
        'PodDisruptionBudget',
        'NetworkPolicy',
        'ServiceMonitor',
        'PrometheusRule',
        'Pod',
        'Ingress',
      ]),
    );
    expect(readChartFile('templates/tests/test-readiness.yaml')).toMatch(/helm\.sh\/hook: test[\s\S]*\/readyz/);
  });
});

describe('docs/kubernetes.md', () => {
  it('covers installing, secrets, Redis, scaling, upgrading and alerts, and names every top-level value', () => {
    const docs = readFileSync(join(REPO_DIR, 'docs/kubernetes.md'), 'utf8');
    const headings = [...docs.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    expect(headings).toEqual(
      expect.arrayContaining([
        'Build the image',
        'Install with Helm',
        'Secrets',
        'Redis requirements',
        'Scaling replicas',
        'Upgrading',
        'Monitoring',
        'Alerts',
      ]),
    );
    expect(Object.keys(defaults).filter((k) => !docs.includes(`\`${k}\``))).toEqual([]);
  });
});

describe('defaults a platform team reviews', () => {
  it('runs hardened: non-root numeric user, read-only root, no escalation, no capabilities, RuntimeDefault seccomp, no API token', () => {
    expect(defaults['podSecurityContext']).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 10001,
      fsGroup: 10001,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(defaults['containerSecurityContext']).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      privileged: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    const deployment = readChartFile('templates/deployment.yaml');
    expect(deployment).toContain('automountServiceAccountToken: false');
    expect(readChartFile('templates/serviceaccount.yaml')).toContain('automountServiceAccountToken: false');
    // The only writable path: an emptyDir on /tmp, also what TMPDIR points at.
    expect(deployment).toMatch(/- name: tmp\s+mountPath: \/tmp/);
    expect(deployment).toMatch(/name: TMPDIR\s+value: \/tmp/);
    // No runtime tuning: Node sizes its heap from the container's limit.
    const envNames = [...deployment.matchAll(/- name: ([A-Z_][A-Z0-9_]*)\s+value/g)].map((m) => m[1] as string);
    expect(envNames).toEqual(expect.arrayContaining(['NODE_ENV', 'TMPDIR']));
    expect(tuningEnv(envNames)).toEqual([]);
    expect(deployment).toMatch(/command: \["node", "bin\/scim-audit-sync\.mjs"\]/);
  });

  it('probes /healthz and /readyz, and outlives the shutdown bound', () => {
    const deployment = readChartFile('templates/deployment.yaml');
    for (const [probe, path] of [
      ['startupProbe', '/healthz'],
      ['livenessProbe', '/healthz'],
      ['readinessProbe', '/readyz'],
    ]) {
      expect(deployment).toMatch(new RegExp(`${probe}:\\s+httpGet:\\s+path: ${path}`));
    }
    expect(defaults['terminationGracePeriodSeconds'] as number).toBeGreaterThanOrEqual((defaults['shutdownTimeoutSeconds'] as number) + 5);
    expect(deployment).toContain('terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}');
    expect(readChartFile('templates/_helpers.tpl')).toContain('"shutdownTimeoutSeconds" .Values.shutdownTimeoutSeconds');
  });

  it('scales out and survives disruptions by default', () => {
    expect(defaults['replicaCount'] as number).toBeGreaterThanOrEqual(2);
    expect(defaults).toMatchObject({
      podDisruptionBudget: { enabled: true, maxUnavailable: 1 },
      topologySpread: { enabled: true },
      networkPolicy: { enabled: true },
    });
    expect(defaults['resources']).toMatchObject({
      requests: { cpu: expect.any(String), memory: expect.any(String) },
      limits: { memory: expect.any(String) },
    });
  });

  it('keeps Redis external and credentials out of values by default', () => {
    expect(defaults['redis']).toMatchObject({ url: '', password: '', existingSecret: '' });
    expect(defaults['platformToken']).toMatchObject({ value: '', existingSecret: '' });
    expect(chartFiles().some((f) => /redis/i.test(f) && f.startsWith('templates/'))).toBe(false);
  });
});

describe('the config the chart renders', () => {
  const work = mkdtempSync(join(tmpdir(), 'scim-chart-config-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  /** Loads the rendered config with the daemon's loader, secrets mounted where the chart mounts them (a temp dir here). */
  async function load(values: Record<string, unknown>, name: string): Promise<Awaited<ReturnType<typeof parseAllTenants>>> {
    const secrets = join(work, name, 'secrets');
    const text = stringify(renderedConfig(values)).replaceAll(SECRETS_DIR, secrets);
    for (const m of text.matchAll(new RegExp(`${secrets.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/[-._a-zA-Z0-9]+`, 'g'))) {
      mkdirSync(dirname(m[0]), { recursive: true });
      writeFileSync(m[0], `secret-for-${name}\n`);
    }
    return parseAllTenants(text, join(work, name), {}, `${name} config`);
  }

  it('loads, for every ci/ values file, with the chart-owned keys in place', async () => {
    for (const f of ciFiles) {
      const values = ciValues(f);
      const tenants = await load(values, f.replace(/\W/g, '_'));
      const config = values['config'] as Record<string, unknown>;
      const expected = Array.isArray(config['tenants'])
        ? (config['tenants'] as Array<{ tenant: string }>).map((t) => t.tenant)
        : [config['tenant']];
      expect(tenants.map((t) => t.config.tenant)).toEqual(expected);
      for (const t of tenants) {
        expect(t.config.daemon.http).toEqual({ host: '0.0.0.0', port: values['httpPort'] });
        expect(t.config.daemon.shutdownTimeoutSeconds).toBe(values['shutdownTimeoutSeconds']);
        expect(t.config.redis).toMatchObject({
          url: (values['redis'] as { url: string }).url,
          keyPrefix: (values['redis'] as { keyPrefix: string }).keyPrefix,
        });
        expect(t.secrets.files.has('redis.passwordFile')).toBe(true);
        expect(t.secrets.platformToken.reveal()).toMatch(/^secret-for-/);
        expect(t.config.state.dir.startsWith('/tmp/')).toBe(true);
      }
    }
  });

  it('loads for the examples in docs/kubernetes.md, the chart README and the commented example in values.yaml', async () => {
    const yamlBlocks = (md: string): string[] => [...md.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] as string);
    const docs = yamlBlocks(readFileSync(join(REPO_DIR, 'docs/kubernetes.md'), 'utf8'));
    const readme = yamlBlocks(readChartFile('README.md'));
    // values.yaml: the `# Example` block under config, uncommented.
    const lines = readChartFile('values.yaml').split('\n');
    const start = lines.findIndex((l) => l.startsWith('  # Example')) + 1;
    const end = lines.findIndex((l, i) => i >= start && !l.startsWith('  # '));
    const commented = `config:\n${lines
      .slice(start, end)
      .map((l) => `  ${l.slice(4)}`)
      .join('\n')}\nplatformToken: { existingSecret: t }\nredis: { url: "redis://redis:6379" }\n`;
    const examples = [...docs, ...readme, commented];
    expect(examples.length).toBe(4);
    for (const [i, text] of examples.entries()) {
      const values = helmMerge(defaults, parse(text) as Record<string, unknown>);
      expect({ example: i, issues: validate(schema, values) }).toEqual({ example: i, issues: [] });
      const [tenant] = await load(values, `example${i}`);
      expect(tenant?.config.platform.baseUrl).toMatch(/^https:\/\//);
    }
  });

  it('would be refused by the daemon if a tenant of a multi-tenant config kept a top-level platform', async () => {
    const values = ciValues('ci/multi-tenant-values.yaml');
    (values['config'] as Record<string, unknown>)['platform'] = { baseUrl: 'https://x.example.com', tokenFile: `${SECRETS_DIR}/t` };
    await expect(load(values, 'mixed')).rejects.toThrow(/invalid/);
  });
});
