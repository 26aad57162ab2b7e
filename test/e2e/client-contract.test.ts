// End-to-end, as a client sees it: the credit headers on every answer that has a
// workspace, a key's last use on every authenticated request, an empty body where every field is
// optional, the 401 challenge, and a profile that is the same bytes from the cache as live.
import { createHash } from 'node:crypto';
import { randomUUID } from 'node:crypto';
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { expectError, expectSuccess } from './support/contract';
import { ADMIN_TOKEN, backends, call, newCustomer, startE2eServer, type E2eServer } from './support/harness';
import { ownCompany, ownPerson, ownUnknownDomain } from './support/sandbox-references';

const POLL_DEADLINE_MS = 30_000;

describe.each(backends())('the client contract over HTTP on $name', (backend) => {
  describe.skipIf(!backend.available)(`on ${backend.name}`, () => {
    let server: E2eServer;

    beforeAll(async () => {
      server = await startE2eServer(backend);
    });
    afterAll(async () => server?.stop());

    const admin = (method: string, path: string, rawBody?: string) =>
      call(server.url, method, path, { rawBody, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });

    async function lastUsedAt(workspaceId: string, keyId: string): Promise<string | null> {
      const listed = await admin('GET', `/admin/v1/workspaces/${workspaceId}/keys`);
      expect(listed.status, listed.text).toBe(200);
      return listed.body.data.find((k: { id: string }) => k.id === keyId).last_used_at;
    }

    /** Polls until the key's last_used_at is later than `after` (null: until it is set at all). */
    async function lastUseAfter(workspaceId: string, keyId: string, after: string | null): Promise<string> {
      const deadline = Date.now() + POLL_DEADLINE_MS;
      for (;;) {
        const seen = await lastUsedAt(workspaceId, keyId);
        if (seen !== null && (after === null || Date.parse(seen) > Date.parse(after))) return seen;
        if (Date.now() > deadline) throw new Error(`last_used_at of ${keyId} stayed ${seen} (after ${after})`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }

    /** Past the millisecond of `at`: a use noted from now on is strictly later. */
    async function pastMillisecondOf(at: string) {
      while (Date.now() <= Date.parse(at)) await new Promise((r) => setTimeout(r, 2));
    }

    test('refunded failures, charged 404s and 402 carry X-Credits-Charged and X-Credits-Remaining, equal to meta', async () => {
      const c = await newCustomer(server, 20, 'credit headers');
      const refunded = await c.post('/v1/company', { url: 'sandbox-upstream-error', max_age: 0 });
      expectError(refunded, server, { code: 'upstream_error', charged: 0, remaining: 20 });
      expect(refunded.headers.get('x-credits-charged')).toBe('0');
      expect(refunded.headers.get('x-credits-remaining')).toBe('20');

      const notFound = await c.post('/v1/domain', { domain: ownUnknownDomain('client-contract') });
      expectError(notFound, server, { code: 'not_found', charged: 4, remaining: 16 });
      expect([notFound.headers.get('x-credits-charged'), notFound.headers.get('x-credits-remaining')]).toEqual(['4', '16']);

      const broke = await newCustomer(server, 0, 'no credits');
      const refused = await broke.post('/v1/company', { url: 'acme-robotics' });
      expectError(refused, server, { code: 'insufficient_credits', remaining: 0 });
      expect([refused.headers.get('x-credits-charged'), refused.headers.get('x-credits-remaining')]).toEqual(['0', '0']);

      // A refusal made with a key has a workspace too; a 401 has none.
      const invalid = await c.post('/v1/company', { url: 'x', unknown: 1 });
      expect([invalid.status, invalid.headers.get('x-credits-charged'), invalid.headers.get('x-credits-remaining')]).toEqual([400, '0', '16']);
      const anonymous = await call(server.url, 'POST', '/v1/company', { json: { url: 'acme-robotics' } });
      expectError(anonymous, server, { code: 'unauthorized', remaining: null });
      expect([anonymous.headers.get('x-credits-charged'), anonymous.headers.get('x-credits-remaining')]).toEqual([null, null]);
    });

    test('401 names its scheme: WWW-Authenticate: Bearer', async () => {
      for (const headers of [{}, { authorization: 'Bearer lk_live_nonsense' }, { 'x-api-key': `lk_live_${'A'.repeat(32)}` }] as Record<string, string>[]) {
        const res = await call(server.url, 'POST', '/v1/company', { json: { url: 'acme-robotics' }, headers });
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toBe('Bearer');
      }
      expect((await call(server.url, 'GET', '/v1/cache/stats')).headers.get('www-authenticate')).toBe('Bearer');
      expect((await call(server.url, 'GET', '/admin/v1/audit')).headers.get('www-authenticate')).toBe('Bearer');
    });

    test('POST /admin/v1/workspaces/{id}/keys with no body is `{}`: 201 with the defaults', async () => {
      const ws = await server.admin.createWorkspace({ name: 'empty body' });
      for (const headers of [{}, { 'content-type': 'application/json' }] as Record<string, string>[]) {
        const res = await call(server.url, 'POST', `/admin/v1/workspaces/${ws.id}/keys`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers } });
        expect(res.status, res.text).toBe(201);
        expect(res.body).toMatchObject({ name: null, rate_limit_per_minute: 600 });
        expect(res.body.key).toMatch(/^lk_live_[A-Za-z0-9]{32}$/);
      }
      // An empty body is not `{}` where a field is required.
      const noName = await admin('POST', '/admin/v1/workspaces');
      expect([noName.status, noName.body.error.code]).toEqual([400, 'invalid_request']);
      const lookup = await call(server.url, 'POST', '/v1/company', { key: (await server.admin.createKey(ws.id)).key });
      expect([lookup.status, lookup.body.error.code]).toEqual([400, 'invalid_request']);
    });

    test("every authenticated request moves the key's last_used_at: cache calls, replays, 400, 402, 429", async () => {
      const ws = await server.admin.createWorkspace({ name: 'last use', credits: 10 });
      const freshKey = async (body: { rate_limit_per_minute?: number } = {}) => {
        const key = await server.admin.createKey(ws.id, body);
        expect(await lastUsedAt(ws.id, key.id)).toBeNull();
        return key;
      };

      const cacheKey = await freshKey();
      expect((await call(server.url, 'POST', '/v1/cache/company', { key: cacheKey.key, json: { url: 'acme-robotics' } })).status).toBe(200);
      await lastUseAfter(ws.id, cacheKey.id, null);

      const invalidKey = await freshKey();
      expect((await call(server.url, 'POST', '/v1/company', { key: invalidKey.key, json: { url: 'a b c' } })).status).toBe(400);
      await lastUseAfter(ws.id, invalidKey.id, null);

      // The Idempotency-Key is the workspace's: a second key of it gets the replay.
      const idem = `client-contract-${randomUUID()}`;
      const original = await call(server.url, 'POST', '/v1/company', { key: cacheKey.key, json: { url: ownCompany(40).slug }, headers: { 'idempotency-key': idem } });
      expect(original.status, original.text).toBe(200);
      const replayKey = await freshKey();
      const replay = await call(server.url, 'POST', '/v1/company', { key: replayKey.key, json: { url: ownCompany(40).slug }, headers: { 'idempotency-key': idem } });
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      await lastUseAfter(ws.id, replayKey.id, null);

      const broke = await server.admin.createWorkspace({ name: 'last use, no credits' });
      const brokeKey = await server.admin.createKey(broke.id);
      expect((await call(server.url, 'POST', '/v1/company', { key: brokeKey.key, json: { url: 'acme-robotics' } })).status).toBe(402);
      await lastUseAfter(broke.id, brokeKey.id, null);

      // One token a minute: the first call takes it, the second is refused 429 and still moves it.
      const slowKey = await freshKey({ rate_limit_per_minute: 1 });
      expect((await call(server.url, 'POST', '/v1/cache/company', { key: slowKey.key, json: { url: 'acme-robotics' } })).status).toBe(200);
      const first = await lastUseAfter(ws.id, slowKey.id, null);
      await pastMillisecondOf(first);
      expect((await call(server.url, 'POST', '/v1/cache/company', { key: slowKey.key, json: { url: 'acme-robotics' } })).status).toBe(429);
      await lastUseAfter(ws.id, slowKey.id, first);
    });

    test('a profile is the same bytes from the cache as live: RFC 8785 key order, the text content_hash covers', async () => {
      const c = await newCustomer(server, 100, 'bytes');
      for (const [path, body] of [
        ['/v1/company', { url: ownCompany(41).slug }],
        ['/v1/person', { url: ownPerson(41).url }],
        ['/v1/search', { query: `client contract ${randomUUID()}`, limit: 3 }],
      ] as const) {
        const miss = await c.post(path, body);
        expect(miss.body.meta.cache.status, `${path}: ${miss.text}`).toBe('MISS');
        const hit = await c.post(path, body);
        expectSuccess(hit, { cache: 'HIT', charged: hit.body.meta.credits_charged, remaining: hit.body.meta.credits_remaining });
        // JSON.parse keeps the order of the keys as sent, so this is the text of `data` as served.
        const missData = JSON.stringify(miss.body.data);
        expect(JSON.stringify(hit.body.data), path).toBe(missData);
        expect(missData).toBe(canonicalize(miss.body.data));
        expect(miss.body.meta.content_hash).toBe(`sha256:${createHash('sha256').update(missData, 'utf8').digest('hex')}`);
        expect(miss.text.startsWith(`{"data":${missData},"meta":`)).toBe(true);
      }
    });
  });
});
