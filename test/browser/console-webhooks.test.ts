// The console's Webhooks page in a real Chromium (playwright-core driving Debian's /usr/bin/chromium)
// against the service running in-process on a private PostgreSQL database: an endpoint registered
// with its secret shown once, a watch run now until its change is delivered to a receiver that
// answers 500, the service's own retry schedule (its WEBHOOK_RETRY_* settings, short here) giving
// up so the endpoint is failing, the overview's banner, and every confirmation in the one dialog;
// at 1280×800 and on a 390 px phone, nothing wider than the screen.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../services/api/server';
import { loadConfig } from '../../services/config/config';
import { createTestDatabase, serverUrl, type TestDatabase } from '../support/servers';
import { adminCaller } from '../support/admin-call';

const CHROMIUM = '/usr/bin/chromium';
const ADMIN_TOKEN = 'browser-hooks-admin-token-'.padEnd(40, 'x');
const PASSWORD = 'webhooks owner 12345';
const PHONE = { width: 390, height: 844 };
const LAPTOP = { width: 1280, height: 800 };

function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.CI === 'true') throw new Error(`test/browser/console-webhooks.test.ts needs Chromium at ${CHROMIUM} under CI (.ci/run installs the chromium package)`);
  console.warn(`\n!!! SKIPPING test/browser/console-webhooks.test.ts: no Chromium at ${CHROMIUM} (apt-get install chromium) !!!\n`);
  return false;
}

const available = chromiumAvailable() && serverUrl('postgres') !== undefined;

describe.runIf(available)('the Webhooks page of the console in Chromium', { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let server: RunningServer;
  let base: string;
  let browser: Browser;
  let dataDir: string;
  let receiver: { server: Server; url: string; hits: () => number };

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'console-hooks-browser-'));
    server = await startServer(
      loadConfig({
        PORT: '0',
        ADMIN_TOKEN,
        DATABASE_URL: database.url,
        SOURCE_URL: 'sandbox',
        DATA_DIR: dataDir,
        LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'silent',
        MAX_EVENT_LOOP_DELAY_MS: '60000',
        // The receiver runs on loopback; the retry schedule gives a delivery up a second after its first attempt.
        WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
        WEBHOOK_POLL_MS: '50',
        WEBHOOK_RETRY_INITIAL_MS: '50',
        WEBHOOK_RETRY_MAX_MS: '100',
        WEBHOOK_RETRY_HORIZON_MS: '1000',
        // Watches here run only when asked to.
        WATCH_POLL_MS: '3600000',
      }),
    );
    base = server.url;
    let hits = 0;
    const broken = createServer((req, res) => {
      hits++;
      req.resume();
      req.on('end', () => res.writeHead(500).end('down'));
    });
    await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve));
    receiver = { server: broken, url: `http://127.0.0.1:${(broken.address() as AddressInfo).port}/hook`, hits: () => hits };
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await new Promise((r) => receiver?.server.close(r));
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const admin = adminCaller(() => base, ADMIN_TOKEN);

  async function withKey(key: string, method: string, path: string, body?: unknown): Promise<any> {
    const res = await fetch(base + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const json: any = await res.json();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  }

  /** Navigates and waits until the script has filled the page (or shown why not). */
  async function open(page: Page, path: string) {
    await page.goto(base + path);
    await page.waitForFunction(() => (globalThis as any).document.body.dataset.ready !== undefined);
    expect(await page.evaluate(() => (globalThis as any).document.body.dataset.ready), path).toBe('true');
  }

  /** Confirms (or cancels) the one confirmation dialog of the console, checking it asks `title`. */
  async function answerDialog(page: Page, title: string, confirm: boolean) {
    const dialog = page.locator('#confirm-dialog');
    await dialog.waitFor({ state: 'visible' });
    expect(await dialog.locator('#confirm-title').textContent()).toBe(title);
    await dialog.getByRole('button', { name: confirm ? (await dialog.locator('#confirm-button').textContent())! : 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
  }

  /** No sideways scroll, no table wider than its box; on the phone, tables as labelled cards with reachable actions. */
  async function expectFits(page: Page, where: string) {
    const viewport = page.viewportSize()!;
    const fit = await page.evaluate(() => {
      const doc = (globalThis as any).document;
      const boxes = [...doc.querySelectorAll('.table-wrap')].filter((b: any) => b.offsetParent !== null).map((b: any) => ({ scroll: b.scrollWidth, client: b.clientWidth }));
      return { scroll: doc.documentElement.scrollWidth, width: (globalThis as any).innerWidth, boxes };
    });
    expect(fit.scroll, where).toBeLessThanOrEqual(fit.width);
    for (const box of fit.boxes) expect(box.scroll, where).toBeLessThanOrEqual(box.client);
    if (viewport.width === PHONE.width) {
      for (const table of await page.locator('table:visible').all()) {
        expect(await table.locator('thead').isVisible(), where).toBe(false);
        const row = table.locator('tbody tr:not(.empty)').first();
        if ((await row.count()) > 0) expect(await row.locator('td').first().getAttribute('data-label'), where).toBeTruthy();
      }
    }
    for (const button of await page.locator('td.actions button:visible').all()) {
      const box = (await button.boundingBox())!;
      expect(box.x + box.width, `${where}: ${await button.textContent()}`).toBeLessThanOrEqual(viewport.width);
    }
  }

  it('registers an endpoint with its secret shown once, runs a watch until its endpoint fails, shows why and the banner, at both sizes', async () => {
    const ws = (await admin('POST', '/admin/v1/workspaces', { name: 'Hooks & co', credits: 2 })).id as string;
    const { key } = await admin('POST', `/admin/v1/workspaces/${ws}/keys`, { name: 'watcher' });
    const invitation = await admin('POST', `/admin/v1/workspaces/${ws}/invitations`, { email: 'hana@example.com', role: 'member' });

    const context = await browser.newContext({ viewport: LAPTOP });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    await open(page, new URL(invitation.link).pathname + new URL(invitation.link).search);
    await page.getByLabel('Choose a password').fill(PASSWORD);
    await page.getByLabel('Repeat it').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.waitForURL(`${base}/console/overview`);

    // A member (not only an owner) manages webhooks, as keys: the link is in the navigation.
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.waitForFunction(() => (globalThis as any).document.body.dataset.ready === 'true');
    expect(await page.locator('#endpoints-table tbody').textContent()).toContain('No endpoints yet.');

    // Registered: the secret once, copied with the button, gone once stored.
    await page.getByLabel('URL').fill(receiver.url);
    expect(await page.getByRole('checkbox', { name: /profile\.changed/ }).isChecked()).toBe(true);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.locator('#new-secret:not([hidden])').waitFor();
    const secret = (await page.locator('#new-secret-value').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    expect(() => new Webhook(secret)).not.toThrow();
    await page.locator('#copy-secret').click();
    await expect.poll(() => page.locator('#copy-secret').textContent()).toBe('Copied');
    expect(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText())).toBe(secret);
    const row = page.locator('#endpoints-table tbody tr').first();
    expect(await row.getAttribute('data-state')).toBe('active');
    const endpointId = (await row.getAttribute('data-endpoint-id'))!;
    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await page.content()).not.toContain(secret);
    await open(page, '/console/webhooks');
    expect(await page.content()).not.toContain(secret);
    expect(await page.locator('#new-secret').isHidden()).toBe(true);

    // A watch made in the page, under the workspace's one live key, on a profile that changes at each fetch.
    const watchForm = page.locator('#create-watch-form');
    expect(await watchForm.getByLabel('Webhook endpoint').inputValue()).toBe(endpointId);
    expect(await watchForm.getByLabel('Key').locator('option').allTextContents()).toEqual([expect.stringMatching(/^watcher \(lk_live_/)]);
    await watchForm.getByLabel('Lookup').selectOption('company');
    await watchForm.getByLabel('Reference').fill('sandbox-changing');
    await watchForm.getByLabel('Every').selectOption('1d');
    await watchForm.getByRole('button', { name: 'Add watch' }).click();
    await expect.poll(() => page.locator('#status').textContent()).toContain('Watching company: sandbox-changing, every 1d');
    const watchRow = page.locator('#watches-table tr[data-watch-id]').first();
    expect(await watchRow.textContent()).toContain('company: sandbox-changing');
    expect(await watchRow.getAttribute('data-state')).toBe('active');
    const [watch] = (await withKey(key, 'GET', '/v1/watches')).data;
    expect(await watchRow.getAttribute('data-watch-id')).toBe(watch.id);

    // Run now, confirmed in the dialog: charged, then changed (a profile.changed delivery follows).
    const runNow = () => page.getByRole('button', { name: 'Run company: sandbox-changing now' }).click();
    const created = await page.locator('#status').textContent();
    await runNow();
    await answerDialog(page, 'Refresh this watch now?', false);
    expect(await page.locator('#status').textContent()).toBe(created);
    await runNow();
    await answerDialog(page, 'Refresh this watch now?', true);
    await expect.poll(() => page.locator('#status').textContent()).toContain('unchanged; 1 credit charged, 1 left');
    await runNow();
    await answerDialog(page, 'Refresh this watch now?', true);
    await expect.poll(() => page.locator('#status').textContent()).toContain('changed (a profile.changed webhook follows); 1 credit charged, 0 left');

    // The receiver answers 500 until the service's retry schedule gives the delivery up: failing, with why.
    await expect
      .poll(async () => {
        await open(page, '/console/webhooks');
        return page.locator(`#endpoints-table tr[data-endpoint-id="${endpointId}"]`).getAttribute('data-state');
      }, { timeout: 30_000 })
      .toBe('failing');
    expect(receiver.hits()).toBeGreaterThanOrEqual(2);
    const state = (await page.locator(`#endpoints-table tr[data-endpoint-id="${endpointId}"] td.state`).textContent())!;
    expect(state).toMatch(/^failing since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC: a delivery was given up after \d+ attempts, the last one got HTTP 500$/);

    // Out of credits: running it again is refused, and the watch is paused.
    await runNow();
    await answerDialog(page, 'Refresh this watch now?', true);
    await expect.poll(() => page.locator('#error').textContent()).toContain('balance does not cover');
    await expect.poll(() => watchRow.getAttribute('data-state')).toBe('paused');
    expect(await watchRow.textContent()).toContain('paused: the balance cannot pay a refresh');

    // The overview says both, and links to the failing endpoint's deliveries.
    await open(page, '/console/overview');
    const banner = page.locator('#hooks-banner');
    expect(await banner.isVisible()).toBe(true);
    expect(await banner.textContent()).toContain(`The webhook endpoint ${receiver.url} is failing since`);
    expect(await banner.textContent()).toContain('1 watch is paused');
    await expectFits(page, 'overview at 1280 px');
    await banner.getByRole('link', { name: 'See its deliveries' }).click();
    await page.waitForFunction(() => (globalThis as any).document.body.dataset.ready === 'true');

    // The delivery, given up, with each attempt's status, code, latency and time; re-sent with its id.
    await page.locator('#deliveries:not([hidden])').waitFor();
    const delivery = page.locator('#deliveries-table tbody tr').first();
    expect(await delivery.getAttribute('data-state')).toBe('failed');
    const attempts = await delivery.locator('ol.attempts li').allTextContents();
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    for (const attempt of attempts) expect(attempt).toMatch(/^failed · HTTP 500 · \d+ ms · \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    const deliveryId = (await delivery.getAttribute('data-delivery-id'))!;
    await page.getByRole('button', { name: `Re-send ${deliveryId}` }).click();
    await expect.poll(() => page.locator('#status').textContent()).toBe(`${deliveryId} is due again, with the same webhook-id.`);
    await expectFits(page, 'webhooks at 1280 px');

    // On a phone: the same page as cards, nothing wider than the screen, the actions within reach.
    for (const path of [`/console/webhooks?endpoint=${endpointId}`, '/console/overview']) {
      const phone = await context.newPage();
      await phone.setViewportSize(PHONE);
      await open(phone, path);
      if (path.includes('webhooks')) await phone.locator('#deliveries:not([hidden])').waitFor();
      await expectFits(phone, `${path} at 390 px`);
      await phone.close();
    }

    // Rotation: a new secret, shown once too.
    await page.getByRole('button', { name: `Rotate the secret of ${receiver.url}` }).click();
    await answerDialog(page, 'Rotate the signing secret?', true);
    await page.locator('#new-secret:not([hidden])').waitFor();
    const rotated = (await page.locator('#new-secret-value').textContent())!;
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    expect(await page.locator('#new-secret-for').textContent()).toContain('the previous one still signs until');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await page.content()).not.toContain(rotated);

    // Paused: nothing is sent, the row says so; resumed.
    const endpointRow = page.locator(`#endpoints-table tr[data-endpoint-id="${endpointId}"]`);
    await page.getByRole('button', { name: `Pause deliveries to ${receiver.url}` }).click();
    await expect.poll(() => endpointRow.getAttribute('data-state')).toBe('disabled');
    expect(await endpointRow.locator('td.state').textContent()).toBe('paused: deliveries wait until it is resumed');
    expect(await page.locator('#status').textContent()).toContain(`Paused ${receiver.url}`);
    await page.getByRole('button', { name: `Resume deliveries to ${receiver.url}` }).click();
    await expect.poll(() => endpointRow.getAttribute('data-state')).not.toBe('disabled');
    expect(await page.locator('#status').textContent()).toContain(`Resumed ${receiver.url}`);

    // Changed in the add form, which says what it edits; the public API sees the change.
    const movedUrl = `${receiver.url}?moved=1`;
    await page.getByRole('button', { name: `Change ${receiver.url}` }).click();
    expect(await page.locator('#create-endpoint-title').textContent()).toBe(`Change ${receiver.url}`);
    expect(await page.getByLabel('URL').inputValue()).toBe(receiver.url);
    await page.getByLabel('URL').fill(movedUrl);
    await page.getByRole('checkbox', { name: /balance\.low/ }).check();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => page.locator('#status').textContent()).toBe(`Saved ${movedUrl}.`);
    expect(await page.locator('#create-endpoint-title').textContent()).toBe('Add an endpoint');
    // The status is shown as the list is fetched again: the row follows (once, in CI, a moment later).
    await expect.poll(() => endpointRow.locator('td').nth(1).textContent()).toBe('profile.changed, balance.low');
    expect((await withKey(key, 'GET', `/v1/webhook-endpoints/${endpointId}`)).data).toMatchObject({ url: movedUrl, event_types: ['profile.changed', 'balance.low'] });

    // Deleting, each through the one dialog.
    await page.getByRole('button', { name: 'Delete the watch of company: sandbox-changing' }).click();
    await answerDialog(page, 'Delete this watch?', true);
    await expect.poll(() => page.locator('#watches-table tbody').textContent()).toContain('No watches yet.');
    await page.getByRole('button', { name: `Delete ${movedUrl}` }).click();
    await answerDialog(page, 'Delete this endpoint?', true);
    await expect.poll(() => page.locator('#endpoints-table tbody').textContent()).toContain('No endpoints yet.');
    expect(await page.locator('#deliveries').isHidden()).toBe(true);
    await open(page, '/console/overview');
    expect(await page.locator('#hooks-banner').isHidden()).toBe(true);
    await context.close();
  });
});
