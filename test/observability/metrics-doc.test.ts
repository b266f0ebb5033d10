/** docs/metrics.md stays in step with the registry: every metric documented, no stale names. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { allMetricNames, allSeriesNames } from '../../src/observability/metrics-catalog.ts';
import { METRIC_PREFIX, registry } from '../../src/observability/metrics.ts';
import { selectors } from '../packaging/support/promql.ts';

const doc = readFileSync(new URL('../../docs/metrics.md', import.meta.url), 'utf8');

function defaults(): Set<string> {
  const scratch = new Registry();
  collectDefaultMetrics({ register: scratch, prefix: METRIC_PREFIX });
  return new Set(scratch.getMetricsAsArray().map((m) => m.name));
}

describe('docs/metrics.md', () => {
  it('documents every metric the daemon registers (process defaults as a family)', () => {
    const d = defaults();
    const own = allMetricNames().filter((n) => !d.has(n));
    expect(own.length).toBeGreaterThan(30);
    const missing = own.filter((n) => !doc.includes(`\`${n}\``));
    expect(missing).toEqual([]);
  });

  it('mentions only names that exist (so its alerts and panels query real series)', () => {
    const known = new Set([...allSeriesNames(), ...allMetricNames()]);
    const mentioned = new Set(doc.match(/scimsync_[a-z0-9_]+[a-z0-9]/g) ?? []);
    expect(mentioned.size).toBeGreaterThan(30);
    // `scimsync_process_*` / `scimsync_nodejs_*` are written as families.
    const unknown = [...mentioned].filter((n) => !known.has(n) && n !== 'scimsync_process' && n !== 'scimsync_nodejs');
    expect(unknown).toEqual([]);
  });

  it('example alerts match only labels the daemon exports (never the target label `job` on a scimsync_ series)', () => {
    const block = /## Example alerts[\s\S]*?```yaml\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
    const exprs = [...block.matchAll(/expr: ([\s\S]*?)(?=\n\s*(?:for:|#|- alert:|$))/g)].map((m) => m[1]!.replace(/\s+/g, ' '));
    expect(exprs.length).toBeGreaterThan(10);
    const bad: string[] = [];
    for (const expr of exprs) {
      for (const sel of selectors(expr)) {
        if (!sel.metric.startsWith(METRIC_PREFIX)) continue;
        const base = allMetricNames().find((n) => sel.metric === n || [`${n}_bucket`, `${n}_sum`, `${n}_count`].includes(sel.metric));
        const own = (registry.getSingleMetric(base ?? '') as unknown as { labelNames?: string[] } | undefined)?.labelNames ?? [];
        for (const l of sel.labels) if (!own.includes(l)) bad.push(`${sel.metric}{${l}}`);
      }
    }
    expect(bad).toEqual([]);
  });
});
