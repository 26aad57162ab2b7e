// End-to-end: Idempotency-Key (docs/api.md "Idempotency") over real HTTP, on PGlite and on
// PostgreSQL (+ Redis): replays of 200 and 404, reuse with another body or endpoint, a key in
// use, malformed keys, refusals that are not stored, workspace scope, and replays after a restart.
// The tests of one backend share a server; each makes the cache entries and stored answers it
// relies on itself, so any one runs alone with `-t`.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { expectDetail, expectError, expectSuccess, ledgerTypes } from './support/contract';
import { backends, call, newCustomer, startE2eServer, type Customer, type E2eServer, type HttpResult } from './support/harness';
import { ownCompany } from './support/sandbox-references';

/** Headers a replay repeats from the original (docs/api.md "Idempotency"). */
const REPLAYED = ['x-request-id', 'x-credits-charged', 'x-cache', 'age'];

const newKey = () => `e2e-${randomUUID()}`;

describe.each(backends())('Idempotency-Key over HTTP on $name', (backend) => {
  describe.skipIf(!backend.available)(`on ${backend.name}`, () => {
    let server: E2eServer;
    let c: Customer;

    beforeAll(async () => {
      server = await startE2eServer(backend);
      c = await newCustomer(server, 1000, 'idempotency');
    });
    afterAll(async () => server?.stop());

    const post = (path: string, body: unknown, key: string) => c.post(path, body, { 'Idempotency-Key': key });

    function expectReplay(replay: HttpResult, original: HttpResult) {
      expect(replay.status).toBe(original.status);
      expect(replay.body).toEqual(original.body);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      for (const h of REPLAYED) expect(replay.headers.get(h), h).toBe(original.headers.get(h));
    }

    test('a 200 is replayed with its status, body and headers; nothing runs or is charged again', async () => {
      const key = newKey();
      const before = await c.balance();
      // A company no other test looks up: certainly a MISS.
      const { slug } = ownCompany(0);
      const original = await post('/v1/company', { url: slug }, key);
      expectSuccess(original, { cache: 'MISS', charged: 1, remaining: before - 1 });
      for (let i = 0; i < 3; i++) {
        const replay = await post('/v1/company', { url: slug }, key);
        expectReplay(replay, original);
        expect(replay.headers.get('x-cache')).toBe('MISS');
      }
      expect(await c.balance()).toBe(before - 1);
      expect(await ledgerTypes(server, c.workspaceId, original.body.meta.request_id)).toHaveLength(1);
      // Without the key the same body runs anew: a HIT, charged again.
      const plain = await c.post('/v1/company', { url: slug });
      expectSuccess(plain, { cache: 'HIT', charged: 1, remaining: before - 2 });
    });

    test('a 404 not_found is replayed with the same status and body, not charged again', async () => {
      const key = newKey();
      const before = await c.balance();
      const original = await post('/v1/domain', { domain: 'no-company-here.com' }, key);
      expectError(original, server, { code: 'not_found', reason: 'no_company_for_domain', charged: 4, remaining: before - 4 });
      const replay = await post('/v1/domain', { domain: 'no-company-here.com' }, key);
      expectReplay(replay, original);
      // The original's credit headers come back as they were, though nothing is charged again.
      expect(replay.headers.get('x-credits-charged')).toBe('4');
      expect(await c.balance()).toBe(before - 4);

      const unresolvableKey = newKey();
      const unresolvable = await post('/v1/company', { url: '999999999' }, unresolvableKey);
      expect(unresolvable.body.error.code).toBe('unresolvable_id');
      expectReplay(await post('/v1/company', { url: '999999999' }, unresolvableKey), unresolvable);
      expect(await c.balance()).toBe(before - 5);
    });

    test('the body is compared canonically: another key order or spacing replays', async () => {
      const key = newKey();
      // No body: refused with 400 and not stored, so the key is still free for what follows.
      expect((await c.post('/v1/person', undefined, { 'Idempotency-Key': key })).status).toBe(400);
      const first = await call(server.url, 'POST', '/v1/person', {
        key: c.key,
        rawBody: '{"url":"Jane Doe","max_age":86400}',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
      });
      expect(first.status, first.text).toBe(200);
      expect(first.body.meta.credits_charged).toBe(3);
      const before = await c.balance();
      const reordered = await call(server.url, 'POST', '/v1/person', {
        key: c.key,
        rawBody: '{ "max_age": 86400,\n  "url": "Jane Doe" }',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
      });
      expectReplay(reordered, first);
      expect(await c.balance()).toBe(before);
    });

    test('422 idempotency_key_reused for another body or another endpoint; never charged', async () => {
      const key = newKey();
      const original = await post('/v1/company', { url: 'globex' }, key);
      expect(original.status).toBe(200);
      const before = await c.balance();
      for (const [path, body] of [
        ['/v1/company', { url: 'acme-robotics' }],
        ['/v1/company', { url: 'globex', max_age: 0 }],
        ['/v1/company', { url: 'GLOBEX' }],
        ['/v1/domain', { domain: 'globex.com' }],
        ['/v1/person', { url: 'globex' }],
        ['/v1/search', { query: 'globex' }],
      ] as const) {
        const res = await post(path, body, key);
        expectError(res, server, { code: 'idempotency_key_reused', remaining: before });
        expect(res.headers.get('idempotent-replayed')).toBeNull();
      }
      expect(await c.balance()).toBe(before);
      // The stored answer is still there for the original request.
      expectReplay(await post('/v1/company', { url: 'globex' }, key), original);
    });

    test('409 idempotency_key_in_use while the first request runs; then the replay', async () => {
      const key = newKey();
      const before = await c.balance();
      const first = post('/v1/company', { url: 'sandbox-slow', max_age: 0 }, key);
      await new Promise((r) => setTimeout(r, 600));
      const second = await post('/v1/company', { url: 'sandbox-slow', max_age: 0 }, key);
      expectError(second, server, { code: 'idempotency_key_in_use', remaining: before - 1 });
      const original = await first;
      expect(original.status, original.text).toBe(200);
      expect(original.body.data.slug).toBe('sandbox-slow');
      expectReplay(await post('/v1/company', { url: 'sandbox-slow', max_age: 0 }, key), original);
      expect(await c.balance()).toBe(before - 1);
    });

    test.each([
      ['empty', '', 'too_small'],
      ['256 characters', 'k'.repeat(256), 'too_big'],
      ['non-ASCII', 'clé-1', 'invalid_type'],
    ])('a malformed key (%s) is 400 invalid_request naming Idempotency-Key', async (_label, key, issue) => {
      const before = await c.balance();
      const res = await post('/v1/company', { url: 'acme-robotics' }, key);
      expectError(res, server, { code: 'invalid_request', remaining: before });
      expectDetail(res, 'Idempotency-Key', issue);
      expect(await c.balance()).toBe(before);
    });

    test('a key of 255 printable ASCII characters is accepted', async () => {
      const key = `${'~ !'.repeat(85)}`;
      expect(key).toHaveLength(255);
      const original = await post('/v1/company', { url: 'acme-robotics' }, key);
      expect(original.status, original.text).toBe(200);
      expectReplay(await post('/v1/company', { url: 'acme-robotics' }, key), original);
    });

    test('refusals (400, 402) and failures (5xx) are not stored: the same key runs anew', async () => {
      const key = newKey();
      const invalid = await post('/v1/company', { url: 'acme-robotics', extra: true }, key);
      expect(invalid.status).toBe(400);
      const badRef = await post('/v1/company', { url: 'acme robotics' }, key);
      expect(badRef.body.error.code).toBe('invalid_company_reference');
      const failed = await post('/v1/company', { url: 'sandbox-upstream-error' }, key);
      expectError(failed, server, { code: 'upstream_error', remaining: await c.balance() });
      const failedAgain = await post('/v1/company', { url: 'sandbox-upstream-error' }, key);
      expect(failedAgain.body.error.code).toBe('upstream_error');
      expect(failedAgain.headers.get('x-request-id')).not.toBe(failed.headers.get('x-request-id'));
      expect(failedAgain.headers.get('idempotent-replayed')).toBeNull();
      const ok = await post('/v1/company', { url: 'acme-robotics' }, key);
      expect(ok.status, ok.text).toBe(200);
      expect(ok.headers.get('idempotent-replayed')).toBeNull();

      const poor = await newCustomer(server, 0, 'poor');
      const poorKey = newKey();
      const refused = await poor.post('/v1/company', { url: 'acme-robotics' }, { 'Idempotency-Key': poorKey });
      expectError(refused, server, { code: 'insufficient_credits', remaining: 0 });
      await server.admin.grantCredits(poor.workspaceId, 5);
      const paid = await poor.post('/v1/company', { url: 'acme-robotics' }, { 'Idempotency-Key': poorKey });
      expectSuccess(paid, { cache: 'HIT', charged: 1, remaining: 4 });
    });

    test('a replay needs no credits: it is answered even at a zero balance', async () => {
      // Cached by another workspace first: the one credit pays for a HIT.
      expect((await c.post('/v1/company', { url: 'acme-robotics' })).status).toBe(200);
      const last = await newCustomer(server, 1, 'last credit');
      const key = newKey();
      const original = await last.post('/v1/company', { url: 'acme-robotics' }, { 'Idempotency-Key': key });
      expectSuccess(original, { cache: 'HIT', charged: 1, remaining: 0 });
      expectReplay(await last.post('/v1/company', { url: 'acme-robotics' }, { 'Idempotency-Key': key }), original);
      expectError(await last.post('/v1/company', { url: 'acme-robotics' }), server, { code: 'insufficient_credits', remaining: 0 });
    });

    test('keys are scoped to the workspace', async () => {
      const key = newKey();
      const original = await post('/v1/company', { url: 'acme-robotics' }, key);
      expect(original.status, original.text).toBe(200);
      const other = await newCustomer(server, 10, 'other');
      const res = await other.post('/v1/company', { url: 'acme-robotics' }, { 'Idempotency-Key': key });
      expectSuccess(res, { cache: 'HIT', charged: 1, remaining: 9 });
      expect(res.headers.get('x-request-id')).not.toBe(original.headers.get('x-request-id'));
    });

    test('stored answers are replayed after a restart', async () => {
      // A stored 200 and a stored 404, made here.
      const stored: Array<{ key: string; path: string; body: unknown; original: HttpResult }> = [];
      for (const [path, body] of [
        ['/v1/company', { url: 'globex' }],
        ['/v1/person', { url: 'https://www.linkedin.com/in/nobody-here-000' }],
      ] as const) {
        const key = newKey();
        stored.push({ key, path, body, original: await post(path, body, key) });
      }
      expect(stored.map((s) => s.original.status)).toEqual([200, 404]);
      const before = await c.balance();
      await server.restart();
      for (const { key, path, body, original } of stored) expectReplay(await post(path, body, key), original);
      expect(await c.balance()).toBe(before);
    });
  });
});
