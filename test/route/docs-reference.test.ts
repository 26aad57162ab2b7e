// The API reference page and the docs' assets through app.inject, by answer status.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRouteApp, type RouteApp } from './support';

let t: RouteApp;
beforeAll(async () => {
  t = await startRouteApp();
}, 60_000);
afterAll(async () => t?.close());

/** The `src` and `href` of a page's script and link elements, but the empty icon (`data:,`), which loads nothing. */
const referencedUrls = (html: string) =>
  [...html.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+)"/g)].map((m) => m[1]!).filter((url) => url !== 'data:,');

describe('200', () => {
  it('/docs/reference is HTML under a CSP that loads only this host, and its assets are served, cached for good', async () => {
    const page = await t.call('GET', '/docs/reference');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(page.body).toContain('spec-url="/v1/openapi.json"');
    // Styles only from this host or under the answer's nonce, which the script run before Redoc's carries.
    expect(csp).not.toContain('unsafe-inline');
    const nonce = /style-src 'self' 'nonce-([A-Za-z0-9+/=]{20,})'/.exec(csp)?.[1];
    expect(nonce).toBeDefined();
    expect(page.body).toMatch(new RegExp(`<script src="/docs/assets/reference-nonce\\.js\\?v=[^"]+" nonce="${nonce!.replace(/[+/=]/g, (c) => `\\${c}`)}"></script>\\s*<script src="/docs/assets/redoc\\.standalone\\.js`));
    expect(page.headers['cache-control']).toBe('no-store');
    const again = await t.call('GET', '/docs/reference');
    expect(String(again.headers['content-security-policy'])).not.toContain(`'nonce-${nonce}'`);
    const urls = referencedUrls(page.body);
    expect(urls.length).toBeGreaterThanOrEqual(2);
    for (const url of urls) {
      expect(url.startsWith('/docs/assets/')).toBe(true);
      const asset = await t.call('GET', url);
      expect(asset.statusCode).toBe(200);
      expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(asset.body.length).toBeGreaterThan(100);
    }
    const script = await t.call('GET', urls.find((u) => u.includes('redoc.standalone.js'))!);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
  });

  it('an asset asked for without its version is revalidated, not cached for good', async () => {
    const css = await t.call('GET', '/docs/assets/docs.css');
    expect(css.statusCode).toBe(200);
    expect(css.headers['cache-control']).toBe('no-cache');
  });

  it('/docs and /docs/errors have a viewport, the local style sheet, and /docs links the reference and lists the sandbox triggers', async () => {
    for (const path of ['/docs', '/docs/errors']) {
      const body = (await t.call('GET', path)).body;
      expect(body).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
      expect(referencedUrls(body).every((u) => u.startsWith('/docs/assets/docs.css?v='))).toBe(true);
    }
    const docs = (await t.call('GET', '/docs')).body;
    expect(docs).toContain('href="/docs/reference"');
    expect(docs).toContain('<code>sandbox-timeout</code>');
    expect(docs).toContain('<a href="/docs/errors#timeout">');
  });

  it("/docs/errors is the catalogue of /v1/errors: the envelope's doc_url leads to the code's section, which says what to do", async () => {
    const missing = (await t.call('GET', '/v1/nope')).json().error;
    const link = new URL(missing.doc_url);
    expect([link.pathname, link.hash]).toEqual(['/docs/errors', '#route_not_found']);
    const page = (await t.call('GET', link.pathname)).body;
    const catalogue = (await t.call('GET', '/v1/errors')).json().data as { code: string; status: number; action: string; doc_url: string }[];
    expect([...page.matchAll(/<section id="([a-z_]+)">/g)].map((m) => m[1])).toEqual(catalogue.map((e) => e.code));
    for (const entry of catalogue) {
      expect(new URL(entry.doc_url).hash, entry.code).toBe(`#${entry.code}`);
      const section = page.slice(page.indexOf(`<section id="${entry.code}">`), page.indexOf('</section>', page.indexOf(`<section id="${entry.code}">`)));
      expect(section, entry.code).toContain(`<dt>HTTP status</dt><dd>${entry.status}</dd>`);
      expect(section, entry.code).toContain('<dt>What to do</dt>');
      expect(entry.action.length, entry.code).toBeGreaterThan(20);
    }
  });
});

describe('404', () => {
  it('an unknown asset is route_not_found', async () => {
    const missing = await t.call('GET', '/docs/assets/nope.js');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('route_not_found');
  });
});
