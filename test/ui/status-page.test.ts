/**
 * The status page in a real browser (Debian's headless Chromium driven by playwright-core)
 * against a real daemon with Redis and the simulator: refused without signing in, signed in
 * with the read token (an HttpOnly, SameSite=Strict cookie), refused under a DNS-rebound host
 * name; a tenant after a run with its charts drawn by the locally served uPlot, a held deletion
 * after a guard trip (rows and reason once), a person found in the provisioning log, an action
 * refused without the action token (and from another origin), then approved with it; signing
 * out; and a daemon without an action token serves a read-only page.
 * docs/images/status-page.png comes from this test
 * (`UPDATE_SCREENSHOT=1 npx vitest run test/ui/status-page.test.ts`).
 */
import { rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { people, person } from '../helpers/reconcile-harness.ts';
import { assertNoSecret, getJson, waitFor, type DaemonProcess } from '../helpers/daemon-harness.ts';
import { closingAfterEach, runsFinished } from '../daemon/support.ts';
import { READ_TOKEN as FIXED_READ_TOKEN, startPage } from './support.ts';

const TOKEN = 'ui-test-platform-token-7d41c9e2';
const ACTION_TOKEN = 'ui-action-token-3f9a0c5e71b24d68';
const READ_TOKEN = 'ui-read-token-a61c0e9d24f7b853';
/** A name an attacker's DNS points at 127.0.0.1 (DNS rebinding); Chromium resolves it so here. */
const REBOUND = 'rebind.attacker.test';
// The screenshot in the docs is refreshed with UPDATE_SCREENSHOT=1; other runs leave the tree clean.
const SCREENSHOT =
  process.env['UPDATE_SCREENSHOT'] === '1'
    ? join(import.meta.dirname, '../../docs/images/status-page.png')
    : join(tmpdir(), `status-page-${process.pid}.png`);

let browser: Browser;
beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      `--host-resolver-rules=MAP ${REBOUND} 127.0.0.1`,
    ],
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

/** POST a form the way a browser on `origin` would, signed in with the read token. */
async function postForm(url: string, form: Record<string, string>, origin: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin, authorization: `Bearer ${READ_TOKEN}` },
    body: new URLSearchParams(form).toString(),
    redirect: 'manual',
  });
  return { status: res.status, body: await res.text() };
}

/** GET with the read token as a bearer token, the way a script reads the page. */
async function readAsScript(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${READ_TOKEN}` } });
  return { status: res.status, body: await res.text() };
}

/** A browser context signed in through the login form. */
async function signedIn(ui: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${ui}/ui`);
  await page.getByLabel('Read token').fill(READ_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/ui$/);
  return { context, page };
}

describe('status page', () => {
  it('shows a tenant after a run, holds a deletion after a guard trip, finds a person, and refuses actions without the token', async () => {
    const sim = await scene.sim(TOKEN);
    const ws = scene.workspace({ SIM_URL: sim.url, SIM_TOKEN: TOKEN });
    writeFileSync(join(ws.dir, 'ui-token'), `${ACTION_TOKEN}\n`);
    writeFileSync(join(ws.dir, 'ui-read-token'), `${READ_TOKEN}\n`);
    ws.writeDirectory({
      users: people(1, 20),
      groups: [{ externalId: 'g-eng', displayName: 'Engineering', members: ['u-1', 'u-2', 'u-15'] }],
    });
    ws.writeConfig({
      provisioning: { guards: { maxDeletes: 5, maxDeletePercent: 100 } },
      daemon: { ui: { actionTokenFile: 'ui-token', readTokenFile: 'ui-read-token' } },
    });
    const d = await ws.spawnDaemon();
    const runs = (): string[] => runsFinished([d], 'reconcile').map((l) => String(l['result']));
    await ws.trigger();
    await waitFor(() => runs().length === 1, 'the first run', 30_000);
    expect(runs()).toEqual(['success']);

    const ui = d.uiUrl;
    expect(ui).not.toBe(d.url);
    // The metrics port does not serve the page.
    expect((await fetch(`${d.url}/ui`)).status).toBe(404);

    // Not signed in: the login page, nothing about the tenant.
    const anon = await browser.newContext();
    const anonPage = await anon.newPage();
    const refused = await anonPage.goto(`${ui}/ui/tenants/acme`);
    expect(refused?.status()).toBe(401);
    expect(await anonPage.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
    expect(await anonPage.locator('main').textContent()).not.toMatch(/acme|user1@example\.com/);
    await anonPage.getByLabel('Read token').fill('not-the-read-token-0000');
    await anonPage.getByRole('button', { name: 'Sign in' }).click();
    await anonPage.waitForLoadState();
    expect(await anonPage.getByRole('alert').textContent()).toMatch(/read token is wrong/);
    expect(await anon.cookies()).toEqual([]);
    // A page on the attacker's name, resolved to this machine, is refused by its Host header.
    const rebound = await anonPage.goto(`http://${REBOUND}:${new URL(ui).port}/ui/login`);
    expect(rebound?.status()).toBe(421);
    expect(await anonPage.locator('body').textContent()).not.toMatch(/Sign in|acme/);
    await anon.close();

    const { context, page } = await signedIn(ui);
    const [session] = await context.cookies();
    expect(session).toMatchObject({ name: 'scimsync_ui_session', httpOnly: true, sameSite: 'Strict', path: '/ui' });
    expect(session?.value).not.toContain(READ_TOKEN);
    expect(await page.evaluate('document.cookie')).toBe('');
    const failedRequests: string[] = [];
    page.on('requestfailed', (r) => failedRequests.push(r.url()));
    page.on('request', (r) => {
      if (!r.url().startsWith(ui)) failedRequests.push(`outside the daemon: ${r.url()}`);
    });

    // Overview → tenant, by keyboard-reachable links; landmarks are there.
    await page.goto(`${ui}/ui`);
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
    // The charts of the last runs, drawn by uPlot from the daemon's own copy.
    expect(await page.evaluate('typeof window.uPlot')).toBe('function');
    for (const id of ['chart-duration', 'chart-changes']) {
      expect(await page.locator(`#${id}`).getAttribute('data-drawn'), id).toBe('true');
      expect(await page.locator(`#${id} canvas`).count(), id).toBe(1);
    }

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
      /user\.deactivate.*active: true → false.*not-in-source/s,
    );
    // The guard's reason once, above the rows; each held row once on the page.
    expect((await page.locator('main').textContent())?.split('maxDeletes (5)').length).toBe(2);
    expect(await page.locator('tr', { hasText: 'user9@example.com' }).filter({ hasText: 'user.deactivate' }).count()).toBe(1);
    expect(await page.locator('#reconcile-runs tbody tr').count()).toBe(2);
    expect(await page.locator('#chart-changes canvas').count()).toBe(1);
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
    await page.goto(`${ui}/ui/tenants/acme`);
    expect(await page.locator('#held-records tbody tr').count()).toBe(13);

    // An action without the right token is refused, and nothing changes.
    const approve = page.locator('form[action$="/actions/approve-deletes"]');
    page.on('dialog', (dlg) => void dlg.accept());
    await approve.getByLabel('Action token').fill('not-the-token-000000');
    await approve.getByRole('button', { name: 'Approve held deletions' }).click();
    await page.waitForLoadState();
    expect(await page.getByRole('alert').textContent()).toMatch(/action token is missing or wrong/);
    const approveUrl = `${ui}/ui/tenants/acme/actions/approve-deletes`;
    expect((await postForm(approveUrl, {}, ui)).status).toBe(403);
    // The right token from another site's page: refused by the origin check.
    expect((await postForm(approveUrl, { token: ACTION_TOKEN }, 'http://evil.example')).status).toBe(403);
    expect(await ws.redis().exists(`${ws.keyPrefix}:{acme}:approve-deletes`)).toBe(0);
    expect(await heldCount(d)).toBe(12);
    expect(sim.store.users().filter((u) => u.active === false)).toEqual([]);

    // With the token, from the page itself: approved, the held deactivations run.
    await page.goto(`${ui}/ui/tenants/acme`);
    await approve.getByLabel('Action token').fill(ACTION_TOKEN);
    await approve.getByRole('button', { name: 'Approve held deletions' }).click();
    await page.waitForURL(/done=approve-deletes/);
    expect(await page.getByRole('status').first().textContent()).toMatch(/Held deletions approved/);
    await waitFor(() => runs().length === 4, 'the approved run', 30_000);
    expect(runs()[3]).toBe('success');
    expect(sim.store.users().filter((u) => u.active === false)).toHaveLength(12);
    await page.goto(`${ui}/ui/tenants/acme?user=user9%40example.com&result=ok`);
    expect(await page.locator('#log tbody tr').first().textContent()).toMatch(/ok.*user\.deactivate.*user9@example\.com/s);

    // The same records from the command line, read from the daemon's Redis stream.
    const cli = await ws.cli(['log', '--config', ws.configPath, '--user', 'user9@example.com', '--json']);
    expect(cli.code, cli.stderr).toBe(0);
    const recs = JSON.parse(cli.stdout) as Array<{ action: string; result: string }>;
    expect(recs.map((r) => `${r.action}:${r.result}`)).toEqual(['user.deactivate:ok', 'user.deactivate:held', 'user.create:ok']);

    // Secrets never reach the page; the page loaded nothing from outside the daemon.
    for (const path of ['/ui', '/ui/tenants/acme', '/ui/tenants/acme?user=user9']) {
      const html = (await readAsScript(`${ui}${path}`)).body;
      assertNoSecret(html, TOKEN, `page ${path}`);
      if (html.includes(ACTION_TOKEN) || html.includes(READ_TOKEN)) throw new Error(`a status page token appears in ${path}`);
    }
    assertNoSecret(d.output(), TOKEN, 'daemon output');
    expect(d.output()).not.toContain(ACTION_TOKEN);
    expect(d.output()).not.toContain(READ_TOKEN);
    expect(failedRequests).toEqual([]);

    // Signing out ends the session in this browser.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/ui\/login$/);
    expect(await context.cookies()).toEqual([]);
    expect((await page.goto(`${ui}/ui/tenants/acme`))?.status()).toBe(401);
    await context.close();
  }, 120_000);

  it('without daemon.ui.actionTokenFile the page is read-only and actions are refused', async () => {
    const sim = await scene.sim(TOKEN);
    const ws = scene.workspace({ SIM_URL: sim.url, SIM_TOKEN: TOKEN });
    // A source value that is markup: shown as text, never run.
    const hostile = '<img src=x onerror="window.__xss=1">';
    ws.writeDirectory({ users: [person(1, { givenName: hostile }), ...people(2, 3)], groups: [] });
    writeFileSync(join(ws.dir, 'ui-read-token'), `${READ_TOKEN}\n`);
    ws.writeConfig({ daemon: { ui: { readTokenFile: 'ui-read-token' } } });
    const d = await ws.spawnDaemon();
    await ws.trigger();
    await waitFor(() => runsFinished([d], 'reconcile').length === 1, 'the run', 30_000);
    const ui = d.uiUrl;
    const { context, page } = await signedIn(ui);
    await page.goto(`${ui}/ui/tenants/acme?user=user1%40`);
    expect(await page.locator('#log tbody tr').first().textContent()).toContain(`name.givenName: ∅ → ${hostile}`);
    expect(await page.evaluate('window.__xss')).toBeUndefined();
    expect(await page.locator('#log img').count()).toBe(0);
    expect(await page.locator('main').textContent()).toMatch(/Read-only: actions need daemon\.ui\.actionTokenFile/);
    expect(await page.locator('main form[method="post"]').count()).toBe(0);
    const res = await postForm(`${ui}/ui/tenants/acme/actions/trigger`, { token: 'anything-at-all-000' }, ui);
    expect(res.status).toBe(403);
    expect(res.body).toMatch(/read-only/);
    expect((await readAsScript(`${ui}/ui/tenants/nobody`)).status).toBe(404);
    await context.close();
  }, 60_000);

  it('draws the run and audit-lag charts, and in redaction mode shows no name, id or value', async () => {
    const fixed = await startPage({ redact: true });
    const context = await browser.newContext({ extraHTTPHeaders: { authorization: `Bearer ${FIXED_READ_TOKEN}` } });
    try {
      const page = await context.newPage();
      const outside: string[] = [];
      page.on('request', (r) => {
        if (!r.url().startsWith(fixed.url)) outside.push(r.url());
      });
      // A Content-Security-Policy violation (an inline style or script uPlot might need) shows as a console error.
      const errors: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${fixed.url}/ui/tenants/acme`);
      for (const id of ['chart-duration', 'chart-changes', 'chart-audit-lag']) {
        await expect.poll(() => page.locator(`#${id}`).getAttribute('data-drawn'), { message: id }).toBe('true');
        expect(await page.locator(`#${id} canvas`).count(), id).toBe(1);
        // uPlot's legend names the series.
        expect(await page.locator(`#${id} .u-legend`).textContent(), id).toMatch(/duration|changes|audit lag/);
      }
      const text = (await page.locator('main').textContent()) ?? '';
      for (const personal of ['alice.personal@example.com', 'ext-alice-0042', 'plat-id-9f8e7d', 'bob.held@example.com'])
        expect(text).not.toContain(personal);
      expect(text).toMatch(/region: ••• → •••/);
      expect(await page.locator('#log-user').count()).toBe(0);
      expect(outside).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
      await fixed.close();
    }
  }, 30_000);
});
