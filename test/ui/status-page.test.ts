/**
 * The status page in a real browser (Debian's headless Chromium driven by playwright-core)
 * against a real daemon with Redis and the simulator: a tenant after a run, a held deletion
 * after a guard trip, a person found in the provisioning log, an action refused without the
 * token (and from another origin), then approved with it; and a daemon without a token
 * serves a read-only page. docs/images/status-page.png comes from this test
 * (`UPDATE_SCREENSHOT=1 npx vitest run test/ui/status-page.test.ts`).
 */
import { rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { people, person } from '../helpers/reconcile-harness.ts';
import { assertNoSecret, getJson, httpGet, waitFor, type DaemonProcess } from '../helpers/daemon-harness.ts';
import { closingAfterEach, runsFinished } from '../daemon/support.ts';

const TOKEN = 'ui-test-platform-token-7d41c9e2';
const ACTION_TOKEN = 'ui-action-token-3f9a0c5e71b24d68';
// The screenshot in the docs is refreshed with UPDATE_SCREENSHOT=1; other runs leave the tree clean.
const SCREENSHOT =
  process.env['UPDATE_SCREENSHOT'] === '1'
    ? join(import.meta.dirname, '../../docs/images/status-page.png')
    : join(tmpdir(), `status-page-${process.pid}.png`);

let browser: Browser;
beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
});
afterAll(async () => {
  await browser?.close();
});

const scene = closingAfterEach();

async function heldCount(d: DaemonProcess): Promise<number> {
  const { body } = await getJson<{ tenants: Array<{ tenant: string; deletesHeld: number }> }>(`${d.url}/status`);
  return body.tenants.find((t) => t.tenant === 'acme')?.deletesHeld ?? -1;
}

/** POST a form the way a browser on `origin` would. */
async function postForm(url: string, form: Record<string, string>, origin: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
    body: new URLSearchParams(form).toString(),
    redirect: 'manual',
  });
  return { status: res.status, body: await res.text() };
}

describe('status page', () => {
  it('shows a tenant after a run, holds a deletion after a guard trip, finds a person, and refuses actions without the token', async () => {
    const sim = await scene.sim(TOKEN);
    const ws = scene.workspace({ SIM_URL: sim.url, SIM_TOKEN: TOKEN });
    writeFileSync(join(ws.dir, 'ui-token'), `${ACTION_TOKEN}\n`);
    ws.writeDirectory({
      users: people(1, 20),
      groups: [{ externalId: 'g-eng', displayName: 'Engineering', members: ['u-1', 'u-2', 'u-15'] }],
    });
    ws.writeConfig({ provisioning: { guards: { maxDeletes: 5, maxDeletePercent: 100 } }, daemon: { ui: { actionTokenFile: 'ui-token' } } });
    const d = await ws.spawnDaemon();
    const runs = (): string[] => runsFinished([d], 'reconcile').map((l) => String(l['result']));
    await ws.trigger();
    await waitFor(() => runs().length === 1, 'the first run', 30_000);
    expect(runs()).toEqual(['success']);

    const page: Page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const failedRequests: string[] = [];
    page.on('requestfailed', (r) => failedRequests.push(r.url()));
    page.on('request', (r) => {
      if (!r.url().startsWith(d.url)) failedRequests.push(`outside the daemon: ${r.url()}`);
    });

    // Overview → tenant, by keyboard-reachable links; landmarks are there.
    await page.goto(`${d.url}/ui`);
    await expect.poll(() => page.title()).toBe('Provisioning status · scim-audit-sync');
    const row = page.getByRole('row', { name: /acme/ });
    expect(await row.textContent()).toMatch(/success/);
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement && document.activeElement.textContent')).toBe('Skip to content');
    await page.getByRole('main').getByRole('link', { name: 'acme' }).click();
    await page.waitForURL(/\/ui\/tenants\/acme$/);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Tenant acme');
    expect(await page.getByRole('navigation', { name: 'Tenants' }).count()).toBe(1);
    const reconcileRuns = page.locator('#reconcile-runs tbody tr');
    expect(await reconcileRuns.count()).toBe(1);
    expect(await reconcileRuns.first().textContent()).toMatch(/success.*20 users to create.*1 groups to create.*3 member adds/s);
    expect(await page.locator('#held-h + p').textContent()).toBe('Nothing held.');
    expect(await page.locator('#log tbody tr').count()).toBe(22); // 20 users, 1 group, 1 membership change
    // The page pulls its CSS and script from the daemon and nothing else.
    expect(await page.evaluate("getComputedStyle(document.querySelector('header')).borderBottomStyle")).toBe('solid');

    // 12 users leave the source: more than guards.maxDeletes (5). The guard holds them.
    ws.writeDirectory({ users: people(1, 8), groups: [{ externalId: 'g-eng', displayName: 'Engineering', members: ['u-1', 'u-2'] }] });
    await ws.trigger();
    await waitFor(() => runs().length === 2, 'the held run', 30_000);
    expect(runs()[1]).toBe('guard_held');
    await page.reload();
    const held = page.locator('section[aria-labelledby="held-h"]');
    expect(await held.textContent()).toMatch(/12 destructive operations held/);
    expect(await held.textContent()).toMatch(/maxDeletes \(5\)/);
    const heldRows = page.locator('#held-records tbody tr');
    // 12 deactivations and the Engineering group's removal of user15.
    expect(await heldRows.count()).toBe(13);
    expect(await heldRows.filter({ hasText: 'user9@example.com' }).textContent()).toMatch(
      /held.*user\.deactivate.*active: true → false.*not-in-source; held by the deletion guard/s,
    );
    expect(await page.locator('#reconcile-runs tbody tr').first().textContent()).toMatch(/guard held.*12 to deactivate/s);
    await page.screenshot({ path: SCREENSHOT, fullPage: false });
    expect(statSync(SCREENSHOT).size).toBeGreaterThan(10_000);
    if (process.env['UPDATE_SCREENSHOT'] !== '1') rmSync(SCREENSHOT);

    // Find a person: the search field is labelled and reachable with "/".
    await page.locator('body').press('/');
    expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe('log-user');
    await page.getByLabel('Person or group').fill('user15@example.com');
    await page.keyboard.press('Enter');
    await page.waitForURL(/user=user15%40example\.com/);
    const found = page.locator('#log tbody tr');
    const texts = await found.allTextContents();
    expect(texts.map((t) => /(user|group)\.[a-z]+/.exec(t)?.[0])).toEqual([
      'group.members',
      'user.deactivate',
      'group.members',
      'user.create',
    ]);
    expect(texts.every((t) => t.includes('user15@example.com'))).toBe(true);
    expect(texts[1]).toMatch(/held/);
    expect(await page.getByLabel('Person or group').inputValue()).toBe('user15@example.com');

    // The next scheduled run holds the same set again: not recorded again (no flood), still shown.
    const heldInLog = async (): Promise<number> =>
      (await ws.redis().xrange(`${ws.keyPrefix}:{acme}:provisioning-log`, '-', '+')).filter(([, f]) => f[1]?.includes('"result":"held"'))
        .length;
    expect(await heldInLog()).toBe(13);
    await ws.trigger();
    await waitFor(() => runs().length === 3, 'the run still held', 30_000);
    expect(runs()[2]).toBe('guard_held');
    expect(await heldInLog()).toBe(13);
    await page.goto(`${d.url}/ui/tenants/acme`);
    expect(await page.locator('#held-records tbody tr').count()).toBe(13);

    // An action without the right token is refused, and nothing changes.
    const approve = page.locator('form[action$="/actions/approve-deletes"]');
    page.on('dialog', (dlg) => void dlg.accept());
    await approve.getByLabel('Action token').fill('not-the-token-000000');
    await approve.getByRole('button', { name: 'Approve held deletions' }).click();
    await page.waitForLoadState();
    expect(await page.getByRole('alert').textContent()).toMatch(/action token is missing or wrong/);
    const approveUrl = `${d.url}/ui/tenants/acme/actions/approve-deletes`;
    expect((await postForm(approveUrl, {}, d.url)).status).toBe(403);
    // The right token from another site's page: refused by the origin check.
    expect((await postForm(approveUrl, { token: ACTION_TOKEN }, 'http://evil.example')).status).toBe(403);
    expect(await ws.redis().exists(`${ws.keyPrefix}:{acme}:approve-deletes`)).toBe(0);
    expect(await heldCount(d)).toBe(12);
    expect(sim.store.users().filter((u) => u.active === false)).toEqual([]);

    // With the token, from the page itself: approved, the held deactivations run.
    await page.goto(`${d.url}/ui/tenants/acme`);
    await approve.getByLabel('Action token').fill(ACTION_TOKEN);
    await approve.getByRole('button', { name: 'Approve held deletions' }).click();
    await page.waitForURL(/done=approve-deletes/);
    expect(await page.getByRole('status').first().textContent()).toMatch(/Held deletions approved/);
    await waitFor(() => runs().length === 4, 'the approved run', 30_000);
    expect(runs()[3]).toBe('success');
    expect(sim.store.users().filter((u) => u.active === false)).toHaveLength(12);
    await page.goto(`${d.url}/ui/tenants/acme?user=user9%40example.com&result=ok`);
    expect(await page.locator('#log tbody tr').first().textContent()).toMatch(/ok.*user\.deactivate.*user9@example\.com/s);

    // The same records from the command line, read from the daemon's Redis stream.
    const cli = await ws.cli(['log', '--config', ws.configPath, '--user', 'user9@example.com', '--json']);
    expect(cli.code, cli.stderr).toBe(0);
    const recs = JSON.parse(cli.stdout) as Array<{ action: string; result: string }>;
    expect(recs.map((r) => `${r.action}:${r.result}`)).toEqual(['user.deactivate:ok', 'user.deactivate:held', 'user.create:ok']);

    // Secrets never reach the page; the page loaded nothing from outside the daemon.
    for (const path of ['/ui', '/ui/tenants/acme', '/ui/tenants/acme?user=user9']) {
      const html = (await httpGet(`${d.url}${path}`)).body;
      assertNoSecret(html, TOKEN, `page ${path}`);
      if (html.includes(ACTION_TOKEN)) throw new Error(`the action token appears in ${path}`);
    }
    assertNoSecret(d.output(), TOKEN, 'daemon output');
    expect(d.output()).not.toContain(ACTION_TOKEN);
    expect(failedRequests).toEqual([]);
    await page.close();
  }, 120_000);

  it('without daemon.ui.actionTokenFile the page is read-only and actions are refused', async () => {
    const sim = await scene.sim(TOKEN);
    const ws = scene.workspace({ SIM_URL: sim.url, SIM_TOKEN: TOKEN });
    // A source value that is markup: shown as text, never run.
    const hostile = '<img src=x onerror="window.__xss=1">';
    ws.writeDirectory({ users: [person(1, { givenName: hostile }), ...people(2, 3)], groups: [] });
    ws.writeConfig({});
    const d = await ws.spawnDaemon();
    await ws.trigger();
    await waitFor(() => runsFinished([d], 'reconcile').length === 1, 'the run', 30_000);
    const page = await browser.newPage();
    await page.goto(`${d.url}/ui/tenants/acme?user=user1%40`);
    expect(await page.locator('#log tbody tr').first().textContent()).toContain(`name.givenName: ∅ → ${hostile}`);
    expect(await page.evaluate('window.__xss')).toBeUndefined();
    expect(await page.locator('#log img').count()).toBe(0);
    expect(await page.locator('main').textContent()).toMatch(/Read-only: actions need daemon\.ui\.actionTokenFile/);
    expect(await page.locator('form[method="post"]').count()).toBe(0);
    const res = await postForm(`${d.url}/ui/tenants/acme/actions/trigger`, { token: 'anything-at-all-000' }, d.url);
    expect(res.status).toBe(403);
    expect(res.body).toMatch(/read-only/);
    expect((await httpGet(`${d.url}/ui/tenants/nobody`)).status).toBe(404);
    await page.close();
  }, 60_000);
});
