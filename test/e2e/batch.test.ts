// End-to-end: POST /v1/batch (docs/api.md "Batch") over real HTTP, on the embedded defaults
// (PGlite, in-process limits) and on PostgreSQL with Redis limits: one batch of mixed items (a
// cache hit, misses, a failing fetch refunded, a bad body, a 402 cut-off, a 429 cut-off), each
// item's ledger entries under its own request id, the whole answer replayed for its
// Idempotency-Key, and the audit agreeing with the log afterwards.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { expectRateLimitHeaders, ledgerTypes, REQUEST_ID } from './support/contract';
import { backends, call, startE2eServer, type E2eServer } from './support/harness';
import { ownCompany } from './support/sandbox-references';

describe.each(backends())('POST /v1/batch on $name', (backend) => {
  describe.skipIf(!backend.available)(`on ${backend.name}`, () => {
    let server: E2eServer;
    beforeAll(async () => {
      server = await startE2eServer(backend);
    });
    afterAll(async () => server?.stop());

    test('mixed items: hits, misses, a refunded failure, a 402 and a 429 cut-off, each billed as its single call; replayed whole', { timeout: 30_000 }, async () => {
      const ws = await server.admin.createWorkspace({ name: 'batch e2e', credits: 6 });
      const { key } = await server.admin.createKey(ws.id, { rate_limit_per_minute: 8 });
      const post = (path: string, json: unknown, headers: Record<string, string> = {}) => call(server.url, 'POST', path, { key, json, headers });
      const company = (n: number) => ({ operation: 'company', body: { url: ownCompany(n).slug } });

      // One token and one credit: company 0 is cached from here on.
      expect((await post('/v1/company', { url: ownCompany(0).slug })).status).toBe(200);
      const items = [
        { ...company(0), id: 'hit' },
        { ...company(1), id: 'miss' },
        { operation: 'company', body: { url: 'sandbox-upstream-error' }, id: 'failing' },
        { operation: 'person', body: { url: 'ACoAAB1234' }, id: 'bad body' },
        // 4 credits: the balance (2, or 3 once the failing item's refund is in) no longer covers it.
        { operation: 'domain', body: { domain: ownCompany(2).domain }, id: 'too dear' },
        { ...company(3), id: 'cheaper' },
        { ...company(4), id: 'last charged' },
        // 7 tokens were left for 9 items.
        { ...company(5), id: 'past the bucket' },
        { ...company(6), id: 'past the bucket too' },
      ];
      const headers = { 'Idempotency-Key': `batch-e2e-${backend.name}` };
      const answer = await post('/v1/batch', { items }, headers);
      expect(answer.status, answer.text).toBe(200);
      expectRateLimitHeaders(answer);
      expect(answer.headers.get('ratelimit-remaining')).toBe('0');
      const { data, meta } = answer.body;
      expect(data.map((r: any) => [r.id, r.status, r.credits_charged, r.cache?.status ?? r.error.code])).toEqual([
        ['hit', 200, 1, 'HIT'],
        ['miss', 200, 1, 'MISS'],
        ['failing', 502, 0, 'upstream_error'],
        ['bad body', 400, 0, 'invalid_person_reference'],
        ['too dear', 402, 0, 'insufficient_credits'],
        ['cheaper', 200, 1, 'MISS'],
        ['last charged', 200, 1, 'MISS'],
        ['past the bucket', 429, 0, 'rate_limited'],
        ['past the bucket too', 429, 0, 'rate_limited'],
      ]);
      expect(meta).toEqual({ request_id: answer.headers.get('x-request-id'), credits_charged: 4, credits_remaining: 1 });
      expect(answer.headers.get('x-credits-charged')).toBe('4');
      expect(await server.admin.balance(ws.id)).toBe(1);

      // Each item's own request id, and the ledger entries its single call would have made.
      const ids = data.map((r: any) => r.request_id);
      for (const id of ids) expect(id).toMatch(REQUEST_ID);
      expect(new Set([...ids, meta.request_id]).size).toBe(items.length + 1);
      expect(await ledgerTypes(server, ws.id, data[0].request_id)).toEqual([['LookupCharged', -1]]);
      expect(await ledgerTypes(server, ws.id, data[2].request_id)).toEqual([
        ['LookupCharged', -1],
        ['LookupRefunded', 1],
      ]);
      for (const refused of [3, 4, 7]) expect(await ledgerTypes(server, ws.id, data[refused].request_id)).toEqual([]);
      expect(await server.admin.ledger(ws.id, meta.request_id)).toEqual([]);

      // The batch's events are the log's like any other's: every projection agrees with it.
      expect(await server.admin.audit()).toMatchObject({ ok: true, mismatches: [] });

      // The whole answer again for the same key, once the bucket has a token for the call (a
      // replay runs no item, so it takes only its admission's): nothing runs or is charged again.
      let replay = await post('/v1/batch', { items }, headers);
      while (replay.status === 429) {
        await new Promise((resolve) => setTimeout(resolve, Number(replay.headers.get('retry-after')) * 1000));
        replay = await post('/v1/batch', { items }, headers);
      }
      expect(replay.status).toBe(200);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body).toEqual(answer.body);
      expect(await server.admin.balance(ws.id)).toBe(1);
    });

    test('an invalid envelope is refused whole, uncharged', async () => {
      const ws = await server.admin.createWorkspace({ name: 'batch e2e envelope', credits: 5 });
      const { key } = await server.admin.createKey(ws.id);
      const answer = await call(server.url, 'POST', '/v1/batch', { key, json: { items: [{ operation: 'cache', body: {} }] } });
      expect(answer.status).toBe(400);
      expect(answer.body.error.code).toBe('invalid_request');
      expect(await server.admin.balance(ws.id)).toBe(5);
    });
  });
});
