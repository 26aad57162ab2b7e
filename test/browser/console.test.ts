// The workspace console in a real Chromium (playwright-core driving Debian's /usr/bin/chromium; no
// browser download) against the service running in-process on a private PostgreSQL database.
// One story from invitation to sign-out, then the refusals: CSRF, lockout, a link used twice,
// and a member of one workspace reaching for another's ids.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { simpleParser } from 'mailparser';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../services/api/server';
import { loadConfig } from '../../services/config/config';
import { run } from '../../services/console/cli';
import { createTestDatabase, serverUrl, type TestDatabase } from '../support/servers';
import { adminCaller } from '../support/admin-call';

const CHROMIUM = '/usr/bin/chromium';
const ADMIN_TOKEN = 'browser-admin-token-'.padEnd(40, 'x');
const PASSWORD_OWNER = 'owner password 1234';
const PASSWORD_MEMBER = 'member password 5678';
/** Own Redis logical database: the console's per-IP bucket is not shared with other suites. */
const REDIS_DATABASE = 8;

function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.CI === 'true') throw new Error(`test/browser/console.test.ts needs Chromium at ${CHROMIUM} under CI (.ci/run installs the chromium package)`);
  console.warn(`\n!!! SKIPPING test/browser/console.test.ts: no Chromium at ${CHROMIUM} (apt-get install chromium) !!!\n`);
  return false;
}

const available = chromiumAvailable() && serverUrl('postgres') !== undefined;

describe.runIf(available)('the workspace console in Chromium', { timeout: 60_000 }, () => {
  let database: TestDatabase;
  let server: RunningServer;
  let base: string;
  let browser: Browser;
  let dataDir: string;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'console-browser-'));
    const env: Record<string, string> = {
      PORT: '0',
      ADMIN_TOKEN,
      DATABASE_URL: database.url,
      SOURCE_URL: 'sandbox',
      DATA_DIR: dataDir,
      LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'silent',
      MAX_EVENT_LOOP_DELAY_MS: '60000',
    };
    const redis = process.env.REDIS_URL?.trim();
    if (redis) {
      const url = new URL(redis);
      url.pathname = `/${REDIS_DATABASE}`;
      env.REDIS_URL = url.toString();
      // Per-IP buckets (the console's included) of a previous run start empty.
      const client = new Redis(env.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await client.connect();
      await client.flushdb();
      client.disconnect();
    }
    server = await startServer(loadConfig(env));
    base = server.url;
    // launch() gives every run a fresh temporary profile (its own --user-data-dir).
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });

  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await server?.close();
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  // ---------- helpers ----------

  const admin = adminCaller(() => base, ADMIN_TOKEN);

  /** `npm run admin -- member invite ...`, in process: the printed link. */
  async function cliInvite(workspaceId: string, email: string, role?: string): Promise<string> {
    let out = '';
    const code = await run(['member', 'invite', workspaceId, email, ...(role ? ['--role', role] : []), '--url', base, '--token', ADMIN_TOKEN], {
      env: {},
      stdout: { write: (t: string) => (out += t) },
      stderr: { write: () => true },
    });
    expect(code).toBe(0);
    const link = /link\s+(\S+)/.exec(out)?.[1];
    expect(link, out).toMatch(/\/console\/accept\?token=/);
    return link!;
  }

  /** The link of the newest email to `to` in the outbox folder (no SMTP_URL: the embedded default). */
  async function mailedLink(to: string, path: string): Promise<string> {
    const outbox = join(dataDir, 'outbox');
    const until = Date.now() + 15_000;
    for (;;) {
      const files = existsSync(outbox) ? readdirSync(outbox).filter((f) => f.endsWith('.eml')).sort().reverse() : [];
      for (const file of files) {
        const mail = await simpleParser(readFileSync(join(outbox, file)));
        const link = /https?:\/\/\S+/.exec(mail.text ?? '')?.[0];
        if (JSON.stringify(mail.to).includes(to) && link?.includes(path)) return link;
      }
      if (Date.now() > until) throw new Error(`no email to ${to} with a ${path} link in ${outbox}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function lookup(key: string, path: string, body: unknown) {
    const res = await fetch(base + path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const answer = (await res.json()) as { meta?: { credits_charged: number } };
    // An error answer carries no meta: a failed call is refunded in the same answer, so it costs nothing.
    return { status: res.status, requestId: res.headers.get('x-request-id')!, charged: answer.meta?.credits_charged ?? 0 };
  }

  async function newPage(viewport = { width: 1280, height: 800 }): Promise<Page> {
    const context = await browser.newContext({ viewport });
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    return page;
  }

  /** Navigates and waits until the script has filled the page (or shown why not). */
  async function open(page: Page, path: string) {
    await page.goto(base + path);
    await page.waitForFunction(() => (globalThis as any).document.body.dataset.ready !== undefined);
  }

  async function acceptInvitation(page: Page, link: string, password: string) {
    await open(page, new URL(link).pathname + new URL(link).search);
    // The member will sign in to this workspace: the page shows its id, as the link names it.
    expect(await page.getByLabel('Workspace id').inputValue()).toBe(new URL(link).searchParams.get('workspace'));
    await page.getByLabel('Choose a password').fill(password);
    await page.getByLabel('Repeat it').fill(password);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.waitForURL(`${base}/console/overview`);
    await page.waitForFunction(() => (globalThis as any).document.body.dataset.ready === 'true');
  }

  /** A console API call from the page itself (its cookie, its origin). */
  function inPage(page: Page, method: string, path: string, options: { body?: unknown; csrf?: boolean } = {}) {
    return page.evaluate(
      async ({ method, path, body, csrf }) => {
        const headers: Record<string, string> = {};
        if (body !== undefined) headers['content-type'] = 'application/json';
        if (csrf) {
          const session: any = await (await fetch('/console/v1/session')).json();
          headers['x-csrf-token'] = session.csrf_token;
        }
        const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
        const text = await res.text();
        return { status: res.status, body: (text ? JSON.parse(text) : null) as any };
      },
      { method, path, body: options.body, csrf: options.csrf ?? true },
    );
  }

  async function waitForUsage(workspaceId: string, calls: number) {
    for (;;) {
      const { data } = await admin('GET', `/admin/v1/workspaces/${workspaceId}/usage`);
      if (data.reduce((s: number, r: { calls: number }) => s + r.calls, 0) >= calls) return data;
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  const text = async (page: Page, selector: string) => (await page.locator(selector).textContent())!.trim();

  // ---------- the story ----------

  let workspaceA: string;
  let owner: Page;
  let member: Page;
  let keyId: string;
  let key: string;
  let ownerLink: string;
  let memberEmail: string;
  let storyRequestId: string;

  it('from the invitation to a revoked key and a dead session', { timeout: 120_000 }, async () => {
    workspaceA = (await admin('POST', '/admin/v1/workspaces', { name: 'Acme analytics', credits: 100 })).id;
    ownerLink = await cliInvite(workspaceA, 'Ada@Example.com');

    // The newcomer sets a password and is signed in.
    owner = await newPage();
    await acceptInvitation(owner, ownerLink, PASSWORD_OWNER);
    expect(await text(owner, '#workspace-name')).toBe('Acme analytics');
    expect(await text(owner, '#member-email')).toBe('ada@example.com (owner)');

    // A key, shown once.
    await open(owner, '/console/keys');
    await owner.getByLabel('Name').first().fill('production');
    await owner.getByRole('button', { name: 'Create key' }).click();
    await owner.locator('#new-key:not([hidden])').waitFor();
    key = await text(owner, '#new-key-value');
    expect(key).toMatch(/^lk_live_[A-Za-z0-9]{32}$/);
    await owner.getByRole('button', { name: 'I have stored it' }).click();
    keyId = (await owner.locator('#keys-table tbody tr').first().getAttribute('data-key-id'))!;
    await open(owner, '/console/keys');
    expect(await owner.content()).not.toContain(key);
    expect(JSON.stringify(await inPage(owner, 'GET', '/console/v1/keys'))).not.toContain(key.slice(12));
    expect(await text(owner, '#keys-table tbody tr td.last-used')).toBe('—');

    // Lookups with it over HTTP: two operations, one definitive not-found (an answer, charged) and
    // one the source failed (an error, refunded: the sandbox's parse-error trigger).
    const calls = [
      await lookup(key, '/v1/company', { url: 'https://www.linkedin.com/company/acme-robotics' }),
      await lookup(key, '/v1/company', { url: 'https://www.linkedin.com/company/acme-robotics' }),
      await lookup(key, '/v1/domain', { domain: 'no-company-here.com' }),
      await lookup(key, '/v1/domain', { domain: 'sandbox-parse-error.com' }),
    ];
    expect(calls.map((c) => c.status)).toEqual([200, 200, 404, 502]);
    const charged = calls.reduce((s, c) => s + c.charged, 0);
    expect(charged).toBeGreaterThan(0);
    const usageRows = await waitForUsage(workspaceA, calls.length);
    const adminWorkspace = await admin('GET', `/admin/v1/workspaces/${workspaceA}`);
    expect(adminWorkspace.balance).toBe(100 - charged);
    const adminCharged = usageRows.reduce((s: number, r: { credits_charged: number; credits_refunded: number }) => s + r.credits_charged - r.credits_refunded, 0);
    expect(adminCharged).toBe(charged);

    // Overview: the admin API's numbers, to the credit, the error, the chart split by operation.
    await open(owner, '/console/overview');
    expect(await text(owner, '#balance')).toBe(String(adminWorkspace.balance));
    expect(await text(owner, '#spent-today')).toBe(String(charged));
    expect(await text(owner, '#spent-month')).toBe(String(charged));
    // Errors by the one definition, shown on the page: the failed call, not the not-found.
    const errors = (await owner.locator('#errors-table tbody').textContent())!;
    expect(errors).toContain(calls[3]!.requestId);
    expect(errors).not.toContain(calls[2]!.requestId);
    expect(await owner.locator('#errors-table tbody .key').first().textContent()).toBe('production');
    expect(await owner.locator('#errors-table tbody .key').first().getAttribute('title')).toBe(keyId);
    expect(await text(owner, '.definition')).toContain('A not-found is an answer, not an error');
    // The chart: a series per operation, dated axes with titles, the last 30 UTC days by default.
    expect(await owner.locator('#legend li').allTextContents()).toEqual(['company', 'domain']);
    const axes = await chartAxes(owner);
    expect(axes.x.title).toBe('Day (UTC)');
    expect(axes.y.title).toBe('Credits');
    expect(axes.x.ticks.length).toBeGreaterThan(3);
    for (const tick of axes.x.ticks) expect(tick).toMatch(/^[A-Z][a-z]{2} \d{1,2}$/);
    const monthDay = (day: Date) => new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' }).format(day);
    expect(axes.x.ticks[0]).toBe(monthDay(new Date(Date.now() - 29 * 86_400_000)));
    expect(axes.y.ticks.length).toBeGreaterThan(2);
    expect(await text(owner, '#chart-range')).toMatch(/^\d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d \(UTC days, \d{4}-\d\d-\d\d excluded\)$/);
    await owner.getByRole('button', { name: 'Calls' }).click();
    expect(await owner.locator('#chart canvas').getAttribute('aria-label')).toContain('4 calls in all');
    expect((await chartAxes(owner)).y.title).toBe('Calls');
    await owner.getByRole('button', { name: 'Per key' }).click();
    expect(await owner.locator('#legend li').allTextContents()).toEqual(['production']);
    await owner.getByRole('button', { name: 'Credits' }).click();
    await owner.getByRole('button', { name: 'Per operation' }).click();
    // A period of 7 days at a click, in the address.
    await owner.getByRole('button', { name: '7 days' }).click();
    await owner.waitForURL(/from=/);
    await owner.waitForFunction(() => (globalThis as any).document.body.dataset.ready === 'true');
    expect((await chartAxes(owner)).x.ticks.length).toBeGreaterThan(1);
    expect(await owner.getByRole('button', { name: '7 days' }).getAttribute('aria-pressed')).toBe('true');
    await owner.getByRole('button', { name: '30 days' }).click();
    await owner.waitForFunction(() => (globalThis as any).document.body.dataset.ready === 'true' && (globalThis as any).location.search.includes('from='));
    await owner.waitForFunction(() => (globalThis as any).document.querySelector('[data-days="30"]')?.getAttribute('aria-pressed') === 'true');
    await owner.screenshot({ path: screenshotPath() });
    // A series clicked on the overview opens Usage filtered to it.
    await owner.locator('#legend button', { hasText: 'domain' }).click();
    await owner.waitForURL(/\/console\/usage\?operation=domain/);
    await owner.waitForFunction(() => (globalThis as any).document.body.dataset.ready === 'true');
    expect(await text(owner, '#usage-table tfoot .total-calls')).toBe('2');
    expect(await text(owner, '#usage-table tfoot .total-errors')).toBe('1');

    // Usage, filtered per key through the form.
    await open(owner, '/console/usage');
    await owner.locator('#usage-filters select[name="key_id"]').selectOption(keyId);
    await owner.getByRole('button', { name: 'Apply' }).click();
    await owner.waitForURL(/key_id=/);
    await owner.waitForFunction(() => (globalThis as any).document.body.dataset.ready === 'true');
    expect(await text(owner, '#usage-table tfoot .total-calls')).toBe('4');
    expect(Number(await text(owner, '#usage-table tfoot .total-charged')) - Number(await text(owner, '#usage-table tfoot .total-refunded'))).toBe(charged);
    await owner.locator('#usage-filters select[name="operation"]').selectOption('domain');
    await owner.getByRole('button', { name: 'Apply' }).click();
    await owner.waitForURL(/key_id=.*operation=domain/);
    await owner.waitForFunction(() => (globalThis as any).document.body.dataset.ready === 'true');
    expect(await text(owner, '#usage-table tfoot .total-calls')).toBe('2');
    // A series clicked filters the table to it; clicked again, the filter goes.
    await owner.locator('#usage-filters select[name="operation"]').selectOption('');
    await owner.getByRole('button', { name: 'Apply' }).click();
    await owner.waitForURL((url) => !url.search.includes('operation='));
    await owner.waitForFunction(() => (globalThis as any).document.body.dataset.ready === 'true');
    await owner.locator('#legend button', { hasText: 'company' }).click();
    await owner.waitForURL(/operation=company/);
    await owner.waitForFunction(() => (globalThis as any).document.body.dataset.ready === 'true');
    expect(await text(owner, '#usage-table tfoot .total-calls')).toBe('2');
    expect(await owner.locator('#legend button', { hasText: 'company' }).getAttribute('aria-pressed')).toBe('true');
    await owner.locator('#legend button', { hasText: 'company' }).click();
    await owner.waitForURL((url) => !url.search.includes('operation=company'));
    await owner.waitForFunction(() => (globalThis as any).document.body.dataset.ready === 'true');
    expect(await text(owner, '#usage-table tfoot .total-calls')).toBe('4');

    // Ledger: every charge with its balance_after, searchable by request id, as CSV.
    await open(owner, '/console/ledger');
    const adminLedger = (await admin('GET', `/admin/v1/workspaces/${workspaceA}/ledger`)).data;
    expect(await owner.locator('#ledger-table tbody tr').count()).toBe(adminLedger.length);
    const last = adminLedger[adminLedger.length - 1];
    expect(await owner.locator('#ledger-table tbody tr').last().locator('td').last().textContent()).toBe(String(last.balance_after));
    // Keys by name (id on hover), each charge with its operation.
    expect(await owner.locator('#ledger-table tbody tr').last().locator('.key').textContent()).toBe('production');
    expect(await owner.locator('#ledger-table tbody tr').last().locator('td[data-label="Operation"]').textContent()).toBe('domain');
    const [download] = await Promise.all([owner.waitForEvent('download'), owner.getByRole('button', { name: 'Download' }).click()]);
    const csvPath = join(dataDir, 'ledger.csv');
    await download.saveAs(csvPath);
    const csv = (await import('node:fs')).readFileSync(csvPath, 'utf8').trim().split('\r\n');
    expect(csv[0]).toBe('position,recorded_at,type,request_id,key_id,credits,balance_after');
    expect(csv.length - 1).toBe(adminLedger.length);

    storyRequestId = calls[3]!.requestId;
    // A request's whole story, by searching its id: the failed call, charged then refunded.
    await owner.getByLabel('Request id').fill(calls[3]!.requestId);
    await owner.getByRole('button', { name: 'Search' }).click();
    await owner.waitForURL(/\/console\/request\?id=/);
    await owner.waitForFunction(() => (globalThis as any).document.body.dataset.ready === 'true');
    expect(await owner.locator('#story').getAttribute('data-request-id')).toBe(calls[3]!.requestId);
    expect(await text(owner, '#story-operation')).toBe('domain');
    expect(await text(owner, '#story-key')).toBe('production');
    expect(await text(owner, '#story-status')).toBe('502 parse_error (an error)');
    expect(await text(owner, '#story-refund')).toMatch(/^4 credits \(parse_error\), \d{4}-/);
    expect(await owner.locator('#story-ledger tbody tr').evaluateAll((trs) => trs.map((tr) => (tr as any).children[2].textContent))).toEqual(['LookupCharged', 'LookupRefunded']);
    const storyEvents = await owner.locator('#story-events tbody tr').evaluateAll((trs) => trs.map((tr) => (tr as any).children[2].textContent));
    expect(storyEvents).toEqual(expect.arrayContaining(['LookupCharged', 'LookupCompleted', 'LookupRefunded']));
    // From the ledger, a found call's story carries the profile's content hash.
    await open(owner, '/console/ledger');
    await owner.getByRole('link', { name: calls[0]!.requestId }).click();
    await owner.waitForURL(/\/console\/request\?id=/);
    await owner.waitForFunction(() => (globalThis as any).document.body.dataset.ready === 'true');
    expect(await text(owner, '#story-status')).toBe('200 (found)');
    expect(await text(owner, '#story-hash')).toMatch(/^sha256:[0-9a-f]+$/);
    expect(await text(owner, '#story-refund')).toBe('no');
    // Another workspace's (or no) request id: not found, said so.
    await open(owner, '/console/request?id=req_01ZZZZZZZZZZZZZZZZZZZZZZZZ');
    expect(await text(owner, '#error')).toContain('No call of this workspace');

    // Last use shows on the keys page.
    await open(owner, '/console/keys');
    expect(await text(owner, '#keys-table tbody tr td.last-used')).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);

    // The owner invites a member from the console; the member sees the same numbers.
    await open(owner, '/console/members');
    memberEmail = 'grace@example.com';
    await owner.getByLabel('Email', { exact: true }).fill(memberEmail);
    await owner.locator('#invite-form').getByRole('combobox').selectOption('member');
    await owner.getByRole('button', { name: 'Invite' }).click();
    await owner.locator('#invite-sent:not([hidden])').waitFor();
    expect(await text(owner, '#invite-sent-to')).toBe(memberEmail);
    // The link is in the invited address's mailbox (here the outbox folder), never on the owner's page.
    const memberLink = await mailedLink(memberEmail, '/console/accept');
    expect(await owner.locator('#invitations-table tbody').textContent()).toContain(memberEmail);
    // Every confirmation is the one dialog: cancelling an invitation asks first, and Cancel keeps it.
    await owner.getByRole('button', { name: `Cancel the invitation of ${memberEmail}` }).click();
    expect(await text(owner, '#confirm-title')).toBe('Cancel this invitation?');
    await owner.locator('#confirm-dialog').getByRole('button', { name: 'Cancel', exact: true }).click();
    expect(await owner.locator('#confirm-dialog').isVisible()).toBe(false);
    expect(await owner.locator('#invitations-table tbody').textContent()).toContain(memberEmail);
    member = await newPage({ width: 390, height: 844 });
    await acceptInvitation(member, memberLink, PASSWORD_MEMBER);
    expect(await text(member, '#balance')).toBe(String(adminWorkspace.balance));
    expect(await text(member, '#spent-today')).toBe(String(charged));
    // Readable on a phone: nothing wider than the screen but the tables' own scrolling boxes.
    expect(await member.evaluate(() => (globalThis as any).document.documentElement.scrollWidth <= (globalThis as any).innerWidth)).toBe(true);
    expect(await member.getByRole('link', { name: 'Members' }).count()).toBe(0);
    // Opened anyway, Members says it is the owners' page instead of offering forms that would fail.
    await open(member, '/console/members');
    expect(await member.locator('#owners-only').isVisible()).toBe(true);
    expect(await member.locator('#invite-form').isVisible()).toBe(false);
    expect(await member.locator('#error').isVisible()).toBe(false);
    expect((await inPage(member, 'GET', '/console/v1/members')).status).toBe(403);
    await open(member, `/console/usage?key_id=${keyId}`);
    expect(await text(member, '#usage-table tfoot .total-calls')).toBe('4');
    expect((await inPage(member, 'POST', '/console/v1/invitations', { body: { email: 'x@example.com' } })).body.error.code).toBe('forbidden');

    // Revoke, with confirmation: the very next call with the key is refused.
    await open(owner, '/console/keys');
    await owner.getByRole('button', { name: 'Revoke production' }).click();
    await owner.locator('#confirm-button').click();
    await expect.poll(() => owner.locator('#keys-table tbody tr td.revoked').textContent()).not.toBe('no');
    expect((await lookup(key, '/v1/company', { url: 'https://www.linkedin.com/company/acme-robotics' })).status).toBe(401);

    // Sign out: the old cookie is dead, on the API and on the pages' data.
    const [cookie] = (await owner.context().cookies()).filter((c) => c.name === 'lookup_console_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/console' });
    await owner.getByRole('button', { name: 'Sign out' }).click();
    await owner.waitForURL(`${base}/console`);
    const replay = await fetch(`${base}/console/v1/session`, { headers: { cookie: `lookup_console_session=${cookie!.value}` } });
    expect(replay.status).toBe(401);
    expect(((await replay.json()) as any).error.code).toBe('unauthorized');
    await owner.context().addCookies([cookie!]);
    await owner.goto(`${base}/console/overview`);
    await owner.waitForURL(`${base}/console`);

    // Signing in again, with the keyboard alone.
    await open(owner, '/console');
    await owner.getByLabel('Email').focus();
    await owner.keyboard.type('ada@example.com');
    await owner.keyboard.press('Tab');
    await owner.keyboard.type(PASSWORD_OWNER);
    await owner.keyboard.press('Enter');
    await owner.waitForURL(`${base}/console/overview`);

    // Every membership change is in the log, attributed.
    const audit = await admin('POST', '/admin/v1/audit');
    expect(audit.ok).toBe(true);
  });

  it("shows the statement of a month, to the credit of the admin API's, with its CSV, chaining to the next month, on a phone too", async () => {
    const figures = async (page: Page) => {
      const read = async (id: string) => Number((await text(page, `#${id}`)).replace(/,/g, ''));
      return {
        opening_balance: await read('opening'),
        credits_granted: await read('granted'),
        charged: await read('charged'),
        refunded: await read('refunded'),
        closing_balance: await read('closing'),
        calls: await read('calls'),
      };
    };
    const adminStatement = (period: { from: string; to: string }, csv = false) =>
      fetch(`${base}/admin/v1/workspaces/${workspaceA}/statement?from=${period.from}T00:00:00Z&to=${period.to}T00:00:00Z${csv ? '&format=csv' : ''}`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
    const shownPeriod = async (page: Page) => {
      const [from, to] = (await page.locator('#statement').getAttribute('data-period'))!.split('/');
      return { from: from!, to: to! };
    };
    const pick = (s: Record<string, unknown>) => ({
      opening_balance: s.opening_balance, credits_granted: s.credits_granted, charged: s.charged, refunded: s.refunded, closing_balance: s.closing_balance, calls: s.calls,
    });

    // By default, the current UTC month, [its first day, the next month's first day).
    await open(owner, '/console/statement');
    const now = new Date();
    const month = { from: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString().slice(0, 10), to: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString().slice(0, 10) };
    expect(await shownPeriod(owner)).toEqual(month);
    const expected: any = await (await adminStatement(month)).json();
    expect(expected.calls).toBeGreaterThan(0);
    expect(await figures(owner)).toEqual(pick(expected));
    expect(await text(owner, '#identity')).toBe(
      `opening ${expected.opening_balance} + granted ${expected.credits_granted} − charged ${expected.charged} + refunded ${expected.refunded} = closing ${expected.closing_balance}`,
    );
    const rows = await owner.locator('#statement-table tbody tr').evaluateAll((trs) => trs.map((tr) => [...(tr as any).children].map((td: any) => td.textContent)));
    expect(rows).toEqual(expected.by_operation.map((o: any) => [o.operation, String(o.calls), String(o.charged), String(o.refunded)]));

    // The CSV is the admin API's, one line per ledger entry.
    const [download] = await Promise.all([owner.waitForEvent('download'), owner.getByRole('link', { name: 'Download CSV' }).click()]);
    const csvPath = join(dataDir, 'statement.csv');
    await download.saveAs(csvPath);
    const csv = (await import('node:fs')).readFileSync(csvPath, 'utf8');
    expect(csv).toBe(await (await adminStatement(month, true)).text());
    expect(csv.trim().split('\r\n')).toHaveLength(1 + expected.entries);

    // Adjacent months chain: the next month opens on this month's closing, the previous one closes on its opening.
    await owner.getByRole('button', { name: 'Next month' }).click();
    await expect.poll(() => shownPeriod(owner)).not.toEqual(month);
    const next = await shownPeriod(owner);
    expect(next.from).toBe(month.to);
    expect(await figures(owner)).toEqual(pick((await (await adminStatement(next)).json()) as any));
    expect((await figures(owner)).opening_balance).toBe(expected.closing_balance);
    await owner.getByRole('button', { name: 'Previous month' }).click();
    await expect.poll(() => shownPeriod(owner)).toEqual(month);
    await owner.getByRole('button', { name: 'Previous month' }).click();
    await expect.poll(() => shownPeriod(owner)).not.toEqual(month);
    const previous = await shownPeriod(owner);
    expect(previous.to).toBe(month.from);
    expect((await figures(owner)).closing_balance).toBe(expected.opening_balance);
    // The period is in the address: a reload shows the same one.
    await owner.reload();
    await owner.waitForFunction(() => (globalThis as any).document.body.dataset.ready === 'true');
    expect(await shownPeriod(owner)).toEqual(previous);

    // A custom period of days, chosen in the form; a backwards one is refused in the page.
    await owner.getByLabel('From (UTC day, included)').fill(month.from);
    await owner.getByLabel('To (UTC day, excluded)').fill(month.to);
    await owner.getByRole('button', { name: 'Show' }).click();
    await expect.poll(() => shownPeriod(owner)).toEqual(month);
    expect(await owner.getByLabel('Month').inputValue()).toBe(month.from.slice(0, 7));
    await owner.getByLabel('From (UTC day, included)').fill(month.to);
    await owner.getByLabel('To (UTC day, excluded)').fill(month.from);
    await owner.getByRole('button', { name: 'Show' }).click();
    await expect.poll(() => owner.locator('#error').textContent()).toContain('must not be before');

    // A member reads it too, on a phone: same figures, nothing wider than the screen.
    await open(member, '/console/statement');
    expect(await figures(member)).toEqual(pick(expected));
    expect(await member.evaluate(() => (globalThis as any).document.documentElement.scrollWidth <= (globalThis as any).innerWidth)).toBe(true);
  });

  it('fits every page at 1280×800 and on a 390 px phone: no sideways scroll, tables as cards on the phone, charts with labelled axes', { timeout: 120_000 }, async () => {
    const pages = ['overview', 'keys', 'webhooks', 'usage', 'ledger', 'statement', 'members', 'account', `request?id=${storyRequestId}`];
    for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
      // The owner's session, in a tab of the size.
      const page = await owner.context().newPage();
      await page.setViewportSize(viewport);
      for (const name of ['signin', 'accept', ...pages]) {
        await open(page, name === 'signin' ? '/console' : name === 'accept' ? '/console/accept?token=unknown' : `/console/${name}`);
        const fit = await page.evaluate(() => {
          const doc = (globalThis as any).document;
          const boxes = [...doc.querySelectorAll('.table-wrap')].map((b: any) => ({ scroll: b.scrollWidth, client: b.clientWidth }));
          return { scroll: doc.documentElement.scrollWidth, width: (globalThis as any).innerWidth, boxes, ready: doc.body.dataset.ready };
        });
        const where = `${name} at ${viewport.width} px`;
        expect(fit.ready, where).toBe('true');
        expect(fit.scroll, where).toBeLessThanOrEqual(fit.width);
        // No table hides columns behind a scroll of its own either.
        for (const box of fit.boxes) expect(box.scroll, where).toBeLessThanOrEqual(box.client);
        // A scroll box is reachable with the keyboard.
        for (const tabindex of await page.locator('.table-wrap').evaluateAll((bs) => bs.map((b) => (b as any).getAttribute('tabindex')))) expect(tabindex, where).toBe('0');
        if (viewport.width === 390 && (await page.locator('table').count()) > 0) {
          // On the phone a table is a list of cards: no header row, each value labelled.
          expect(await page.locator('table thead').first().isVisible(), where).toBe(false);
          const row = page.locator('table tbody tr:not(.empty)').first();
          if ((await row.count()) > 0) expect(await row.locator('td').first().getAttribute('data-label'), where).toBeTruthy();
        }
        if (name === 'overview' || name === 'usage') {
          const axes = await chartAxes(page);
          expect(axes.x.title, where).toBe('Day (UTC)');
          expect(axes.y.title, where).toBe('Credits');
          expect(axes.x.ticks.length, where).toBeGreaterThan(1);
          expect(axes.y.ticks.length, where).toBeGreaterThan(1);
        }
        if (viewport.width === 1280 && name === 'overview') {
          // The top bar is one line on a laptop: the sign-out button beside the brand, not below it.
          const [brand, signOut] = await Promise.all([page.locator('.top .brand').boundingBox(), page.locator('#sign-out').boundingBox()]);
          expect(Math.abs(signOut!.y + signOut!.height / 2 - (brand!.y + brand!.height / 2)), where).toBeLessThan(8);
        }
        if (name === 'keys' && viewport.width === 390) {
          // The actions stay within reach on the phone.
          const revoke = page.getByRole('button', { name: /^Revoke / }).first();
          if ((await revoke.count()) > 0) {
            const box = (await revoke.boundingBox())!;
            expect(box.x + box.width, where).toBeLessThanOrEqual(viewport.width);
          }
        }
      }
      await page.close();
    }
  });

  it('refuses a state change without the session CSRF token, or from another origin', async () => {
    const before = (await inPage(owner, 'GET', '/console/v1/keys')).body.data.length;
    const noToken = await inPage(owner, 'POST', '/console/v1/keys', { body: { name: 'csrf' }, csrf: false });
    expect(noToken.status).toBe(403);
    expect(noToken.body.error).toMatchObject({ code: 'forbidden', reason: 'csrf' });

    // A page on another origin posting with the member's cookie: the browser does not send it
    // (SameSite=Lax), and the service refuses an origin other than its own even with a token.
    const evil = await serveEvilPage(base);
    try {
      const page = owner;
      await page.goto(evil.url);
      await page.waitForFunction(() => (globalThis as any).done === true);
      const [cookie] = (await page.context().cookies(`${base}/console`)).filter((c) => c.name === 'lookup_console_session');
      await open(page, '/console/overview');
      const session = (await inPage(page, 'GET', '/console/v1/session')).body;
      const forged = await fetch(`${base}/console/v1/keys`, {
        method: 'POST',
        headers: { cookie: `lookup_console_session=${cookie!.value}`, 'x-csrf-token': session.csrf_token, origin: evil.url, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(forged.status).toBe(403);
    } finally {
      evil.server.close();
    }
    expect((await inPage(owner, 'GET', '/console/v1/keys')).body.data.length).toBe(before);
  });

  it('refuses an invitation link used twice', async () => {
    const page = await newPage();
    await open(page, new URL(ownerLink).pathname + new URL(ownerLink).search);
    expect(await page.locator('#error').textContent()).toContain('already been used');
    expect(await page.locator('#accept-form').isHidden()).toBe(true);
    const direct = await fetch(`${base}/console/v1/invitations/accept`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: new URL(ownerLink).searchParams.get('token'), password: 'another password 99' }),
    });
    expect(direct.status).toBe(400);
    expect(((await direct.json()) as any).error.reason).toBe('invitation_used');
  });

  it('shows a member of workspace A nothing of workspace B, whatever ids are put in the calls', async () => {
    const workspaceB = (await admin('POST', '/admin/v1/workspaces', { name: 'Bravo', credits: 50 })).id;
    const bKey = await admin('POST', `/admin/v1/workspaces/${workspaceB}/keys`, { name: 'bravo' });
    const bInvitation = await admin('POST', `/admin/v1/workspaces/${workspaceB}/invitations`, { email: 'bob@example.com', role: 'owner' });
    const bOwner = await newPage();
    await acceptInvitation(bOwner, bInvitation.link, 'bravo password 1234');
    const bMemberId = (await inPage(bOwner, 'GET', '/console/v1/session')).body.member.id;
    const bPending = (await inPage(bOwner, 'POST', '/console/v1/invitations', { body: { email: 'carol@example.com' } })).body.invitation_id;
    // A's member's email is nothing to B: inviting it is answered as for anyone (no "taken elsewhere").
    const sameEmail = await inPage(bOwner, 'POST', '/console/v1/invitations', { body: { email: memberEmail } });
    expect(sameEmail.status).toBe(201);
    await inPage(bOwner, 'DELETE', `/console/v1/invitations/${sameEmail.body.invitation_id}`);

    const attempts = [
      await inPage(owner, 'PATCH', `/console/v1/keys/${bKey.id}`, { body: { name: 'mine now' } }),
      await inPage(owner, 'POST', `/console/v1/keys/${bKey.id}/revoke`),
      await inPage(owner, 'GET', `/console/v1/usage?key_id=${bKey.id}`),
      await inPage(owner, 'PATCH', `/console/v1/members/${bMemberId}`, { body: { role: 'member' } }),
      await inPage(owner, 'DELETE', `/console/v1/members/${bMemberId}`),
      await inPage(owner, 'DELETE', `/console/v1/invitations/${bPending}`),
    ];
    expect(attempts.map((a) => a.status)).toEqual([404, 404, 404, 404, 404, 404]);
    expect(attempts.map((a) => a.body.error.code)).toEqual(['not_found', 'not_found', 'not_found', 'not_found', 'not_found', 'not_found']);
    // The workspace id is never taken from the caller: A's pages show A's numbers only.
    expect((await inPage(owner, 'GET', `/console/v1/ledger?request_id=${encodeURIComponent('req_01ZZZZZZZZZZZZZZZZZZZZZZZZ')}`)).body.data).toEqual([]);
    expect(JSON.stringify((await inPage(owner, 'GET', '/console/v1/keys')).body)).not.toContain(bKey.id);
    expect((await inPage(owner, 'GET', '/console/v1/overview')).body.balance).not.toBe(50);
    // B's key still works and B's member is still there, still an owner.
    const bCall = await lookup(bKey.key, '/v1/company', { url: 'https://www.linkedin.com/company/acme-robotics' });
    expect(bCall.status).toBe(200);
    // B's call has a story for B, none for A.
    expect((await inPage(bOwner, 'GET', `/console/v1/requests/${bCall.requestId}`)).body.call.operation).toBe('company');
    const foreignStory = await inPage(owner, 'GET', `/console/v1/requests/${bCall.requestId}`);
    expect(foreignStory.status).toBe(404);
    expect(JSON.stringify(foreignStory.body)).not.toContain(workspaceB);
    expect((await inPage(bOwner, 'GET', '/console/v1/session')).body.member.role).toBe('owner');
  });

  it('resets a forgotten password by the emailed link, ending the old session; shows a 402 as a banner', { timeout: 60_000 }, async () => {
    const ws = (await admin('POST', '/admin/v1/workspaces', { name: 'Charlie', credits: 0 })).id;
    const invitation = await admin('POST', `/admin/v1/workspaces/${ws}/invitations`, { email: 'cora@example.com', role: 'owner' });
    const before = await newPage();
    await acceptInvitation(before, invitation.link, 'charlie password 1234');
    // A caller out of credits gets 402: the overview says so.
    const key = await admin('POST', `/admin/v1/workspaces/${ws}/keys`, { name: 'charlie' });
    expect((await lookup(key.key, '/v1/company', { url: 'https://www.linkedin.com/company/acme-robotics' })).status).toBe(402);
    await expect
      .poll(async () => {
        await open(before, '/console/overview');
        return before.locator('#refused-banner').isVisible();
      })
      .toBe(true);
    expect(await text(before, '#refused-banner')).toContain('/v1/company');

    const page = await newPage();
    await open(page, `/console?workspace=${ws}`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.waitForFunction(() => (globalThis as any).document.body.dataset.ready === 'true');
    await page.getByLabel('Workspace id').fill(ws);
    await page.getByLabel('Email').fill('cora@example.com');
    await page.getByRole('button', { name: 'Email me a reset link' }).click();
    await page.locator('#forgot-sent:not([hidden])').waitFor();
    const link = await mailedLink('cora@example.com', '/console/reset');
    await open(page, new URL(link).pathname + new URL(link).search);
    // The token leaves the address bar at once.
    expect(page.url()).not.toContain('token=');
    await page.getByLabel('New password').fill('charlie reset 56789');
    await page.getByLabel('Repeat it').fill('charlie reset 56789');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.locator('#reset-done:not([hidden])').waitFor();
    expect((await inPage(before, 'GET', '/console/v1/session')).status).toBe(401);
    const signIn = (password: string) =>
      fetch(`${base}/console/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ workspace_id: ws, email: 'cora@example.com', password }) });
    expect((await signIn('charlie password 1234')).status).toBe(401);
    expect((await signIn('charlie reset 56789')).status).toBe(200);
  });

  it('slows, then locks, repeated failed sign-ins for an email', { timeout: 60_000 }, async () => {
    const page = await newPage();
    await open(page, '/console');
    const attempt = (password: string) =>
      page.evaluate(async ({ workspace_id, email, password }) => {
        const res = await fetch('/console/v1/session', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ workspace_id, email, password }) });
        return { status: res.status, retryAfter: Number(res.headers.get('retry-after') ?? 0), body: (await res.json()) as any };
      }, { workspace_id: workspaceA, email: memberEmail, password });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await attempt('wrong password!!')).status);
    expect(statuses).toEqual([401, 401, 401]);
    // Slowed: the next attempt right away is refused before the password is even checked.
    const slowed = await attempt('wrong password!!');
    expect(slowed.status).toBe(429);
    expect(slowed.body.error.reason).toBe('sign_in_slowed');
    let failures = 3;
    while (failures < 5) {
      const answer = await attempt('wrong password!!');
      if (answer.status === 429) {
        await new Promise((r) => setTimeout(r, answer.retryAfter * 1000 + 100));
        continue;
      }
      expect(answer.status).toBe(401);
      failures++;
    }
    // Locked: even the right password is refused for a while, in the page too (a new browser:
    // it remembers no workspace, the member types its id).
    expect(await page.getByLabel('Workspace id').inputValue()).toBe('');
    await page.getByLabel('Workspace id').fill(workspaceA);
    await page.getByLabel('Email').fill(memberEmail);
    await page.getByLabel('Password').fill(PASSWORD_MEMBER);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.locator('#error').textContent()).toContain('locked');
    const locked = await attempt(PASSWORD_MEMBER);
    expect(locked.status).toBe(429);
    expect(locked.body.error.reason).toBe('sign_in_locked');
    expect(locked.retryAfter).toBeGreaterThan(60);
    // The member's open session is untouched by the lockout.
    expect((await inPage(member, 'GET', '/console/v1/session')).status).toBe(200);
    // Console calls draw on their own bucket, not the Meta area's 120/min.
    const probe = await fetch(`${base}/console`);
    expect(Number(probe.headers.get('ratelimit-limit'))).toBe(600);
  });
});

/** What the chart's axes show, as the page records them (titles and tick labels as drawn). */
async function chartAxes(page: Page): Promise<{ x: { title: string; ticks: string[] }; y: { title: string; ticks: string[] } }> {
  return JSON.parse((await page.locator('#chart').getAttribute('data-axes'))!);
}

/** docs/console.png when UPDATE_SCREENSHOTS=1 (commit it), else a throwaway file. */
function screenshotPath(): string {
  if (process.env.UPDATE_SCREENSHOTS === '1') return join(process.cwd(), 'docs', 'console.png');
  return join(mkdtempSync(join(tmpdir(), 'console-shot-')), 'console.png');
}

/** A page on another origin that tries to create a key with the visitor's console cookie. */
async function serveEvilPage(target: string): Promise<{ url: string; server: Server }> {
  const html = `<!doctype html><title>evil</title><script>
fetch(${JSON.stringify(`${target}/console/v1/keys`)}, { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' }, body: '{"name":"evil"}' })
  .catch(() => undefined).then(() => { window.done = true; });
</script>`;
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
  return { url: `http://127.0.0.2:${(server.address() as AddressInfo).port}`, server };
}
