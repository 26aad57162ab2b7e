// End-to-end: every error code the three lookups can produce, with its exact status, type,
// retryable flag, headers and billing, on PGlite and on PostgreSQL (+ Redis). The server runs
// with SOURCE_TIMEOUT_MS=1000 so the `timeout` path ends quickly, and MAX_IN_FLIGHT=2 so that
// `no_capacity` can be provoked with two lookups held open.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { expectDetail, expectError, ledgerTypes, type ErrorCode } from './support/contract';
import { backends, call, newCustomer, startE2eServer, type Customer, type E2eServer } from './support/harness';

const LOOKUPS = [
  ['/v1/company', 'url', 'acme-robotics'],
  ['/v1/domain', 'domain', 'acmerobotics.com'],
  ['/v1/person', 'url', 'https://www.linkedin.com/in/jane-doe-42'],
] as const;

/** Failure triggers of the sandbox, as each endpoint takes them. */
const TRIGGERS: Array<[string, ErrorCode]> = [
  ['sandbox-upstream-error', 'upstream_error'],
  ['sandbox-parse-error', 'parse_error'],
  ['sandbox-blocked', 'blocked'],
  ['sandbox-source-rate-limited', 'source_rate_limited'],
  ['sandbox-timeout', 'timeout'],
];
const triggerBody = (path: string, trigger: string) =>
  path === '/v1/company' ? { url: trigger } : path === '/v1/domain' ? { domain: `${trigger}.com` } : { url: `https://www.linkedin.com/in/${trigger}` };

describe.each(backends())('lookup errors over HTTP on $name', (backend) => {
  describe.skipIf(!backend.available)(`on ${backend.name}`, () => {
    let server: E2eServer;
    let c: Customer;
    let balance: number;

    beforeAll(async () => {
      server = await startE2eServer(backend, { SOURCE_TIMEOUT_MS: '1000', MAX_IN_FLIGHT: '2' });
      c = await newCustomer(server, 1000, 'errors');
    });
    afterAll(async () => server?.stop());
    beforeEach(async () => {
      balance = await c.balance();
    });

    /** A refused call: the envelope, nothing charged and nothing in the ledger under its request id. */
    async function refused(res: Awaited<ReturnType<Customer['post']>>, code: ErrorCode) {
      expectError(res, server, { code, remaining: balance });
      expect(await ledgerTypes(server, c.workspaceId, res.body.meta.request_id)).toEqual([]);
    }

    describe.each(LOOKUPS)('invalid_request on %s', (path, field, valid) => {
      test('invalid JSON, wrong or missing content type, a body that is no object', async () => {
        const send = (rawBody: string, contentType?: string) =>
          call(server.url, 'POST', path, { key: c.key, rawBody, headers: contentType ? { 'content-type': contentType } : {} });

        let res = await send(`{"${field}": "${valid}"`, 'application/json');
        await refused(res, 'invalid_request');
        expect(res.body.error.details).toEqual([{ field: 'body', issue: 'invalid_json', message: expect.any(String) }]);

        res = await send(JSON.stringify({ [field]: valid }), 'text/plain');
        await refused(res, 'invalid_request');
        expect(res.body.error.details).toEqual([{ field: 'body', issue: 'unsupported_content_type', message: expect.any(String) }]);

        res = await send(`${field}=${valid}`, 'application/x-www-form-urlencoded');
        await refused(res, 'invalid_request');
        expectDetail(res, 'body', 'unsupported_content_type');

        res = await call(server.url, 'POST', path, { key: c.key });
        await refused(res, 'invalid_request');
        expectDetail(res, 'body', 'unsupported_content_type');

        for (const body of ['[]', '"x"', '42', 'null']) {
          res = await send(body, 'application/json');
          await refused(res, 'invalid_request');
          expectDetail(res, 'body', 'invalid_type');
        }
        // The media type is matched without its parameters and case.
        res = await send(JSON.stringify({ [field]: valid, extra: 1 }), 'Application/JSON; charset=utf-8');
        await refused(res, 'invalid_request');
        expect(res.body.error.details).toEqual([{ field: 'extra', issue: 'unknown_field', message: expect.any(String) }]);
        expect(await c.balance()).toBe(balance);
      });

      test('missing, mistyped, unknown, empty and over-long fields', async () => {
        const cases: Array<[unknown, string, string]> = [
          [{}, field, 'required'],
          [{ max_age: 60 }, field, 'required'],
          [{ [field]: 42 }, field, 'invalid_type'],
          [{ [field]: null }, field, 'invalid_type'],
          [{ [field]: [valid] }, field, 'invalid_type'],
          [{ [field]: valid, colour: 'red' }, 'colour', 'unknown_field'],
          [{ [field]: '' }, field, 'too_small'],
          [{ [field]: 'a'.repeat(2049) }, field, 'too_big'],
        ];
        for (const [body, name, issue] of cases) {
          const res = await c.post(path, body);
          await refused(res, 'invalid_request');
          expectDetail(res, name, issue);
        }
        // Two problems at once: both named.
        const both = await c.post(path, { [field]: '', max_age: -5, more: true });
        await refused(both, 'invalid_request');
        expectDetail(both, field, 'too_small');
        expectDetail(both, 'max_age', 'too_small');
        expectDetail(both, 'more', 'unknown_field');
        expect(await c.balance()).toBe(balance);
      });
    });

    test('a 2048-character string passes the schema and is judged as a reference', async () => {
      await refused(await c.post('/v1/company', { url: 'a'.repeat(2048) }), 'invalid_company_reference');
      await refused(await c.post('/v1/domain', { domain: `${'a'.repeat(2040)}.com` }), 'invalid_domain');
      await refused(await c.post('/v1/person', { url: 'a'.repeat(2048) }), 'invalid_person_reference');
    });

    test.each([
      'https://www.linkedin.com/in/jane-doe-42',
      'https://www.linkedin.com/school/stanford-university/',
      'https://www.linkedin.com/showcase/acme-labs/',
      'https://www.linkedin.com/jobs/view/123',
      'https://www.example.com/company/acme-robotics',
      'acme robotics',
      'acme!',
      'who makes robots?',
      'acmerobotics.com/about us',
    ])('invalid_company_reference: %s', async (url) => {
      await refused(await c.post('/v1/company', { url }), 'invalid_company_reference');
    });

    test.each([
      '127.0.0.1',
      'http://[::1]/',
      'localhost',
      'acme',
      'acme-robotics',
      'shop.test',
      'www.example',
      'foo.invalid',
      'app.localhost',
      'printer.local',
      'acme.notapublicsuffixzz',
      'jane@acmerobotics.com',
      'linkedin.com',
      'https://www.linkedin.com/company/acme-robotics',
      'not a domain.com',
    ])('invalid_domain: %s', async (domain) => {
      await refused(await c.post('/v1/domain', { domain }), 'invalid_domain');
    });

    test.each([
      'ACoAAB1234567890abcdef',
      'https://www.linkedin.com/in/ACoAAB1234567890abcdef',
      'https://www.linkedin.com/company/acme-robotics',
      'https://www.example.com/in/jane-doe-42',
      'Jane Doe 42',
      'jane_doe@example.com',
      'https://www.linkedin.com/in/',
    ])('invalid_person_reference: %s', async (url) => {
      await refused(await c.post('/v1/person', { url }), 'invalid_person_reference');
    });

    test('unauthorized: missing, malformed, unknown, revoked and two different keys; never charged', async () => {
      const other = await server.admin.createKey(c.workspaceId, { name: 'second' });
      const revoked = await server.admin.createKey(c.workspaceId, { name: 'revoked' });
      // Used once before the revoke, so any cache of valid keys holds it.
      expect((await call(server.url, 'POST', '/v1/company', { key: revoked.key, json: { url: 'acme-robotics' } })).status).toBe(200);
      balance -= 1;
      await server.admin.revokeKey(revoked.id);

      const unknown = `lk_live_${'Z'.repeat(32)}`;
      const attempts: Array<Record<string, string>> = [
        {},
        { authorization: 'Bearer' },
        { authorization: 'Bearer not-a-key' },
        { authorization: `Basic ${Buffer.from(`${c.key}:`).toString('base64')}` },
        { authorization: `Bearer lk_test_${c.key.slice(8)}` },
        { authorization: `Bearer ${c.key.slice(0, -1)}` },
        { authorization: `Bearer ${c.key}x` },
        { 'x-api-key': 'lk_live_short' },
        { authorization: `Bearer ${unknown}` },
        { 'x-api-key': unknown },
        { authorization: `Bearer ${revoked.key}` },
        { 'x-api-key': revoked.key },
        { authorization: `Bearer ${c.key}`, 'x-api-key': other.key },
      ];
      for (const headers of attempts) {
        for (const [path, field, valid] of LOOKUPS) {
          const res = await call(server.url, 'POST', path, { json: { [field]: valid }, headers });
          expectError(res, server, { code: 'unauthorized', remaining: null });
        }
      }
      expect(await c.balance()).toBe(balance);

      // Either header alone works, and both may carry the same key.
      for (const headers of <Array<Record<string, string>>>[{ 'x-api-key': other.key }, { authorization: `bearer ${other.key}` }, { authorization: `Bearer ${other.key}`, 'x-api-key': other.key }]) {
        const res = await call(server.url, 'POST', '/v1/company', { json: { url: 'acme-robotics' }, headers });
        expect(res.status, res.text).toBe(200);
        expect(res.headers.get('x-cache')).toBe('HIT');
        balance -= 1;
      }
      expect(await c.balance()).toBe(balance);
    });

    test('insufficient_credits: 402 when the balance is below the success price, nothing charged', async () => {
      const poor = await newCustomer(server, 3, 'poor');
      // Warm the cache so that even a HIT is refused for lack of credits.
      await c.post('/v1/domain', { domain: 'acmerobotics.com' });
      for (const [path, body] of [
        ['/v1/domain', { domain: 'acmerobotics.com' }],
        ['/v1/domain', { domain: 'no-company-here.com' }],
      ] as const) {
        const res = await poor.post(path, body);
        expectError(res, server, { code: 'insufficient_credits', remaining: 3 });
        expect(await ledgerTypes(server, poor.workspaceId, res.body.meta.request_id)).toEqual([]);
      }
      // 3 credits cover a name lookup (3) exactly; then 0 cover nothing.
      const named = await poor.post('/v1/person', { url: 'Jane Doe' });
      expect(named.status, named.text).toBe(200);
      expect(named.body.meta).toMatchObject({ credits_charged: 3, credits_remaining: 0 });
      for (const [path, field, valid] of LOOKUPS) {
        const res = await poor.post(path, { [field]: valid });
        expectError(res, server, { code: 'insufficient_credits', remaining: 0 });
      }
      expectError(await poor.post('/v1/search', { query: 'acme' }), server, { code: 'insufficient_credits', remaining: 0 });
      expect(await poor.balance()).toBe(0);
      // The cache area stays free at a zero balance.
      expect((await poor.post('/v1/cache/company', { url: 'acme-robotics' })).status).toBe(200);
    });

    test('not_found and unresolvable_id: charged at the not-found price live, free from the cache', async () => {
      const slug = await c.post('/v1/company', { url: 'https://www.linkedin.com/company/no-such-company-e2e' });
      expectError(slug, server, { code: 'not_found', reason: 'no_company', charged: 1, remaining: balance - 1 });
      expect(await ledgerTypes(server, c.workspaceId, slug.body.meta.request_id)).toContainEqual(['LookupCharged', expect.any(Number)]);
      balance -= 1;
      expectError(await c.post('/v1/company', { url: 'No-Such-Company-E2E' }), server, { code: 'not_found', reason: 'no_company', charged: 0, remaining: balance });

      const id = await c.post('/v1/company', { url: '999999999' });
      expectError(id, server, { code: 'unresolvable_id', reason: 'no_public_page', charged: 1, remaining: balance - 1 });
      balance -= 1;
      for (const url of ['urn:li:company:999999999', 'https://www.linkedin.com/company/999999999/', 'urn:li:organization:999999999']) {
        expectError(await c.post('/v1/company', { url }), server, { code: 'unresolvable_id', reason: 'no_public_page', charged: 0, remaining: balance });
      }

      const domain = await c.post('/v1/domain', { domain: 'https://shop.no-company-here.com' });
      expectError(domain, server, { code: 'not_found', reason: 'no_company_for_domain', charged: 4, remaining: balance - 4 });
      balance -= 4;
      expect(await c.balance()).toBe(balance);
    });

    describe.each(LOOKUPS)('refunded source failures on %s', (path) => {
      test.each(TRIGGERS)('%s -> %s: refunded, charge and refund in the ledger', async (trigger, code) => {
        for (let attempt = 0; attempt < (code === 'timeout' ? 1 : 2); attempt++) {
          const res = await c.post(path, triggerBody(path, trigger));
          // Not cached: every attempt runs live again and is refunded again.
          expectError(res, server, { code, charged: 0, remaining: balance });
          const ledger = await ledgerTypes(server, c.workspaceId, res.body.meta.request_id);
          expect(ledger.map(([type]) => type)).toEqual(['LookupCharged', 'LookupRefunded']);
          expect(Math.abs(ledger[0]![1])).toBe(Math.abs(ledger[1]![1]));
          expect(Math.abs(ledger[0]![1])).toBeGreaterThan(0);
          expect(await c.balance()).toBe(balance);
        }
      });
    });

    test('rate_limited: 429 with Retry-After once the key bucket is empty, never charged', async () => {
      const key = await server.admin.createKey(c.workspaceId, { name: 'slow lane', rate_limit_per_minute: 2 });
      const send = () => call(server.url, 'POST', '/v1/company', { key: key.key, json: { url: 'acme-robotics' } });
      const first = await send();
      expect(first.status).toBe(200);
      expect(first.headers.get('ratelimit-limit')).toBe('2');
      expect(first.headers.get('ratelimit-remaining')).toBe('1');
      expect((await send()).status).toBe(200);
      balance -= 2;
      const limited = await send();
      expectError(limited, server, { code: 'rate_limited', remaining: balance });
      expect(limited.headers.get('ratelimit-remaining')).toBe('0');
      expect(Number(limited.body.error.retry_after_seconds)).toBeLessThanOrEqual(30);
      expect(await c.balance()).toBe(balance);
    });

    test('no_capacity: 503 with Retry-After past MAX_IN_FLIGHT, before any charge', async () => {
      const ws = await server.admin.createWorkspace({ name: 'busy', credits: 10 });
      const { key } = await server.admin.createKey(ws.id);
      // Two lookups that hang until the source timeout fill the process's two places.
      const holders = [
        call(server.url, 'POST', '/v1/company', { key, json: { url: 'sandbox-timeout' } }),
        call(server.url, 'POST', '/v1/domain', { key, json: { domain: 'sandbox-timeout.com' } }),
      ];
      await new Promise((r) => setTimeout(r, 500));
      const refused = await call(server.url, 'POST', '/v1/person', { key, json: { url: 'https://www.linkedin.com/in/jane-doe-42' } });
      expectError(refused, server, { code: 'no_capacity', remaining: 5 });
      expect(await ledgerTypes(server, ws.id, refused.body.meta.request_id)).toEqual([]);
      expect((await Promise.all(holders)).map((r) => r.status)).toEqual([504, 504]);
      expect(await server.admin.balance(ws.id)).toBe(10);
    });

    test('concurrency_limited: 429 with Retry-After 1 past max_concurrency, never charged', async () => {
      const ws = await server.admin.createWorkspace({ name: 'one at a time', credits: 10, max_concurrency: 1 });
      const { key } = await server.admin.createKey(ws.id);
      // sandbox-timeout holds the one slot for SOURCE_TIMEOUT_MS (its credit is taken up front, then refunded).
      const holder = call(server.url, 'POST', '/v1/company', { key, json: { url: 'sandbox-timeout' } });
      await new Promise((r) => setTimeout(r, 500));
      const second = await call(server.url, 'POST', '/v1/person', { key, json: { url: 'https://www.linkedin.com/in/jane-doe-42' } });
      expectError(second, server, { code: 'concurrency_limited', remaining: 9 });
      expect(second.headers.get('retry-after')).toBe('1');
      expect((await holder).status).toBe(504);
      expect(await server.admin.balance(ws.id)).toBe(10);
      // The slot is free again.
      expect((await call(server.url, 'POST', '/v1/person', { key, json: { url: 'https://www.linkedin.com/in/jane-doe-42' } })).status).toBe(200);
    });
  });
});
