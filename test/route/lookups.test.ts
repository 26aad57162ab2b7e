// POST /v1/company, /v1/domain, /v1/person, /v1/search through app.inject, by answer status.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf, startRouteApp, type RouteApp } from './support';

let t: RouteApp;
beforeAll(async () => {
  t = await startRouteApp();
}, 60_000);
afterAll(async () => t?.close());

describe('200', () => {
  it('a company lookup: the profile with its billing in meta and headers; a second one is a HIT charged alike', async () => {
    const { workspaceId, headers } = await t.keyed({ credits: 10 });
    const miss = await t.call('POST', '/v1/company', { headers, body: { url: 'acme-robotics' } });
    expect(miss.statusCode, miss.body).toBe(200);
    expect(miss.json().meta).toMatchObject({ cache: { status: 'MISS', age_seconds: 0 }, credits_charged: 1, credits_remaining: 9 });
    expect(miss.headers).toMatchObject({ 'x-credits-charged': '1', 'x-credits-remaining': '9', 'x-cache': 'MISS', age: '0' });
    const hit = await t.call('POST', '/v1/company', { headers, body: { url: 'https://www.linkedin.com/company/1337' } });
    expect(hit.json().meta).toMatchObject({ cache: { status: 'HIT' }, credits_charged: 1, credits_remaining: 8, content_hash: miss.json().meta.content_hash });
    expect(await t.balance(workspaceId)).toBe(8);
  });

  it('a domain lookup costs 4 and says what it resolved; a person by name costs 3; a search 1', async () => {
    const { headers } = await t.keyed({ credits: 10 });
    const domain = await t.call('POST', '/v1/domain', { headers, body: { domain: 'https://shop.globex.com/x' } });
    expect(domain.json().meta).toMatchObject({ credits_charged: 4, credits_remaining: 6, resolved: { domain: 'globex.com', confirmed: false } });
    const person = await t.call('POST', '/v1/person', { headers, body: { url: 'Jane Doe' } });
    expect(person.json()).toMatchObject({ data: { public_identifier: 'jane-doe-42' }, meta: { credits_charged: 3, credits_remaining: 3 } });
    const search = await t.call('POST', '/v1/search', { headers, body: { query: 'acme', limit: 2 } });
    expect(search.json().meta).toMatchObject({ credits_charged: 1, credits_remaining: 2 });
    expect(search.json().data.results.length).toBeLessThanOrEqual(2);
  });

  it('the same Idempotency-Key replays the answer without charging again', async () => {
    const { workspaceId, headers } = await t.keyed({ credits: 10 });
    const withKey = { ...headers, 'idempotency-key': 'route-replay-1' };
    const first = await t.call('POST', '/v1/company', { headers: withKey, body: { url: 'globex' } });
    const again = await t.call('POST', '/v1/company', { headers: withKey, body: { url: 'globex' } });
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    expect(await t.balance(workspaceId)).toBe(9);
  });
});

describe('400', () => {
  it('a body that is not JSON, fails its schema, or names no valid reference: never charged, balance reported', async () => {
    const { workspaceId, headers } = await t.keyed({ credits: 10 });
    const notJson = await t.app.inject({ method: 'POST', url: '/v1/company', headers: { ...headers, 'content-type': 'application/json' }, payload: '{' });
    expect(errorOf(notJson as never)).toEqual({ status: 400, code: 'invalid_request', charged: 0, remaining: 10 });
    expect(errorOf(await t.call('POST', '/v1/search', { headers, body: { query: 'x', limit: 51 } }))).toMatchObject({ code: 'invalid_request', remaining: 10 });
    expect(errorOf(await t.call('POST', '/v1/company', { headers, body: { url: 'https://linkedin.com/in/jane' } })).code).toBe('invalid_company_reference');
    expect(errorOf(await t.call('POST', '/v1/domain', { headers, body: { domain: 'localhost' } })).code).toBe('invalid_domain');
    expect(errorOf(await t.call('POST', '/v1/person', { headers, body: { url: 'ACoAAB1234' } })).code).toBe('invalid_person_reference');
    const badKey = await t.call('POST', '/v1/company', { headers: { ...headers, 'idempotency-key': '' }, body: { url: 'acme-robotics' } });
    expect(badKey.json().error.details).toEqual([expect.objectContaining({ field: 'Idempotency-Key', issue: 'too_small' })]);
    expect(await t.balance(workspaceId)).toBe(10);
  });
});

describe('401', () => {
  it('no key or an unknown one: unauthorized, no workspace known', async () => {
    expect(errorOf(await t.call('POST', '/v1/company', { body: { url: 'acme-robotics' } }))).toEqual({ status: 401, code: 'unauthorized', charged: 0, remaining: null });
    const unknown = { authorization: `Bearer lk_live_${'a'.repeat(32)}` };
    expect(errorOf(await t.call('POST', '/v1/search', { headers: unknown, body: { query: 'x' } }))).toMatchObject({ status: 401, remaining: null });
  });
});

describe('402', () => {
  it('a balance below the success price: insufficient_credits, nothing charged', async () => {
    const { headers } = await t.keyed({ credits: 3 });
    expect(errorOf(await t.call('POST', '/v1/domain', { headers, body: { domain: 'acmerobotics.com' } }))).toEqual({ status: 402, code: 'insufficient_credits', charged: 0, remaining: 3 });
  });
});

describe('404', () => {
  it('a live not-found costs the not-found price, then is free from the cache', async () => {
    const { headers } = await t.keyed({ credits: 10 });
    const live = await t.call('POST', '/v1/domain', { headers, body: { domain: 'no-company-here.com' } });
    expect(errorOf(live)).toEqual({ status: 404, code: 'not_found', charged: 4, remaining: 6 });
    expect(live.json().error.reason).toBe('no_company_for_domain');
    expect(errorOf(await t.call('POST', '/v1/domain', { headers, body: { domain: 'no-company-here.com' } }))).toEqual({ status: 404, code: 'not_found', charged: 0, remaining: 6 });
    const unresolvable = await t.call('POST', '/v1/company', { headers, body: { url: '999999999' } });
    expect(errorOf(unresolvable)).toMatchObject({ code: 'unresolvable_id', charged: 1, remaining: 5 });
  });

  it('a stored 404 is replayed for its Idempotency-Key', async () => {
    const { headers } = await t.keyed({ credits: 10 });
    const withKey = { ...headers, 'idempotency-key': 'route-404' };
    const first = await t.call('POST', '/v1/person', { headers: withKey, body: { url: 'https://www.linkedin.com/in/nobody-here-000' } });
    expect(errorOf(first)).toMatchObject({ status: 404, charged: 1 });
    const again = await t.call('POST', '/v1/person', { headers: withKey, body: { url: 'https://www.linkedin.com/in/nobody-here-000' } });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
  });
});

describe('409 and 422', () => {
  it('an Idempotency-Key still running is in use; with another body it is reused', async () => {
    const { headers } = await t.keyed({ credits: 10 });
    const withKey = { ...headers, 'idempotency-key': 'route-409' };
    const slow = t.call('POST', '/v1/company', { headers: withKey, body: { url: 'sandbox-slow' } });
    // Polls until the first holds the key: then the same key answers 409.
    let second = await t.call('POST', '/v1/company', { headers: withKey, body: { url: 'sandbox-slow' } });
    while (second.statusCode === 200 && second.headers['idempotent-replayed'] === undefined) second = await t.call('POST', '/v1/company', { headers: withKey, body: { url: 'sandbox-slow' } });
    expect(errorOf(second)).toMatchObject({ status: 409, code: 'idempotency_key_in_use', charged: 0 });
    expect((await slow).statusCode).toBe(200);
    expect(errorOf(await t.call('POST', '/v1/company', { headers: withKey, body: { url: 'globex' } }))).toMatchObject({ status: 422, code: 'idempotency_key_reused', charged: 0 });
  });
});

describe('429', () => {
  it('past the key rate: rate_limited with Retry-After, never charged', async () => {
    const { headers } = await t.keyed({ credits: 10, rateLimitPerMinute: 1 });
    expect((await t.call('POST', '/v1/company', { headers, body: { url: 'acme-robotics' } })).statusCode).toBe(200);
    const limited = await t.call('POST', '/v1/company', { headers, body: { url: 'acme-robotics' } });
    expect(errorOf(limited)).toEqual({ status: 429, code: 'rate_limited', charged: 0, remaining: 9 });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it('past max_concurrency: concurrency_limited with Retry-After 1', async () => {
    const { headers } = await t.keyed({ credits: 10, maxConcurrency: 1 });
    const slow = t.call('POST', '/v1/person', { headers, body: { url: 'https://www.linkedin.com/in/sandbox-slow' } });
    let second = await t.call('POST', '/v1/company', { headers, body: { url: 'acme-robotics' } });
    while (second.statusCode === 200) second = await t.call('POST', '/v1/company', { headers, body: { url: 'acme-robotics' } });
    expect(errorOf(second)).toMatchObject({ status: 429, code: 'concurrency_limited', charged: 0 });
    expect(second.headers['retry-after']).toBe('1');
    expect((await slow).statusCode).toBe(200);
  });
});

describe('5xx', () => {
  it.each([
    ['sandbox-upstream-error', 502, 'upstream_error'],
    ['sandbox-blocked', 503, 'blocked'],
    ['sandbox-timeout', 504, 'timeout'],
  ])('%s: %i %s, refunded (credits_charged 0)', async (slug, status, code) => {
    const { workspaceId, headers } = await t.keyed({ credits: 10 });
    expect(errorOf(await t.call('POST', '/v1/company', { headers, body: { url: slug } }))).toEqual({ status, code, charged: 0, remaining: 10 });
    expect(await t.balance(workspaceId)).toBe(10);
  });
});
