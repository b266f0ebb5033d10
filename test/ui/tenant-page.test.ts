/**
 * What a signed-in reader sees of one tenant: held rows once with the guard's reason once,
 * ids that do not wrap, chart data from the run history, and in redaction mode counts and
 * reasons without a single name, id or value.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { jsonForHtml, tenantCharts } from '../../src/ui/charts.ts';
import { heldObjectReason } from '../../src/ui/page.ts';
import { redactTenantView } from '../../src/ui/redact.ts';
import { call, expectNoPersonalData, fixedBackend, type PageUnderTest, READ_TOKEN, startPage } from './support.ts';

let page: PageUnderTest | undefined;
afterEach(async () => {
  await page?.close();
  page = undefined;
});
const auth = { authorization: `Bearer ${READ_TOKEN}` };
const count = (text: string, needle: string): number => text.split(needle).length - 1;

describe('the tenant page', () => {
  it('lists a held row once and the guard reason once', async () => {
    page = await startPage();
    const body = (await call(page.port, '/ui/tenants/acme', { headers: auth })).body;
    expect(count(body, 'bob.held@example.com')).toBe(1);
    expect(count(body, 'maxDeletes (0) exceeded')).toBe(1);
    const held = body.slice(body.indexOf('<table id="held-records">'), body.indexOf('</table>', body.indexOf('<table id="held-records">')));
    expect(held).toContain('<td>not-in-source</td>');
    expect(body).toContain('1 held records are listed under Deletion guard above.');
    // A search shows every matching record, held ones included.
    const search = (await call(page.port, '/ui/tenants/acme?user=bob', { headers: auth })).body;
    expect(count(search, 'bob.held@example.com')).toBe(2);
  });

  it("shows the change stream's state, who runs it, its lag, the last deferral and a held burst", async () => {
    page = await startPage();
    const body = (await call(page.port, '/ui/tenants/acme', { headers: auth })).body;
    const section = body.slice(body.indexOf('<h2 id="changes-h">'), body.indexOf('</section>', body.indexOf('<h2 id="changes-h">')));
    expect(section).toContain('running on <span class="mono">replica-a:41:0f3c9d2e</span>');
    expect(section).toContain('<code>ldap-modify-timestamp</code>');
    expect(section).toContain('<code>name-held</code>');
    expect(section).toContain('A burst of 3 destructive changes is held');
    expect(section).toContain('exceed guards.maxDeletes (2)');
  });

  it('keeps each externalId and platform id on one line', async () => {
    page = await startPage();
    const body = (await call(page.port, '/ui/tenants/acme', { headers: auth })).body;
    expect(body).toContain('<span class="id">externalId <span class="mono">ext-alice-0042</span></span>');
    expect(body).toContain('<span class="id">id <span class="mono">plat-id-9f8e7d</span></span>');
    const css = (await call(page.port, '/ui/assets/app.css')).body;
    expect(css).toMatch(/\.id \{ white-space: nowrap;/);
  });

  it('embeds the chart series (duration, changes, failures, audit lag) as inert JSON', async () => {
    page = await startPage();
    const body = (await call(page.port, '/ui/tenants/acme', { headers: auth })).body;
    const json = /<script type="application\/json" id="chart-data">([^<]*)<\/script>/.exec(body)?.[1];
    const data = JSON.parse(json ?? 'null') as ReturnType<typeof tenantCharts>;
    expect(data.reconcile.values).toEqual({ duration: [3.5, 4, 4.5], changes: [2, 3, 4], failures: [0, 1, 0] });
    expect(data.auditLag.values['lag']).toEqual([30, 120]);
    expect(body).toContain('id="chart-duration"');
    expect(body).toContain('id="chart-audit-lag"');
  });

  it('serves uPlot itself (no CDN)', async () => {
    page = await startPage();
    const js = await call(page.port, '/ui/assets/uplot.js');
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.body).toMatch(/uPlot/);
    expect((await call(page.port, '/ui/assets/uplot.css')).status).toBe(200);
    expect((await call(page.port, '/ui/assets/uPlot.d.ts')).status).toBe(404);
  });
});

describe('redaction mode (daemon.ui.redact)', () => {
  it('shows counts, actions, attribute names and reasons, and masks every name, id and value', async () => {
    page = await startPage({ redact: true });
    const r = await call(page.port, '/ui/tenants/acme?user=alice.personal%40example.com', { headers: auth });
    expect(r.status).toBe(200);
    // The query echoed in the URL is not shown; the search is off.
    expectNoPersonalData(r.body, 'the redacted page');
    expect(r.body).not.toContain('id="log-user"');
    expect(page.backend.calls).toEqual(['tenant {}']);
    expect(r.body).toContain('1 destructive operations held');
    expect(r.body).toContain('maxDeletes (0) exceeded');
    expect(r.body).toContain('urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:region: ••• → •••');
    expect(r.body).toContain('user <span class="name">•••</span>');
    expect(r.body).toContain('<td>not-in-source</td>');
    expect(r.body).toContain('redacted view');
    expect(r.body).toContain('id="chart-data"');
  });
});

describe('redacting a tenant view', () => {
  it('keeps error codes and drops the messages of failed runs and of the quarantine', async () => {
    const v = await fixedBackend().tenant('acme', {});
    v.reconcileRuns[0] = {
      ...v.reconcileRuns[0]!,
      result: 'failed',
      detail: { code: 'E_SOURCE_READ', message: 'cn=alice.personal@example.com unreadable' },
    };
    v.quarantine = { quarantined: true, failures: 3, until: null, reason: 'E_PLATFORM_REJECTED: user alice.personal@example.com refused' };
    const r = redactTenantView(v);
    expect(JSON.stringify(r)).not.toContain('alice.personal@example.com');
    expect(r.reconcileRuns[0]!.detail['message']).toBe('E_SOURCE_READ (message hidden in the redacted view)');
    expect(r.quarantine.reason).toBe('E_PLATFORM_REJECTED: (message hidden in the redacted view)');
    for (const p of ['ext-alice-0042', 'plat-id-9f8e7d', 'bob.held@example.com', 'ext-bob', 'plat-bob'])
      expect(JSON.stringify(r)).not.toContain(p);
  });
});

describe('pieces', () => {
  it('heldObjectReason keeps the object part of a held record reason', () => {
    expect(heldObjectReason('not-in-source; held by the deletion guard: maxDeletes (5) exceeded')).toBe('not-in-source');
    expect(heldObjectReason('held by the deletion guard: maxDeletes (5) exceeded')).toBe('');
    expect(heldObjectReason('out-of-scope')).toBe('out-of-scope');
    expect(heldObjectReason(undefined)).toBe('');
  });

  it('jsonForHtml cannot close the data block', () => {
    const s = jsonForHtml({ a: '</script><script>alert(1)</script>&' });
    expect(s).not.toMatch(/[<>&]/);
    expect(JSON.parse(s)).toEqual({ a: '</script><script>alert(1)</script>&' });
  });

  it('tenantCharts orders runs oldest first and skips audit runs without a cursor', async () => {
    const v = await fixedBackend().tenant('acme', {});
    const c = tenantCharts(v.reconcileRuns, [...v.auditRuns, { ...v.auditRuns[0]!, detail: { code: 'E_X' }, result: 'failed' }]);
    expect(c.reconcile.t).toEqual([...c.reconcile.t].sort((a, b) => a - b));
    expect(c.auditLag.t).toHaveLength(2);
  });
});
