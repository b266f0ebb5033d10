/**
 * Small charts of a tenant's last runs (duration, changes, failures) and of the audit lag,
 * from the run history the daemon already keeps (daemon.historyLength runs per kind, in the
 * /status document). Counts and durations only: nothing personal, so the redacted view shows
 * them too. The page embeds the series as JSON (a data block, not a script, so the strict CSP
 * holds) and app.js draws them with uPlot, served by the daemon from node_modules; without
 * scripts the run tables above say the same.
 */
import { html, SafeHtml } from './html.ts';
import type { RunView } from './view.ts';

export interface ChartSeries {
  /** Run end times, epoch seconds, oldest first. */
  t: number[];
  values: Record<string, number[]>;
}

export interface TenantCharts {
  reconcile: ChartSeries;
  auditLag: ChartSeries;
}

const CHANGE_KEYS = [
  'usersCreate',
  'usersUpdate',
  'usersReactivate',
  'usersDeactivate',
  'usersDelete',
  'groupsCreate',
  'groupsUpdate',
  'groupsDelete',
  'membersAdd',
  'membersRemove',
] as const;

const epoch = (iso: string): number => Math.floor(Date.parse(iso) / 1000);

/** Planned changes of a run (its plan summary), 0 without one. */
export function runChanges(run: RunView): number {
  const s = run.detail['summary'];
  if (!s || typeof s !== 'object') return 0;
  const counts = s as Record<string, unknown>;
  return CHANGE_KEYS.reduce((n, k) => n + (typeof counts[k] === 'number' ? (counts[k] as number) : 0), 0);
}

/** Failed operations of a run; a run that failed as a whole counts 1. */
export function runFailures(run: RunView): number {
  const f = run.detail['failed'];
  if (typeof f === 'number') return f;
  return run.result === 'failed' ? 1 : 0;
}

export function tenantCharts(reconcileRuns: RunView[], auditRuns: RunView[]): TenantCharts {
  const rec = [...reconcileRuns].filter((r) => Number.isFinite(Date.parse(r.finishedAt))).reverse();
  const lagPoints = [...auditRuns].reverse().flatMap((r) => {
    const cursor = r.detail['cursor'];
    if (typeof cursor !== 'string') return [];
    const t = epoch(r.finishedAt);
    const lag = t - epoch(cursor);
    return Number.isFinite(lag) ? [{ t, lag: Math.max(0, lag) }] : [];
  });
  return {
    reconcile: {
      t: rec.map((r) => epoch(r.finishedAt)),
      values: {
        duration: rec.map((r) => Math.round(r.durationMs / 100) / 10),
        changes: rec.map(runChanges),
        failures: rec.map(runFailures),
      },
    },
    auditLag: { t: lagPoints.map((p) => p.t), values: { lag: lagPoints.map((p) => p.lag) } },
  };
}

/** JSON safe inside a `<script type="application/json">` block: no `<`, `>` or `&` survives to end it. */
export function jsonForHtml(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function chartsSection(c: TenantCharts): SafeHtml {
  const figure = (id: string, caption: string, points: number): SafeHtml =>
    html`<figure class="chart" id="${id}" data-points="${points}"><figcaption>${caption}</figcaption><div class="plot"></div></figure>`;
  const none = c.reconcile.t.length === 0 && c.auditLag.t.length === 0;
  return html`<section aria-labelledby="charts-h">
<h2 id="charts-h">Trends</h2>
${
  none
    ? html`<p class="muted">No runs yet.</p>`
    : html`<div class="charts">
${figure('chart-duration', `Reconcile duration, seconds (last ${c.reconcile.t.length} runs)`, c.reconcile.t.length)}
${figure('chart-changes', 'Reconcile changes and failures per run', c.reconcile.t.length)}
${c.auditLag.t.length > 0 ? figure('chart-audit-lag', `Audit lag at the end of each run, seconds (last ${c.auditLag.t.length} runs)`, c.auditLag.t.length) : ''}
</div>
<script type="application/json" id="chart-data">${new SafeHtml(jsonForHtml(c))}</script>`
}
</section>`;
}
