/**
 * Server-rendered pages of the status UI: semantic HTML (landmarks, headings, captioned
 * tables, labelled fields), every value escaped by `html`. Read-only unless actions are
 * configured; each action form carries the action token field (see ui/actions.ts). Held
 * deletions are listed once, under the guard that holds them with its reason stated once; the
 * log below leaves them out unless searched for. Ids sit in no-wrap spans.
 */
import { changeSummary, outcomeText } from '../provisioning-log/render.ts';
import { chartsSection, tenantCharts } from './charts.ts';
import type { ProvisioningRecord } from '../provisioning-log/record.ts';
import { html, type SafeHtml } from './html.ts';
import type { LogFilter, RunView, TenantSummary, TenantView } from './view.ts';

const BASE = '/ui';
export const tenantPath = (id: string): string => `${BASE}/tenants/${encodeURIComponent(id)}`;

/** Who is signed in, for the header: a session can be ended here; a proxy's cannot. */
export interface SignedIn {
  name: string;
  via: 'session' | 'bearer' | 'proxy';
  redacted: boolean;
}

export function layout(title: string, body: SafeHtml, nav: string[], who?: SignedIn): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · scim-audit-sync</title>
<link rel="stylesheet" href="${BASE}/assets/uplot.css">
<link rel="stylesheet" href="${BASE}/assets/app.css">
<script src="${BASE}/assets/uplot.js" defer></script>
<script src="${BASE}/assets/app.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header>
<p class="brand">scim-audit-sync</p>
${
  who
    ? html`<nav aria-label="Tenants"><ul><li><a href="${BASE}">All tenants</a></li>${nav.map((t) => html`<li><a href="${tenantPath(t)}">${t}</a></li>`)}</ul></nav>
${whoBox(who)}`
    : ''
}
</header>
<main id="main" tabindex="-1">
${body}
</main>
</body>
</html>
`.text;
}

function whoBox(who: SignedIn): SafeHtml {
  const role = who.redacted ? html` <span class="badge muted">redacted view</span>` : '';
  if (who.via === 'proxy') return html`<p class="who">Signed in as <strong>${who.name}</strong>${role}</p>`;
  if (who.via === 'bearer') return html`<p class="who">Read token${role}</p>`;
  return html`<form class="who" method="post" action="${BASE}/logout">Signed in with the read token${role} <button type="submit">Sign out</button></form>`;
}

const when = (iso: string | null | undefined): SafeHtml =>
  iso ? html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time>` : html`<span class="muted">—</span>`;

const resultBadge = (result: string): SafeHtml => {
  const cls =
    result === 'success' || result === 'ok'
      ? 'ok'
      : result === 'failed'
        ? 'failed'
        : result === 'partial' || result === 'guard_held' || result === 'held' || result === 'quarantined'
          ? 'held'
          : 'muted';
  return html`<span class="badge ${cls}">${result.replace('_', ' ')}</span>`;
};

const lag = (s: number | null): string =>
  s === null ? '—' : s < 120 ? `${s} s` : s < 7200 ? `${Math.round(s / 60)} min` : `${(s / 3600).toFixed(1)} h`;

export function overviewPage(tenants: TenantSummary[], who: SignedIn, notice?: string): string {
  const rows = tenants.map(
    (t) => html`<tr>
<th scope="row"><a href="${tenantPath(t.tenant)}">${t.tenant}</a></th>
<td>${t.lastReconcile ? html`${resultBadge(t.lastReconcile.result)} ${when(t.lastReconcile.finishedAt)}` : html`<span class="muted">never</span>`}</td>
<td>${when(t.nextReconcile)}</td>
<td>${t.quarantined ? html`<span class="badge bad">quarantined</span>` : 'no'}</td>
<td>${t.deletesHeld > 0 ? html`<span class="badge held">${t.deletesHeld} held</span>` : '0'}</td>
<td>${lag(t.auditLagSeconds)}</td>
</tr>`,
  );
  const body = html`<h1>Provisioning status</h1>
${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
<section aria-labelledby="tenants-h">
<h2 id="tenants-h">Tenants</h2>
<table>
<caption>Last and next reconcile, quarantine, deletions held by the guard, audit lag</caption>
<thead><tr><th scope="col">Tenant</th><th scope="col">Last reconcile</th><th scope="col">Next reconcile</th><th scope="col">Quarantine</th><th scope="col">Deletes held</th><th scope="col">Audit lag</th></tr></thead>
<tbody>${rows}</tbody>
</table>
</section>`;
  return layout(
    'Provisioning status',
    body,
    tenants.map((t) => t.tenant),
    who,
  );
}

function summaryText(run: RunView): string {
  const s = run.detail['summary'] as Record<string, number> | undefined;
  if (!s) {
    const m = run.detail['message'] ?? run.detail['reason'];
    return typeof m === 'string' ? m : '';
  }
  const parts: string[] = [];
  const add = (n: number | undefined, label: string): void => void (n ? parts.push(`${n} ${label}`) : undefined);
  add(s['usersCreate'], 'users to create');
  add(s['usersUpdate'], 'to update');
  add(s['usersReactivate'], 'to reactivate');
  add(s['usersDeactivate'], 'to deactivate');
  add(s['usersDelete'], 'to delete');
  add(s['groupsCreate'], 'groups to create');
  add(s['groupsUpdate'], 'groups to update');
  add(s['groupsDelete'], 'groups to delete');
  add(s['membersAdd'], 'member adds');
  add(s['membersRemove'], 'member removals');
  add(s['rejected'], 'source objects rejected');
  const failed = run.detail['failed'];
  if (typeof failed === 'number' && failed > 0) parts.push(`${failed} failed`);
  return parts.length > 0 ? parts.join(', ') : 'no changes';
}

function runsTable(id: string, caption: string, runs: RunView[], kind: 'reconcile' | 'audit'): SafeHtml {
  if (runs.length === 0) return html`<p class="muted" id="${id}">No ${kind} run yet.</p>`;
  return html`<table id="${id}">
<caption>${caption}</caption>
<thead><tr><th scope="col">Finished</th><th scope="col">Result</th><th scope="col">Duration</th><th scope="col">${kind === 'reconcile' ? 'Plan summary' : 'Delivered'}</th><th scope="col">Run</th></tr></thead>
<tbody>${runs.map(
    (r) =>
      html`<tr><td>${when(r.finishedAt)}</td><td>${resultBadge(r.result)}</td><td>${(r.durationMs / 1000).toFixed(1)} s</td><td>${kind === 'reconcile' ? summaryText(r) : auditText(r)}</td><td class="mono nowrap">${r.runId}</td></tr>`,
  )}</tbody>
</table>`;
}

function auditText(run: RunView): string {
  const d = run.detail['delivered'];
  if (d && typeof d === 'object')
    return (
      Object.entries(d as Record<string, number>)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ') || '0'
    );
  const m = run.detail['message'] ?? run.detail['reason'];
  return typeof m === 'string' ? m : '';
}

/** The object of a record: its name, then externalId and platform id each kept on one line. */
function objectCell(r: ProvisioningRecord): SafeHtml {
  const o = r.object;
  const name = o.name ?? o.externalId ?? o.id ?? '?';
  const ids: SafeHtml[] = [];
  if (o.externalId !== undefined && o.externalId !== name)
    ids.push(html`<span class="id">externalId <span class="mono">${o.externalId}</span></span>`);
  if (o.id !== undefined && o.id !== name) ids.push(html`<span class="id">id <span class="mono">${o.id}</span></span>`);
  return html`${o.type} <span class="name">${name}</span>${ids.map((id) => html` ${id}`)}`;
}

const changesList = (r: ProvisioningRecord): SafeHtml | '' => {
  const changes = changeSummary(r);
  return changes.length > 0 ? html`<ul class="changes">${changes.map((c) => html`<li>${c}</li>`)}</ul>` : '';
};

/** The per-object part of a held record's reason; the guard's own reason is shown once above the table. */
export function heldObjectReason(reason: string | undefined): string {
  if (reason === undefined) return '';
  const at = reason.indexOf('held by the deletion guard');
  return (at < 0 ? reason : reason.slice(0, at)).replace(/[;\s]+$/, '');
}

function heldTable(records: ProvisioningRecord[]): SafeHtml {
  return html`<table id="held-records">
<caption>What is held (${records.length})</caption>
<thead><tr><th scope="col">Action</th><th scope="col">Object</th><th scope="col">Changes</th><th scope="col">Why this object</th></tr></thead>
<tbody>${records.map(
    (r) => html`<tr>
<td class="mono nowrap">${r.action}</td>
<td>${objectCell(r)}</td>
<td>${changesList(r)}</td>
<td>${heldObjectReason(r.reason) || html`<span class="muted">—</span>`}</td>
</tr>`,
  )}</tbody>
</table>`;
}

function recordRows(records: ProvisioningRecord[]): SafeHtml {
  return html`${records.map(
    (r) => html`<tr>
<td class="nowrap">${when(r.time)}</td>
<td>${resultBadge(r.result)}</td>
<td class="mono nowrap">${r.action}</td>
<td>${objectCell(r)}</td>
<td>${changesList(r)}${r.result !== 'ok' || r.reason ? html`<div class="${r.result}">${outcomeText(r)}</div>` : ''}</td>
<td class="mono nowrap">${r.runId}</td>
</tr>`,
  )}`;
}

function recordsTable(id: string, caption: string, records: ProvisioningRecord[]): SafeHtml {
  return html`<table id="${id}">
<caption>${caption}</caption>
<thead><tr><th scope="col">Time</th><th scope="col">Result</th><th scope="col">Action</th><th scope="col">Object</th><th scope="col">Changes and outcome</th><th scope="col">Run</th></tr></thead>
<tbody>${recordRows(records)}</tbody>
</table>`;
}

function actionForm(tenant: string, action: string, label: string, confirm?: string): SafeHtml {
  const fid = `token-${action}`;
  return html`<form class="action" method="post" action="${tenantPath(tenant)}/actions/${action}"${confirm ? html` data-confirm="${confirm}"` : ''}>
<div><label for="${fid}">Action token</label><input id="${fid}" name="token" type="password" autocomplete="off" required></div>
<button type="submit">${label}</button>
</form>`;
}

export interface TenantPageOptions {
  filter: LogFilter;
  actionsEnabled: boolean;
  notice?: { text: string; error: boolean };
  tenants: string[];
  who: SignedIn;
}

export function tenantPage(v: TenantView, opts: TenantPageOptions): string {
  const t = v.tenant;
  const f = opts.filter;
  const ro = !opts.actionsEnabled;
  const heldSection = html`<section aria-labelledby="held-h">
<h2 id="held-h">Deletion guard</h2>
${
  v.held
    ? html`<p><strong class="held">${v.held.count} destructive operations held</strong> since ${when(v.held.at)} (run <span class="mono">${v.held.runId}</span>)${v.held.approved ? html` — <strong>approved, they run with the next reconcile</strong>` : ''}.</p>
<p>Why the guard holds them:</p><ul id="held-reasons">${v.held.reasons.map((r) => html`<li>${r}</li>`)}</ul>
${v.heldRecords.length > 0 ? heldTable(v.heldRecords) : ''}
${!v.held.approved && !ro ? actionForm(t, 'approve-deletes', 'Approve held deletions', `Approve ${v.held.count} held deactivations/deletions of tenant ${t}?`) : ''}`
    : html`<p>Nothing held.</p>`
}
</section>`;
  const q = v.quarantine;
  const quarantineSection = html`<section aria-labelledby="quarantine-h">
<h2 id="quarantine-h">Quarantine</h2>
${q.quarantined ? html`<p><strong class="bad">Quarantined</strong> until ${when(q.until)}: ${q.reason}</p>${ro ? '' : actionForm(t, 'resume', 'Resume tenant')}` : html`<p>Not quarantined (${q.failures} consecutive failed runs).</p>`}
</section>`;
  const schedules = html`<section aria-labelledby="schedule-h">
<h2 id="schedule-h">Schedule</h2>
<dl>${v.schedules.map((s) => html`<dt>${s.kind}</dt><dd>${s.configured ? (s.enabled ? html`<code>${s.pattern}</code> (UTC), next ${when(s.next)}` : 'disabled') : 'not configured'}</dd>`)}
${v.managed ? html`<dt>managed</dt><dd>${v.managed.users} users, ${v.managed.groups} groups</dd>` : ''}</dl>
${ro ? '' : actionForm(t, 'trigger', 'Run reconcile now')}
</section>`;
  const c = v.changes;
  const changesSection = c
    ? html`<section aria-labelledby="changes-h">
<h2 id="changes-h">Change stream</h2>
${
  c.state === 'off'
    ? html`<p class="muted">Off: the source reports no changes (or <code>provisioning.changes.enabled</code> is false); the full reconcile applies them.</p>`
    : html`<dl id="change-stream"><dt>state</dt><dd>${c.state === 'running' ? c.state : html`<strong class="bad">${c.state}</strong>`}${c.owner ? html` on <span class="mono">${c.owner}</span>` : ''}</dd>
<dt>mechanism</dt><dd><code>${c.mechanism ?? '—'}</code></dd>
<dt>last poll</dt><dd>${when(c.lastPollAt)} (lag ${lag(c.lagSeconds)}), ${c.lastResult ?? '—'}</dd>
<dt>cursor age</dt><dd>${lag(c.cursorAgeSeconds)}</dd>
<dt>last full reconcile asked</dt><dd>${c.lastDeferred ? html`<code>${c.lastDeferred.code}</code> ${when(c.lastDeferred.at)}` : 'never'}</dd></dl>
${c.heldBurst ? html`<p><strong class="held">A burst of ${c.heldBurst.destructive} destructive changes is held</strong> since ${when(c.heldBurst.at)}: ${c.heldBurst.reasons.join('; ')}. Approve under Deletion guard.</p>` : ''}`
}
</section>`
    : '';
  const a = v.audit;
  const auditSection = html`<section aria-labelledby="audit-h">
<h2 id="audit-h">Audit export and sinks</h2>
${a ? html`<dl><dt>cursor</dt><dd>${when(a.cursor)}</dd><dt>lag</dt><dd>${lag(a.lagSeconds)}</dd><dt>last commit</dt><dd>${when(a.lastCommit)}</dd></dl>` : html`<p class="muted">No audit section configured.</p>`}
${
  v.sinks.length > 0
    ? html`<table id="sinks"><caption>Per sink: events delivered in the last audit run, dead letters waiting for <code>audit replay</code></caption>
<thead><tr><th scope="col">Sink</th><th scope="col">Type</th><th scope="col">Delivered (last run)</th><th scope="col">Dead letters</th></tr></thead>
<tbody>${v.sinks.map((s) => html`<tr><th scope="row">${s.name}</th><td>${s.type}</td><td>${s.lastDelivered ?? '—'}</td><td>${s.deadLetters > 0 ? html`<strong class="bad">${s.deadLetters}</strong>` : '0'}</td></tr>`)}</tbody></table>`
    : ''
}
${a && (a.deadLetters['_parse'] ?? 0) > 0 ? html`<p class="bad">${a.deadLetters['_parse']} unparsable export rows kept for inspection.</p>` : ''}
<p>Provisioning log to the sinks: ${v.logToSinks.enabled ? html`on, delivered up to <span class="mono">${v.logToSinks.deliveredUpTo ?? 'nothing yet'}</span>` : 'off'}.</p>
</section>`;
  const searching = Boolean(f.user || f.result || f.action);
  const shownAbove = new Set(v.heldRecords.map((r) => r.id));
  const log = searching ? v.log : v.log.filter((r) => !shownAbove.has(r.id));
  const redacted = opts.who.redacted;
  const logSection = html`<section aria-labelledby="log-h">
<h2 id="log-h">Provisioning log</h2>
${
  redacted
    ? html`<p class="muted">Redacted view: names, ids and values are masked; search by person is off.</p>`
    : html`<form class="search" method="get" action="${tenantPath(t)}#log-h" role="search" aria-label="Search the provisioning log">
<div><label for="log-user">Person or group</label><input id="log-user" name="user" type="search" value="${f.user ?? ''}" placeholder="userName, externalId or id"></div>
<div><label for="log-result">Result</label><select id="log-result" name="result">${['', 'ok', 'failed', 'held'].map((r) => html`<option value="${r}"${f.result === r || (!f.result && r === '') ? html` selected` : ''}>${r === '' ? 'any' : r}</option>`)}</select></div>
<div><label for="log-action">Action</label><input id="log-action" name="action" value="${f.action ?? ''}" placeholder="e.g. user.deactivate"></div>
<button type="submit">Search</button>
</form>`
}
${log.length > 0 ? recordsTable('log', searching ? `Records matching the search, newest first (${log.length})` : `Latest records, newest first (${log.length})`, log) : html`<p id="log-empty" role="status">${searching ? 'No records match.' : 'No other records.'}</p>`}
${!searching && log.length < v.log.length ? html`<p class="muted">${v.log.length - log.length} held records are listed under Deletion guard above.</p>` : ''}
</section>`;
  const body = html`<h1>Tenant ${t}</h1>
${opts.notice ? html`<p class="notice${opts.notice.error ? ' error' : ''}" role="${opts.notice.error ? 'alert' : 'status'}">${opts.notice.text}</p>` : ''}
${ro ? html`<p class="muted">Read-only: actions need <code>daemon.ui.actionTokenFile</code>.</p>` : ''}
<div class="grid">${schedules}${quarantineSection}</div>
${changesSection}
${heldSection}
<section aria-labelledby="runs-h">
<h2 id="runs-h">Last runs</h2>
${runsTable('reconcile-runs', 'Reconcile runs, newest first', v.reconcileRuns, 'reconcile')}
${v.auditRuns.length > 0 ? runsTable('audit-runs', 'Audit runs, newest first', v.auditRuns, 'audit') : ''}
</section>
${chartsSection(tenantCharts(v.reconcileRuns, v.auditRuns))}
${auditSection}
${logSection}`;
  return layout(`Tenant ${t}`, body, opts.tenants, opts.who);
}

export function messagePage(title: string, text: string, back: string, tenants: string[], who?: SignedIn): string {
  return layout(
    title,
    html`<h1>${title}</h1><p class="notice error" role="alert">${text}</p><p><a href="${back}">Back</a></p>`,
    tenants,
    who,
  );
}
