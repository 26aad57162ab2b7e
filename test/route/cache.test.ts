// The Cache area through app.inject, by answer status: free, keyed, never the profile.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf, startRouteApp, type RouteApp } from './support';

let t: RouteApp;
beforeAll(async () => {
  t = await startRouteApp();
}, 60_000);
afterAll(async () => t?.close());

describe('200', () => {
  it('what the cache holds for each kind of reference, free, with the balance', async () => {
    const { headers } = await t.keyed({ credits: 10 });
    expect((await t.call('POST', '/v1/company', { headers, body: { url: 'acme-robotics' } })).statusCode).toBe(200);
    const company = await t.call('POST', '/v1/cache/company', { headers, body: { url: 'acme-robotics-inc' } });
    expect(company.statusCode, company.body).toBe(200);
    expect(company.json()).toMatchObject({ data: { cached: true, found: true }, meta: { credits_charged: 0, credits_remaining: 9 } });
    expect(company.headers).toMatchObject({ 'x-credits-charged': '0', 'x-credits-remaining': '9' });
    expect(company.body).not.toContain('Acme Robotics');
    const domain = await t.call('POST', '/v1/cache/domain', { headers, body: { domain: 'nothing-cached-here.com' } });
    expect(domain.json().data).toEqual({ cached: false, found: false, fetched_at: null, age_seconds: null, content_hash: null });
    expect((await t.call('POST', '/v1/cache/person', { headers, body: { url: 'Jane Doe' } })).json().data.cached).toBe(false);
    const stats = await t.call('GET', '/v1/cache/stats', { headers });
    expect(stats.json().data).toMatchObject({ company: 1 });
  });
});

describe('400', () => {
  it('a reference of the wrong kind or a body off its schema', async () => {
    const { headers } = await t.keyed({ credits: 10 });
    expect(errorOf(await t.call('POST', '/v1/cache/company', { headers, body: { url: 'https://linkedin.com/in/jane' } }))).toMatchObject({ status: 400, code: 'invalid_company_reference', remaining: 10 });
    expect(errorOf(await t.call('POST', '/v1/cache/domain', { headers, body: { domain: '127.0.0.1' } })).code).toBe('invalid_domain');
    expect(errorOf(await t.call('POST', '/v1/cache/person', { headers, body: { url: 'ACoAAB1234' } })).code).toBe('invalid_person_reference');
    expect(errorOf(await t.call('POST', '/v1/cache/person', { headers, body: { url: 'x', max_age: 1 } })).code).toBe('invalid_request');
  });
});

describe('401', () => {
  it('without a key', async () => {
    expect(errorOf(await t.call('GET', '/v1/cache/stats'))).toEqual({ status: 401, code: 'unauthorized', charged: 0, remaining: null });
  });
});

describe('429', () => {
  it('past the key rate', async () => {
    const { headers } = await t.keyed({ credits: 10, rateLimitPerMinute: 1 });
    expect((await t.call('GET', '/v1/cache/stats', { headers })).statusCode).toBe(200);
    expect(errorOf(await t.call('GET', '/v1/cache/stats', { headers }))).toMatchObject({ status: 429, code: 'rate_limited', remaining: 10 });
  });
});
