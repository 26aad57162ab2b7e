// POST /v1/batch through app.inject, by answer status. Each test looks up references of its own
// (the sandbox's generated companies), so no test sees another's cache.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownCompany } from '../e2e/support/sandbox-references';
import { LimiterUnavailableError } from '../../services/limits/limiter-unavailable';
import type { RateLimiter } from '../../services/limits/rate-limiter';
import { createMemoryRateLimiter } from '../../services/limits/rate-limiter-memory';
import { errorOf, startRouteApp, type RouteApp } from './support';

let t: RouteApp;
beforeAll(async () => {
  t = await startRouteApp();
}, 60_000);
afterAll(async () => t?.close());

const company = (n: number, id?: string) => ({ operation: 'company', body: { url: ownCompany(n).slug }, ...(id === undefined ? {} : { id }) });
const batch = (headers: Record<string, string>, items: unknown[]) => t.call('POST', '/v1/batch', { headers, body: { items } });
/** The body of a batch answered 200 (anything else fails here, with its body). */
const answered = (answer: Awaited<ReturnType<typeof batch>>) => {
  expect(answer.statusCode, answer.body).toBe(200);
  return answer.json();
};

describe('200', () => {
  it('mixed items: each answered as its single call, in order, with its own request id; the sums in meta and headers', async () => {
    const { workspaceId, headers } = await t.keyed({ credits: 21 });
    await batch(headers, [company(1)]);
    const answer = await batch(headers, [
      company(0, 'a'),
      company(1, 'b'),
      { operation: 'domain', body: { domain: 'no-company-here-batch.com' }, id: 'c' },
      { operation: 'person', body: { url: 'ACoAAB1234' }, id: 'd' },
      { operation: 'search', body: { query: 'acme', limit: 2 } },
      { operation: 'company', body: { url: 'sandbox-upstream-error' }, id: 'f' },
      { operation: 'company', body: { url: 'x', extra: 1 }, id: 'g' },
    ]);
    expect(answer.statusCode, answer.body).toBe(200);
    const { data, meta } = answered(answer);
    expect(data.map((r: { id?: string; status: number; credits_charged: number }) => [r.id, r.status, r.credits_charged])).toEqual([
      ['a', 200, 1],
      ['b', 200, 1],
      ['c', 404, 4],
      ['d', 400, 0],
      [undefined, 200, 1],
      ['f', 502, 0],
      ['g', 400, 0],
    ]);
    expect(data[0].cache.status).toBe('MISS');
    expect(data[1].cache.status).toBe('HIT');
    expect(data[0].data.slug).toBe(ownCompany(0).slug);
    expect(data[2].error).toMatchObject({ code: 'not_found', reason: 'no_company_for_domain' });
    expect(data[3].error.code).toBe('invalid_person_reference');
    expect(data[4].data.results.length).toBeLessThanOrEqual(2);
    expect(data[5].error).toMatchObject({ code: 'upstream_error', retryable: true });
    expect(data[6].error.details).toEqual([expect.objectContaining({ field: 'extra', issue: 'unknown_field' })]);
    const ids = data.map((r: { request_id: string }) => r.request_id);
    expect(new Set([...ids, meta.request_id]).size).toBe(8);
    expect(meta).toEqual({ request_id: answer.headers['x-request-id'], credits_charged: 7, credits_remaining: 13 });
    expect(answer.headers).toMatchObject({ 'x-credits-charged': '7', 'x-credits-remaining': '13' });
    expect(await t.balance(workspaceId)).toBe(13);
    // The same ledger entries as single calls, under each item's request id: the failed fetch charged and refunded.
    const refunded = await t.readModels.ledgerEntries(workspaceId, { requestId: data[5].request_id, limit: 10 });
    expect(refunded.data.map((e: { type: string; credits: number }) => [e.type, e.credits])).toEqual([
      ['LookupCharged', -1],
      ['LookupRefunded', 1],
    ]);
    expect((await t.readModels.ledgerEntries(workspaceId, { requestId: data[3].request_id, limit: 10 })).data).toEqual([]);
  });

  it('a total above the balance: items are charged in order until it runs out, the rest 402 uncharged, never below zero', async () => {
    const { workspaceId, headers } = await t.keyed({ credits: 50 });
    // Item 2 is a cache hit, answered long before items 0 and 1 are fetched: it still waits its turn.
    await batch(headers, [company(3)]);
    const { workspaceId: ws, headers: h } = await t.keyed({ credits: 2 });
    const answer = await batch(h, [company(20), company(2), company(3), { operation: 'domain', body: { domain: ownCompany(4).domain } }]);
    expect(answered(answer).data.map((r: { status: number; credits_charged: number }) => [r.status, r.credits_charged])).toEqual([
      [200, 1],
      [200, 1],
      [402, 0],
      [402, 0],
    ]);
    expect(answered(answer).data[2].error.code).toBe('insufficient_credits');
    expect(answered(answer).meta).toMatchObject({ credits_charged: 2, credits_remaining: 0 });
    expect(await t.balance(ws)).toBe(0);
    expect(await t.balance(workspaceId)).toBe(49);
  });

  it('a later, cheaper item is still charged when an earlier one costs more than is left', async () => {
    const { headers } = await t.keyed({ credits: 5 });
    const answer = await batch(headers, [
      { operation: 'domain', body: { domain: ownCompany(5).domain } },
      { operation: 'domain', body: { domain: ownCompany(6).domain } },
      company(7),
    ]);
    expect(answered(answer).data.map((r: { status: number }) => r.status)).toEqual([200, 402, 200]);
    expect(answered(answer).meta.credits_remaining).toBe(0);
  });

  it('one token per item: items past the bucket are 429 rate_limited, uncharged; the headers say what is left', async () => {
    const { headers } = await t.keyed({ credits: 10, rateLimitPerMinute: 3 });
    const answer = await batch(headers, [company(8), company(9), company(10), company(11), { operation: 'person', body: { url: 'ACoAAB1234' } }]);
    const { data, meta } = answered(answer);
    expect(data.map((r: { status: number }) => r.status)).toEqual([200, 200, 200, 429, 429]);
    expect(data[3]).toMatchObject({ credits_charged: 0, error: { code: 'rate_limited' } });
    expect(data[3].error.retry_after_seconds).toBeGreaterThanOrEqual(1);
    expect(data[4].credits_charged).toBe(0);
    expect(meta.credits_charged).toBe(3);
    expect(answer.headers['ratelimit-remaining']).toBe('0');
    // The bucket is empty: the next call of the key is refused whole.
    expect(errorOf(await batch(headers, [company(8)]))).toMatchObject({ status: 429, code: 'rate_limited', charged: 0 });
  });

  it('an item past the bucket whose answer is cached (a not-found): 429, nothing recorded under its request id', async () => {
    const { headers } = await t.keyed({ credits: 10, rateLimitPerMinute: 3 });
    const notFound = { operation: 'domain', body: { domain: 'no-company-here-refused.com' } };
    expect(answered(await batch(headers, [notFound])).data[0].status).toBe(404);
    // Two tokens left: the third item's cache is read while the bucket is asked, and that is all.
    const { data } = answered(await batch(headers, [company(18), notFound, notFound]));
    expect(data.map((r: { status: number }) => r.status)).toEqual([200, 404, 429]);
    const recorded = async (requestId: string) =>
      (await t.store.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM events WHERE metadata->>'request_id' = $1`, [requestId])).rows[0]!.n;
    expect(await recorded(data[1].request_id)).toBeGreaterThan(0);
    expect(await recorded(data[2].request_id)).toBe(0);
  });

  it('more live fetches than max_concurrency: the batch runs them through its slots, none refused', async () => {
    const { headers } = await t.keyed({ credits: 10, maxConcurrency: 1 });
    const answer = await batch(headers, [company(12), company(13), company(14)]);
    expect(answered(answer).data.map((r: { status: number }) => r.status)).toEqual([200, 200, 200]);
  });

  it('every slot held by another call: a live fetch is 429 concurrency_limited uncharged; a cache hit needs no slot', async () => {
    const { headers } = await t.keyed({ credits: 10, maxConcurrency: 1 });
    await batch(headers, [company(15)]);
    const slow = t.call('POST', '/v1/person', { headers, body: { url: 'https://www.linkedin.com/in/sandbox-slow' } });
    let answer = await batch(headers, [company(15), company(16)]);
    // Until the slow call holds the slot, the batch may get it first.
    while (answered(answer).data[1].status === 200) answer = await batch(headers, [company(15), company(17 + Math.floor(Math.random() * 50))]);
    const [hit, live] = answered(answer).data;
    expect([hit.status, hit.cache.status]).toEqual([200, 'HIT']);
    expect(live).toMatchObject({ status: 429, credits_charged: 0, error: { code: 'concurrency_limited', retry_after_seconds: 1 } });
    expect((await slow).statusCode).toBe(200);
  });

  it('the same Idempotency-Key replays the whole answer without running or charging again', async () => {
    const { workspaceId, headers } = await t.keyed({ credits: 10 });
    const withKey = { ...headers, 'idempotency-key': 'batch-replay-1' };
    const items = [company(70), { operation: 'company', body: { url: 'sandbox-blocked' } }];
    const first = await batch(withKey, items);
    const again = await batch(withKey, items);
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    expect(again.headers['x-request-id']).toBe(first.headers['x-request-id']);
    expect(await t.balance(workspaceId)).toBe(9);
  });
});

describe('400', () => {
  it.each([
    ['no items array', { items: 'company' }],
    ['no items at all', {}],
    ['0 items', { items: [] }],
    ['101 items', { items: Array.from({ length: 101 }, () => company(0)) }],
    ['an unknown operation', { items: [company(0), { operation: 'cache', body: {} }] }],
    ['an unknown field of an item', { items: [{ ...company(0), extra: true }] }],
    ['an item that is no object', { items: [company(0), 'x'] }],
  ])('an invalid envelope (%s): 400 for the whole batch, nothing charged', async (_, body) => {
    const { workspaceId, headers } = await t.keyed({ credits: 10 });
    const answer = await t.call('POST', '/v1/batch', { headers, body });
    expect(errorOf(answer)).toEqual({ status: 400, code: 'invalid_request', charged: 0, remaining: 10 });
    expect(answer.json().error.details.length).toBeGreaterThan(0);
    expect(await t.balance(workspaceId)).toBe(10);
  });

  it('a body that is not JSON: 400 for the whole batch', async () => {
    const { headers } = await t.keyed({ credits: 10 });
    const answer = await t.app.inject({ method: 'POST', url: '/v1/batch', headers: { ...headers, 'content-type': 'application/json' }, payload: '[' });
    expect(errorOf(answer as never)).toMatchObject({ status: 400, code: 'invalid_request' });
  });
});

describe('401', () => {
  it('no key: unauthorized', async () => {
    expect(errorOf(await batch({}, [company(0)]))).toEqual({ status: 401, code: 'unauthorized', charged: 0, remaining: null });
  });
});

describe('422', () => {
  it('the same Idempotency-Key with other items: idempotency_key_reused', async () => {
    const { headers } = await t.keyed({ credits: 10 });
    const withKey = { ...headers, 'idempotency-key': 'batch-reused-1' };
    expect((await batch(withKey, [company(71)])).statusCode).toBe(200);
    expect(errorOf(await batch(withKey, [company(72)]))).toMatchObject({ status: 422, code: 'idempotency_key_reused', charged: 0 });
  });
});

// Last: starting a second app stalls this process's event loop, which the first app's load shedder
// would answer with `no_capacity` for a while.
describe('503', () => {
  let down: RouteApp;
  beforeAll(async () => {
    // The bucket answers the admission's token, then fails the items' call, as a Redis lost mid-request.
    const buckets = createMemoryRateLimiter();
    const failingItems: RateLimiter = { ...buckets, takeUpTo: async () => Promise.reject(new LimiterUnavailableError('rate limit take', new Error('connection lost'))) };
    // Its own start-up stalls the loop too: no shedding here, the limiter is what is tested.
    down = await startRouteApp({ env: { MAX_EVENT_LOOP_DELAY_MS: '60000' }, deps: { rateLimiter: failingItems } });
  }, 60_000);
  afterAll(async () => down?.close());

  it('the items\' tokens unknown (Redis gone): 503 for the whole batch with Retry-After, no item run or charged', async () => {
    const { workspaceId, headers } = await down.keyed({ credits: 10 });
    const answer = await down.call('POST', '/v1/batch', { headers, body: { items: [company(19), company(20)] } });
    expect(errorOf(answer)).toMatchObject({ status: 503, code: 'service_unavailable', charged: 0 });
    expect(answer.headers['retry-after']).toBeDefined();
    expect(await down.balance(workspaceId)).toBe(10);
    const { rows } = await down.store.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM events WHERE stream = $1 AND type = 'LookupCompleted'`, [`workspace-${workspaceId}`]);
    expect(rows[0]!.n).toBe(0);
  });
});
