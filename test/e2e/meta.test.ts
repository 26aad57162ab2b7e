// End-to-end: the public Meta area (health, pricing, OpenAPI, error catalogue, docs), the
// headers every response carries, and 404 route_not_found for anything that is not an endpoint,
// on PGlite and on PostgreSQL (+ Redis).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ERROR_CODES, ERROR_TABLE, REQUEST_ID, expectError, expectRateLimitHeaders, expectRequestId } from './support/contract';
import { backends, call, newCustomer, startE2eServer, type Customer, type E2eServer } from './support/harness';

/** docs/api.md "Prices": operation -> [success, definitive not-found]. */
const PRICES: Record<string, [number, number | null]> = {
  company: [1, 1],
  domain: [4, 4],
  person_url: [1, 1],
  person_name: [3, 1],
  search: [1, null],
};

/** Every operation docs/api.md names, as OpenAPI path -> method. */
const OPERATIONS: Array<[string, string]> = [
  ['/v1/company', 'post'],
  ['/v1/domain', 'post'],
  ['/v1/person', 'post'],
  ['/v1/search', 'post'],
  ['/v1/batch', 'post'],
  ['/v1/cache/company', 'post'],
  ['/v1/cache/domain', 'post'],
  ['/v1/cache/person', 'post'],
  ['/v1/cache/stats', 'get'],
  ['/v1/health', 'get'],
  ['/v1/health/ready', 'get'],
  ['/v1/pricing', 'get'],
  ['/v1/openapi.json', 'get'],
  ['/v1/errors', 'get'],
];

describe.each(backends())('Meta area over HTTP on $name', (backend) => {
  describe.skipIf(!backend.available)(`on ${backend.name}`, () => {
    let server: E2eServer;
    let c: Customer;

    beforeAll(async () => {
      server = await startE2eServer(backend);
      c = await newCustomer(server, 100, 'meta');
    });
    afterAll(async () => server?.stop());

    const get = (path: string, headers?: Record<string, string>) => call(server.url, 'GET', path, { headers });

    test('public: no key needed, a key is not even looked at; a fresh request id and rate-limit headers each time', async () => {
      const ids = new Set<string>();
      for (const headers of [undefined, { authorization: 'Bearer nonsense' }, { authorization: `Bearer ${c.key}` }]) {
        for (const path of ['/v1/health', '/v1/pricing', '/v1/errors', '/v1/openapi.json']) {
          const res = await get(path, headers);
          expect(res.status, `${path}: ${res.text}`).toBe(200);
          expect(res.headers.get('content-type')).toMatch(/^application\/json/);
          ids.add(expectRequestId(res));
          expectRateLimitHeaders(res);
          // Public calls draw on the per-IP bucket of 120 a minute.
          expect(res.headers.get('ratelimit-limit')).toBe('120');
          expect(res.headers.get('x-credits-charged')).toBeNull();
        }
      }
      expect(ids.size).toBe(12);
      expect(await c.balance()).toBe(100);
    });

    test('GET /v1/health', async () => {
      const res = await get('/v1/health');
      expect(res.body.status).toBe('ok');
      expect(res.body.version).toBe('1.0.0');
    });

    test('GET /v1/pricing lists the prices of docs/api.md', async () => {
      const res = await get('/v1/pricing');
      const byOperation = Object.fromEntries(
        res.body.operations.map((o: any) => [o.operation, [o.success_price, o.not_found_price]]),
      );
      expect(byOperation).toEqual(PRICES);
      for (const o of res.body.operations) {
        expect(o.method).toBe('POST');
        expect(o.not_found_free_from_cache).toBe(o.not_found_price !== null);
      }
      expect(res.body.operations.find((o: any) => o.operation === 'person_name').endpoint).toBe('/v1/person');
      const free = Object.fromEntries(res.body.free.map((a: any) => [a.area, a.price]));
      expect(free).toEqual({ cache: 0, webhooks: 0, watches: 0, meta: 0 });
      // A batch costs what its items cost, each as its single call (docs/api.md "Batch").
      expect(res.body.batch).toEqual({ method: 'POST', endpoint: '/v1/batch', max_items: 100, price: 'sum_of_items' });
    });

    test('GET /v1/openapi.json: OpenAPI 3.1, version 1.0.0, every operation', async () => {
      const doc = (await get('/v1/openapi.json')).body;
      expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
      expect(doc.info.version).toBe('1.0.0');
      for (const [path, method] of OPERATIONS) {
        expect(doc.paths[path]?.[method], `${method.toUpperCase()} ${path}`).toBeDefined();
      }
      expect(Object.keys(doc.paths).every((p) => p.startsWith('/v1/') || p.startsWith('/admin/v1/') || p.startsWith('/console/v1/') || p.startsWith('/docs'))).toBe(true);
    });

    test('GET /v1/errors: every code of the catalogue (the spec 20, service_unavailable, forbidden) with status, type, retryable and doc_url', async () => {
      const { data } = (await get('/v1/errors')).body;
      expect(data).toHaveLength(22);
      expect(data.map((e: any) => e.code).sort()).toEqual([...ERROR_CODES].sort());
      for (const e of data) {
        const [status, type, retryable] = ERROR_TABLE[e.code as keyof typeof ERROR_TABLE];
        expect({ code: e.code, status: e.status, type: e.type, retryable: e.retryable }).toEqual({ code: e.code, status, type, retryable });
        expect(e.doc_url).toBe(`${server.url}/docs/errors#${e.code}`);
        expect(typeof e.message).toBe('string');
      }
    });

    test('the docs: /docs/errors has an element with id="<code>" for every code', async () => {
      const page = await get('/docs/errors');
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      for (const code of ERROR_CODES) expect(page.text, code).toMatch(new RegExp(`<[a-z0-9]+[^>]*\\sid="${code}"`));
      const index = await get('/docs');
      expect(index.status).toBe(200);
      expect(index.headers.get('content-type')).toMatch(/^text\/html/);
    });

    test.each([
      ['GET', '/'],
      ['GET', '/v1'],
      ['GET', '/v1/company'],
      ['PUT', '/v1/company'],
      ['DELETE', '/v1/person'],
      ['PATCH', '/v1/domain'],
      ['POST', '/v1/companies'],
      ['POST', '/v2/company'],
      ['POST', '/v1/health'],
      ['GET', '/v1/cache/company'],
      ['POST', '/v1/cache/stats'],
      ['GET', '/v1/search?query=acme'],
      ['GET', '/docs/nothing-here'],
      ['POST', '/v1/company/acme-robotics'],
    ])('%s %s: 404 route_not_found with and without a key, never charged', async (method, path) => {
      const anonymous = await call(server.url, method, path, { json: method === 'GET' ? undefined : { url: 'acme-robotics' } });
      expectError(anonymous, server, { code: 'route_not_found', remaining: null });
      expectRateLimitHeaders(anonymous);

      const keyed = await call(server.url, method, path, { key: c.key, json: method === 'GET' ? undefined : { url: 'acme-robotics' } });
      expectError(keyed, server, { code: 'route_not_found', remaining: 100 });
      expect(keyed.body.meta.request_id).toMatch(REQUEST_ID);
      expect(keyed.body.meta.request_id).not.toBe(anonymous.body.meta.request_id);

      const badKey = await call(server.url, method, path, { key: 'not-a-key' });
      expect(badKey.body.error.code).toBe('route_not_found');
      expect(await c.balance()).toBe(100);
    });

    test('DOCS_URL moves every doc_url (after a restart with the setting)', async () => {
      await server.restart({ DOCS_URL: 'https://docs.example.org/api/' });
      const res = await call(server.url, 'POST', '/v1/company', { key: c.key, json: {} });
      expectError({ ...res, body: { ...res.body, error: { ...res.body.error, doc_url: `${server.url}/docs/errors#invalid_request` } } }, server, { code: 'invalid_request', remaining: 100 });
      expect(res.body.error.doc_url).toBe('https://docs.example.org/api/errors#invalid_request');
      const { data } = (await get('/v1/errors')).body;
      expect(data.find((e: any) => e.code === 'timeout').doc_url).toBe('https://docs.example.org/api/errors#timeout');
    });
  });
});
