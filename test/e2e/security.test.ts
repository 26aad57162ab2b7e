// End-to-end: what a hostile caller can and cannot do over HTTP, on PGlite and on PostgreSQL
// (+ Redis). Host and X-Forwarded-* never steer the URLs served to others unless TRUST_PROXY says
// so; the admin area shows nothing without its token; answers carrying keys are not cached and
// the HTML docs cannot be framed or sniffed; two different keys in one request are refused.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { expectError } from './support/contract';
import { ADMIN_TOKEN, backends, newCustomer, startE2eServer, type Customer, type E2eServer, type HttpResult } from './support/harness';

/**
 * One request with exactly these header lines, repeats included (fetch would merge them), and
 * whatever Host the test chooses.
 */
function rawCall(baseUrl: string, method: string, path: string, headerLines: Array<[string, string]>, body?: unknown): Promise<HttpResult> {
  const url = new URL(path, baseUrl);
  const lines = [...headerLines];
  if (!lines.some(([name]) => name.toLowerCase() === 'host')) lines.unshift(['Host', url.host]);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  if (payload !== undefined) lines.push(['Content-Type', 'application/json'], ['Content-Length', String(Buffer.byteLength(payload))]);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers: lines.flat(), agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try {
            parsed = text === '' ? undefined : JSON.parse(text);
          } catch {
            parsed = undefined;
          }
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            for (const v of Array.isArray(value) ? value : [value ?? '']) headers.append(name, v);
          }
          resolve({ status: res.statusCode ?? 0, headers, body: parsed, text });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

const HOSTILE_HOST = 'attacker.example:8443';
const FORWARDED: Array<[string, string]> = [['X-Forwarded-Proto', 'https'], ['X-Forwarded-Host', 'api.example.org']];
const ADMIN_AUTH: [string, string] = ['Authorization', `Bearer ${ADMIN_TOKEN}`];

describe.each(backends())('security over HTTP on $name', (backend) => {
  describe.skipIf(!backend.available)(`on ${backend.name}`, () => {
    let server: E2eServer;
    let c: Customer;

    beforeAll(async () => {
      server = await startE2eServer(backend);
      c = await newCustomer(server, 100, 'security');
    });
    afterAll(async () => server?.stop());

    const get = (path: string, headerLines: Array<[string, string]> = []) => rawCall(server.url, 'GET', path, headerLines);

    test('a hostile Host or X-Forwarded-Host changes no URL, neither for its sender nor for anyone after', async () => {
      for (const headers of [[['Host', HOSTILE_HOST]], FORWARDED, [['Host', HOSTILE_HOST], ...FORWARDED]] as Array<Array<[string, string]>>) {
        const doc = await get('/v1/openapi.json', headers);
        expect(doc.status, doc.text).toBe(200);
        expect(doc.body.servers).toEqual([{ url: server.url }]);
        expect(doc.text).not.toContain('attacker.example');
        expect(doc.text).not.toContain('api.example.org');

        const error = await rawCall(server.url, 'POST', '/v1/company', [...headers, ['Authorization', `Bearer ${c.key}`]], {});
        expectError(error, server, { code: 'invalid_request', remaining: 100 });

        const catalogue = await get('/v1/errors', headers);
        expect(catalogue.body.data.find((e: any) => e.code === 'timeout').doc_url).toBe(`${server.url}/docs/errors#timeout`);
        const page = await get('/docs/errors', headers);
        expect(page.text).toContain(`href="${server.url}/docs"`);
        expect(page.text).not.toContain('attacker.example');

        const notFound = await get('/v1/nothing-here', headers);
        expect(notFound.body.error.doc_url).toBe(`${server.url}/docs/errors#route_not_found`);
      }
      // The caller after them sees the server's own address.
      expect((await get('/v1/openapi.json')).body.servers).toEqual([{ url: server.url }]);
    });

    test.each([
      ['GET', '/admin/v1/workspaces'],
      ['GET', '/admin/v1/nothing-here'],
      ['DELETE', '/admin/v1/workspaces/ws_x'],
      ['GET', '/admin/v2/anything'],
      ['POST', '/admin/'],
      ['GET', '/admin'],
      ['GET', '/admin?x=1'],
    ])('%s %s without the admin token: 401, known path or not, and never cached', async (method, path) => {
      const answers = [
        await rawCall(server.url, method, path, []),
        await rawCall(server.url, method, path, [['Authorization', 'Bearer not-the-admin-token-at-all']]),
        await rawCall(server.url, method, path, [['Authorization', `Bearer ${c.key}`]]),
        // The right token followed by another: Node would keep only the first.
        await rawCall(server.url, method, path, [ADMIN_AUTH, ['Authorization', 'Bearer something-else']]),
      ];
      for (const answer of answers) {
        expect(answer.status, answer.text).toBe(401);
        expect(answer.body.error).toMatchObject({ code: 'unauthorized', type: 'authentication_error' });
        expect(answer.body.meta).toMatchObject({ credits_charged: 0, credits_remaining: null });
        expect(answer.body.error.doc_url).toBe(`${server.url}/docs/errors#unauthorized`);
        expect(answer.headers.get('www-authenticate')).toBe('Bearer');
        expect(answer.headers.get('cache-control')).toBe('no-store');
        expect(answer.headers.get('x-request-id')).toBe(answer.body.meta.request_id);
        // The admin API draws on no rate-limit bucket.
        expect(answer.headers.get('ratelimit-limit')).toBeNull();
      }
    });

    test('with the admin token, a path that is no admin endpoint is 404 route_not_found', async () => {
      for (const [method, path] of [['GET', '/admin/v1/nothing-here'], ['DELETE', '/admin/v1/workspaces'], ['GET', '/admin']]) {
        const answer = await rawCall(server.url, method!, path!, [ADMIN_AUTH]);
        expect(answer.status, `${method} ${path}: ${answer.text}`).toBe(404);
        expect(answer.body.error.code).toBe('route_not_found');
        expect(answer.headers.get('cache-control')).toBe('no-store');
      }
    });

    test('the answer carrying a new key, and every admin answer, is Cache-Control: no-store', async () => {
      const key = await rawCall(server.url, 'POST', `/admin/v1/workspaces/${c.workspaceId}/keys`, [ADMIN_AUTH], { name: 'no-store' });
      expect(key.status, key.text).toBe(201);
      expect(key.body.key).toMatch(/^lk_live_/);
      expect(key.headers.get('cache-control')).toBe('no-store');
      expect(key.headers.get('x-content-type-options')).toBe('nosniff');
      for (const path of [`/admin/v1/workspaces/${c.workspaceId}`, `/admin/v1/workspaces/${c.workspaceId}/keys`]) {
        const answer = await rawCall(server.url, 'GET', path, [ADMIN_AUTH]);
        expect(answer.status).toBe(200);
        expect(answer.headers.get('cache-control')).toBe('no-store');
      }
    });

    test('the HTML docs load nothing but their own style sheet, run no script, cannot be framed nor sniffed, and leak no referrer', async () => {
      for (const path of ['/docs', '/docs/errors']) {
        const page = await get(path);
        expect(page.status).toBe(200);
        expect(page.headers.get('content-type')).toMatch(/^text\/html/);
        const csp = page.headers.get('content-security-policy') ?? '';
        expect(csp).toContain("default-src 'none'");
        expect(csp).toContain("frame-ancestors 'none'");
        expect(page.headers.get('x-frame-options')).toBe('DENY');
        expect(page.headers.get('x-content-type-options')).toBe('nosniff');
        expect(page.headers.get('referrer-policy')).toBe('no-referrer');
        expect(csp).toContain("style-src 'self'");
        expect(csp).not.toMatch(/script-src|unsafe-inline/);
        // The policy allows no script and no inline style: the pages need neither, and link only
        // their style sheet from this host and an inline (data:) icon.
        expect(page.text).not.toMatch(/<script|<style|\sstyle=/i);
        const links = [...page.text.matchAll(/<link\b[^>]*\shref="([^"]*)"/gi)].map((m) => m[1]!);
        expect(links.length).toBeGreaterThan(0);
        for (const href of links) expect(href).toMatch(/^(\/docs\/assets\/|data:)/);
      }
    });

    test('every answer, JSON and errors included, is X-Content-Type-Options: nosniff', async () => {
      for (const answer of [await get('/v1/health'), await get('/v1/nothing-here'), await rawCall(server.url, 'POST', '/v1/company', [])]) {
        expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      }
    });

    test('two different keys in one request are 401 unauthorized and never charged, in any pair of headers', async () => {
      // Customers of its own: the balances below count this test's calls only.
      const one = await newCustomer(server, 100, 'security-one');
      const other = await newCustomer(server, 100, 'security-other');
      const body = { url: 'acme-robotics' };
      const pairs: Array<[string, Array<[string, string]>]> = [
        ['two Authorization headers', [['Authorization', `Bearer ${one.key}`], ['Authorization', `Bearer ${other.key}`]]],
        ['two Authorization headers, the other order', [['Authorization', `Bearer ${other.key}`], ['Authorization', `Bearer ${one.key}`]]],
        ['two X-Api-Key headers', [['X-Api-Key', one.key], ['X-Api-Key', other.key]]],
        ['Authorization and X-Api-Key', [['Authorization', `Bearer ${one.key}`], ['X-Api-Key', other.key]]],
      ];
      for (const [what, headers] of pairs) {
        const answer = await rawCall(server.url, 'POST', '/v1/company', headers, body);
        expect(answer.status, `${what}: ${answer.text}`).toBe(401);
        expectError(answer, server, { code: 'unauthorized', remaining: null });
      }
      expect(await one.balance()).toBe(100);
      expect(await other.balance()).toBe(100);

      // The same key twice is still that key.
      const twice = await rawCall(server.url, 'POST', '/v1/company', [['Authorization', `Bearer ${one.key}`], ['authorization', `Bearer ${one.key}`]], body);
      expect(twice.status, twice.text).toBe(200);
      expect(twice.body.meta.credits_remaining).toBe(99);
    });

    test('TRUST_PROXY naming the peer: X-Forwarded-Proto/-Host make the URLs of that request only', async () => {
      await server.restart({ TRUST_PROXY: '127.0.0.0/8,::1' });
      const viaProxy = await get('/v1/openapi.json', FORWARDED);
      expect(viaProxy.body.servers).toEqual([{ url: 'https://api.example.org' }]);
      const error = await get('/v1/nothing-here', FORWARDED);
      expect(error.body.error.doc_url).toBe('https://api.example.org/docs/errors#route_not_found');
      // A forwarded host that could not be a host is ignored, and so is Host itself.
      const odd = await get('/v1/openapi.json', [['Host', HOSTILE_HOST], ['X-Forwarded-Host', 'evil.example/path']]);
      expect(odd.body.servers).toEqual([{ url: server.url }]);
      // Each request its own view: the next one without the headers is not served the proxy's.
      expect((await get('/v1/openapi.json')).body.servers).toEqual([{ url: server.url }]);
    });

    test('TRUST_PROXY naming another peer: the forwarded headers of this one are ignored', async () => {
      await server.restart({ TRUST_PROXY: '192.0.2.1' });
      expect((await get('/v1/openapi.json', FORWARDED)).body.servers).toEqual([{ url: server.url }]);
      expect((await get('/v1/nothing-here', FORWARDED)).body.error.doc_url).toBe(`${server.url}/docs/errors#route_not_found`);
    });

    test('DOCS_URL: its origin is the OpenAPI server URL, and it is the base of every doc_url', async () => {
      await server.restart({ DOCS_URL: 'https://docs.example.org/api/', TRUST_PROXY: 'true' });
      const doc = await get('/v1/openapi.json', [['Host', HOSTILE_HOST], ...FORWARDED]);
      expect(doc.body.servers).toEqual([{ url: 'https://docs.example.org' }]);
      expect(doc.text).toContain('https://docs.example.org/api/errors#');
      const error = await get('/v1/nothing-here', FORWARDED);
      expect(error.body.error.doc_url).toBe('https://docs.example.org/api/errors#route_not_found');
    });
  });
});
