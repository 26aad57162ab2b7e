// The API reference (/docs/reference, Redoc from /docs/assets) and the docs pages in a real Chromium
// (playwright-core driving Debian's /usr/bin/chromium) against the service running in-process:
// rendered from /v1/openapi.json under the page's CSP, with no console errors, no request to
// another host, and no horizontal overflow at 1280 and 390 px.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../services/api/server';
import { loadConfig } from '../../services/config/config';
import { createTestDatabase, serverUrl, type TestDatabase } from '../support/servers';

const CHROMIUM = '/usr/bin/chromium';

function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.CI === 'true') throw new Error(`test/browser/docs-reference.test.ts needs Chromium at ${CHROMIUM} under CI`);
  console.warn(`\n!!! SKIPPING test/browser/docs-reference.test.ts: no Chromium at ${CHROMIUM} (apt-get install chromium) !!!\n`);
  return false;
}

const available = chromiumAvailable() && serverUrl('postgres') !== undefined;

describe.runIf(available)('the docs pages in Chromium', { timeout: 90_000 }, () => {
  let database: TestDatabase;
  let server: RunningServer;
  let browser: Browser;
  let dataDir: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'docs-browser-'));
    server = await startServer(
      loadConfig({
        PORT: '0',
        ADMIN_TOKEN: 'docs-browser-admin-token-'.padEnd(40, 'x'),
        DATABASE_URL: database.url,
        SOURCE_URL: 'sandbox',
        DATA_DIR: dataDir,
        LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'silent',
        MAX_EVENT_LOOP_DELAY_MS: '60000',
      }),
    );
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  for (const width of [1280, 390]) {
    it(`/docs/reference renders the operations of /v1/openapi.json at ${width} px, with no console error, no other host and no overflow`, async () => {
      const context = await browser.newContext({ viewport: { width, height: 800 } });
      const page = await context.newPage();
      const problems: string[] = [];
      const foreignRequests: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(String(error)));
      page.on('response', (response) => {
        if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
      });
      page.on('request', (request) => {
        if (!request.url().startsWith(server.url) && !request.url().startsWith('data:')) foreignRequests.push(request.url());
      });
      const answer = await page.goto(`${server.url}/docs/reference`);
      await page.waitForSelector('[data-section-id*="operation/"]', { timeout: 60_000 });
      // Redoc's section ids end in `operation/<operationId>`.
      const rendered = new Set(
        await page
          .locator('[data-section-id*="operation/"]')
          .evaluateAll((nodes) => nodes.map((node: any) => (node.getAttribute('data-section-id') as string).split('operation/').at(-1))),
      );
      const openapi = (await (await fetch(`${server.url}/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, { operationId?: string }>> };
      const operationIds = Object.values(openapi.paths).flatMap((item) => Object.values(item).flatMap((op) => (op.operationId ? [op.operationId] : [])));
      expect(operationIds.length).toBeGreaterThan(10);
      expect([...rendered].sort()).toEqual([...new Set(operationIds)].sort());
      expect(await page.getByText('/v1/company', { exact: true }).count()).toBeGreaterThan(0);
      // Under a CSP without 'unsafe-inline' for styles: Redoc's style elements carry the answer's
      // nonce and style it (its menu sticks), also after opening a section and an error answer.
      if (width >= 1280) await page.locator('.menu-content').getByText('Console', { exact: true }).first().click();
      await page.locator('button:visible:has-text("404")').first().click();
      const styling = await page.evaluate(() => {
        const g = globalThis as any;
        return {
          nonces: [...g.document.querySelectorAll('style')].map((style: any) => style.nonce as string),
          styledRules: g.document.querySelector('style[data-styled]').sheet.cssRules.length as number,
          menu: g.getComputedStyle(g.document.querySelector('.menu-content')).position as string,
        };
      });
      expect(styling.styledRules).toBeGreaterThan(100);
      if (width >= 1280) expect(styling.menu).toBe('sticky');
      expect(styling.nonces.length).toBeGreaterThanOrEqual(2);
      expect(new Set(styling.nonces).size).toBe(1);
      expect(String(answer!.headers()['content-security-policy'])).toContain(`style-src 'self' 'nonce-${styling.nonces[0]}'`);
      const overflow = await page.evaluate(() => {
        const doc = (globalThis as any).document.documentElement;
        return { scroll: doc.scrollWidth, width: (globalThis as any).innerWidth };
      });
      expect(overflow.scroll).toBeLessThanOrEqual(overflow.width);
      expect(problems).toEqual([]);
      expect(foreignRequests).toEqual([]);
      await context.close();
    });

    it(`/docs and /docs/errors are styled and fit at ${width} px`, async () => {
      const context = await browser.newContext({ viewport: { width, height: 800 } });
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
      for (const path of ['/docs', '/docs/errors']) {
        await page.goto(`${server.url}${path}`);
        const state = await page.evaluate(() => {
          const g = globalThis as any;
          return { scroll: g.document.documentElement.scrollWidth, width: g.innerWidth, font: g.getComputedStyle(g.document.body).fontFamily as string };
        });
        expect(state.scroll).toBeLessThanOrEqual(state.width);
        expect(state.font).toContain('system-ui');
      }
      expect(problems).toEqual([]);
      await context.close();
    });
  }
});
