// Which bucket a request with a key draws on, through app.inject: a valid key only ever its own,
// a made-up one the client address's (refused from the key set, with no database read).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANONYMOUS_RATE_PER_MINUTE } from '../../contracts/endpoints';
import { ADMIN_TOKEN, errorOf, startRouteApp, type Answer, type RouteApp } from './support';

let t: RouteApp;
beforeAll(async () => {
  t = await startRouteApp();
}, 60_000);
afterAll(async () => t?.close());

let lastAddress = 0;
const freshAddress = () => `10.20.${Math.floor(++lastAddress / 250)}.${(lastAddress % 250) + 1}`;
const madeUpKey = () => `lk_live_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'x').slice(0, 32)}`;

async function callFrom(remoteAddress: string, url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return (await t.app.inject({ method: 'GET', url, headers, remoteAddress })) as Answer;
}

/** Keyless calls from `address` until its per-IP bucket refuses one. */
async function drain(address: string): Promise<void> {
  for (let i = 0; i < 2 * ANONYMOUS_RATE_PER_MINUTE; i++) {
    if ((await callFrom(address, '/v1/health')).statusCode === 429) return;
  }
  throw new Error('the per-IP bucket never ran dry');
}

describe('200', () => {
  it('a valid key this instance has never seen, from an address whose per-IP bucket ran dry, draws on its own bucket only', async () => {
    const { headers } = await t.keyed();
    const address = freshAddress();
    await drain(address);
    for (let i = 0; i < 3; i++) {
      const answer = await callFrom(address, '/v1/cache/stats', headers);
      expect(answer.statusCode, answer.body).toBe(200);
      expect(answer.headers['ratelimit-limit']).toBe('600');
      // The key's bucket, 10 tokens a second back: its first take leaves 599, the next ones at most that.
      const remaining = Number(answer.headers['ratelimit-remaining']);
      if (i === 0) expect(remaining).toBe(599);
      else expect(remaining).toBeLessThanOrEqual(599);
    }
  });
});

describe('401 unauthorized', () => {
  it('a made-up key from an address with tokens left takes one of them, and speaks of no key', async () => {
    const address = freshAddress();
    for (let i = 0; i < 3; i++) {
      const answer = await callFrom(address, '/v1/cache/stats', { authorization: `Bearer ${madeUpKey()}` });
      expect(errorOf(answer)).toMatchObject({ status: 401, code: 'unauthorized', remaining: null });
      expect(answer.headers['ratelimit-limit']).toBe(String(ANONYMOUS_RATE_PER_MINUTE));
      expect(Number(answer.headers['ratelimit-remaining'])).toBeLessThan(ANONYMOUS_RATE_PER_MINUTE - i);
    }
  });

  it('the refusals from the key set show in the metrics, beside its size', async () => {
    await t.keyed();
    const metric = async (pattern: RegExp) => {
      const scraped = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      return Number(pattern.exec(scraped.body)?.[1] ?? Number.NaN);
    };
    const before = await metric(/^lookup_api_key_set_misses_total\{outcome="unknown"\} (\d+)$/m);
    for (let i = 0; i < 3; i++) await callFrom(freshAddress(), '/v1/cache/stats', { authorization: `Bearer ${madeUpKey()}` });
    expect((await metric(/^lookup_api_key_set_misses_total\{outcome="unknown"\} (\d+)$/m)) - before).toBe(3);
    expect(await metric(/^lookup_api_key_set_size (\d+)$/m)).toBeGreaterThanOrEqual(1);
    expect(await metric(/^lookup_api_key_set_barriers_total (\d+)$/m)).toBeGreaterThanOrEqual(1);
    expect(await metric(/^lookup_api_key_set_rebuilds_total\{result="loaded"\} (\d+)$/m)).toBeGreaterThanOrEqual(1);
  });

  it('a revoked key, though its fingerprint stays in the set until the next rebuild, is refused on the per-IP bucket', async () => {
    const ws = await t.workspaces.create({ name: 'revoked', credits: 1 });
    const { id, key } = await t.keys.create(ws.id, {});
    await t.keys.revoke(id);
    const answer = await callFrom(freshAddress(), '/v1/cache/stats', { authorization: `Bearer ${key}` });
    expect(errorOf(answer)).toMatchObject({ status: 401, code: 'unauthorized', remaining: null });
    expect(answer.headers['ratelimit-limit']).toBe(String(ANONYMOUS_RATE_PER_MINUTE));
  });
});

describe('429 rate_limited', () => {
  it('a made-up key from an address whose bucket ran dry speaks of the client address', async () => {
    const address = freshAddress();
    await drain(address);
    const refused = await callFrom(address, '/v1/cache/stats', { authorization: `Bearer ${madeUpKey()}` });
    expect(errorOf(refused)).toMatchObject({ status: 429, code: 'rate_limited', remaining: null });
    expect(refused.headers['ratelimit-limit']).toBe(String(ANONYMOUS_RATE_PER_MINUTE));
    expect(refused.json().error.message).toMatch(/client address/);
  });
});
