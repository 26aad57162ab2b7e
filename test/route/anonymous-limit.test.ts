// The per-client-address bucket's 429 through app.inject, on an app of its own (it drains the bucket).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANONYMOUS_RATE_PER_MINUTE } from '../../contracts/endpoints';
import { errorOf, startRouteApp, type RouteApp } from './support';

let t: RouteApp;
beforeAll(async () => {
  t = await startRouteApp();
}, 60_000);
afterAll(async () => t?.close());

describe('429 rate_limited', () => {
  it('of a key speaks of the key', async () => {
    const { headers } = await t.keyed({ rateLimitPerMinute: 1 });
    expect((await t.call('GET', '/v1/cache/stats', { headers })).statusCode).toBe(200);
    const refused = await t.call('GET', '/v1/cache/stats', { headers });
    expect(errorOf(refused)).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(refused.json().error.message).toMatch(/API key/);
  });

  it('of the per-IP bucket speaks of the client address, not of an API key the caller does not have', async () => {
    for (const [method, url] of [['GET', '/v1/health'], ['POST', '/v1/company'], ['GET', '/no/such/route']] as const) {
      const refused = await callWithBucketEmpty(method, url);
      expect(errorOf(refused), url).toMatchObject({ status: 429, code: 'rate_limited', remaining: null });
      const { message } = refused.json().error;
      expect(message).toMatch(/client address/);
      expect(message).not.toMatch(/key/i);
    }
  });
});

/**
 * The call, sent right after the client address's bucket answered 429. The bucket refills 2 tokens
 * a second: a pause of the test process between the two (seen once in CI) lets a token back, so
 * the drain is done again, a few times at most.
 */
async function callWithBucketEmpty(method: 'GET' | 'POST', url: string) {
  for (let attempt = 1; ; attempt++) {
    let drained = false;
    for (let i = 0; i < 2 * ANONYMOUS_RATE_PER_MINUTE && !drained; i++) drained = (await t.call('GET', '/v1/health')).statusCode === 429;
    expect(drained).toBe(true);
    const answer = await t.call(method, url);
    if (answer.statusCode === 429 || attempt === 3) return answer;
  }
}
