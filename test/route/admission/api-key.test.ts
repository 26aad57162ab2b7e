// Admission `apiKey` alone (services/http/admission/api-key.ts): which key calls, its own bucket
// (or the client address's without one), then 401 for a call without a valid key.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANONYMOUS_RATE_PER_MINUTE } from '../../../contracts/endpoints';
import { errorOf } from '../support';
import { startAdmissionApp, whileUnreachable, type AdmissionApp } from './support';

let t: AdmissionApp;
beforeAll(async () => {
  t = await startAdmissionApp(['cacheStats']);
}, 120_000);
afterAll(async () => t?.close());

let lastAddress = 0;
const freshAddress = () => `10.40.${Math.floor(++lastAddress / 250)}.${(lastAddress % 250) + 1}`;
const madeUpKey = () => `lk_live_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'x').slice(0, 32)}`;

async function keyOf(app: AdmissionApp, rateLimitPerMinute?: number) {
  const ws = await app.workspaces.create({ name: 'admission', credits: 10 });
  return app.keys.create(ws.id, { rateLimitPerMinute });
}

describe('200', () => {
  it('a valid key, as Bearer or X-Api-Key, draws on its own bucket', async () => {
    const { id, key } = await keyOf(t);
    for (const headers of [{ authorization: `Bearer ${key}` }, { 'x-api-key': key }]) {
      const answer = await t.call({ method: 'GET', url: '/v1/cache/stats', headers, remoteAddress: freshAddress() });
      expect(answer.statusCode, answer.body).toBe(200);
      expect(answer.json().key).toBe(id);
      expect(answer.headers['ratelimit-limit']).toBe('600');
    }
  });
});

describe('401 unauthorized', () => {
  it.each([
    ['no key', {}],
    ['a made-up key', { authorization: `Bearer ${madeUpKey()}` }],
    ['a header that is no key', { authorization: 'Bearer nope' }],
    ['two different keys', { authorization: `Bearer ${madeUpKey()}`, 'x-api-key': madeUpKey() }],
  ])('%s: after a token of the client address, named Bearer, no workspace', async (_name, headers) => {
    const answer = await t.call({ method: 'GET', url: '/v1/cache/stats', headers, remoteAddress: freshAddress() });
    expect(errorOf(answer)).toMatchObject({ status: 401, code: 'unauthorized', remaining: null });
    expect(answer.headers['www-authenticate']).toBe('Bearer');
    expect(answer.headers['ratelimit-limit']).toBe(String(ANONYMOUS_RATE_PER_MINUTE));
  });

  it('a revoked key', async () => {
    const { id, key } = await keyOf(t);
    await t.keys.revoke(id);
    const answer = await t.call({ method: 'GET', url: '/v1/cache/stats', headers: { authorization: `Bearer ${key}` } });
    expect(errorOf(answer)).toMatchObject({ status: 401, code: 'unauthorized' });
  });
});

describe('404 route_not_found', () => {
  it('an unknown path with a valid key draws on the key, and shows its balance', async () => {
    const { key } = await keyOf(t);
    const answer = await t.call({ method: 'GET', url: '/v1/no-such-thing', headers: { authorization: `Bearer ${key}` } });
    expect(errorOf(answer)).toMatchObject({ status: 404, code: 'route_not_found', remaining: 10 });
    expect(answer.headers['ratelimit-limit']).toBe('600');
  });
});

describe('429 rate_limited', () => {
  it("the key's bucket ran dry: said of the key", async () => {
    const { key } = await keyOf(t, 1);
    const headers = { authorization: `Bearer ${key}` };
    expect((await t.call({ method: 'GET', url: '/v1/cache/stats', headers })).statusCode).toBe(200);
    const refused = await t.call({ method: 'GET', url: '/v1/cache/stats', headers });
    expect(errorOf(refused)).toMatchObject({ status: 429, code: 'rate_limited', remaining: 10 });
    expect(refused.json().error.message).toMatch(/API key/);
    expect(refused.headers['ratelimit-limit']).toBe('1');
  });
});

describe('503 service_unavailable', () => {
  it("the bucket cannot be read: refused with the bucket's limit and nothing remaining", async () => {
    const { key } = await keyOf(t, 7);
    const keyed = await whileUnreachable(t.limiter, () => t.call({ method: 'GET', url: '/v1/cache/stats', headers: { authorization: `Bearer ${key}` } }));
    expect(errorOf(keyed)).toMatchObject({ status: 503, code: 'service_unavailable' });
    expect(keyed.headers['ratelimit-limit']).toBe('7');
    expect(keyed.headers['ratelimit-remaining']).toBe('0');
    const keyless = await whileUnreachable(t.limiter, () => t.call({ method: 'GET', url: '/v1/cache/stats' }));
    expect(errorOf(keyless)).toMatchObject({ status: 503, code: 'service_unavailable' });
    expect(keyless.headers['ratelimit-limit']).toBe(String(ANONYMOUS_RATE_PER_MINUTE));
  });
});
