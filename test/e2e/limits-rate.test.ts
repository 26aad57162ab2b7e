// Rate limits over HTTP on two instances sharing Redis (docs/api.md "Limits"): a token bucket per
// API key, a per-IP bucket of 120/min for calls without a valid key, headers on every response,
// and none of it on the admin API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../services/api/server';
import { serverUrl } from '../support/servers';
import { bearer, call, freshLoopbackAddress, intHeader, type HttpAnswer } from './support-instances/http';
import { ADMIN_TOKEN as ADMIN, Admin, startInstance, startSharedServers, type SharedServersHandle } from './support-instances/instances';

const databaseUrl = serverUrl('postgres');
const redisUrl = serverUrl('redis');

function expectRateHeaders(answer: HttpAnswer, limit: number, remaining: number) {
  expect(intHeader(answer, 'RateLimit-Limit'), 'RateLimit-Limit').toBe(limit);
  expect(intHeader(answer, 'RateLimit-Remaining'), 'RateLimit-Remaining').toBe(remaining);
  const reset = intHeader(answer, 'RateLimit-Reset');
  expect(reset, 'RateLimit-Reset').toBeGreaterThanOrEqual(0);
  expect(reset).toBeLessThanOrEqual(60);
}

function expectRateLimited(answer: HttpAnswer) {
  expect(answer.status).toBe(429);
  expect(answer.body.error).toMatchObject({ code: 'rate_limited', type: 'rate_limit_error', retryable: true });
  const retryAfter = intHeader(answer, 'Retry-After');
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(answer.body.error.retry_after_seconds).toBe(retryAfter);
  expect(intHeader(answer, 'RateLimit-Remaining')).toBe(0);
  expect(answer.body.meta.credits_charged).toBe(0);
}

describe.skipIf(!databaseUrl || !redisUrl)('rate limits on two instances sharing Redis', () => {
  let servers: SharedServersHandle;
  let a: RunningServer;
  let b: RunningServer;
  let admin: Admin;
  /** A and B in turn: every bucket below is shared through Redis. */
  const instance = (i: number) => (i % 2 === 0 ? a : b);

  beforeAll(async () => {
    servers = await startSharedServers(redisUrl!);
    a = await startInstance(servers);
    b = await startInstance(servers);
    admin = new Admin(a.url);
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await servers?.close();
  });

  it('a key of 5 per minute counts down 4..0 across both instances, then gets 429 and is not charged', async () => {
    const { key, workspaceId } = await admin.keyedWorkspace({ credits: 100, rate_limit_per_minute: 5 });
    const lookup = (i: number) => call(instance(i).url, '/v1/company', { headers: bearer(key), body: { url: 'acme-robotics' } });

    let lastReset = 0;
    for (let i = 0; i < 5; i++) {
      const answer = await lookup(i);
      expect(answer.status).toBe(200);
      expectRateHeaders(answer, 5, 4 - i);
      // One token comes back every 12 s: each request moves "full again" 12 s further out.
      const reset = intHeader(answer, 'RateLimit-Reset');
      expect(reset).toBeGreaterThan(lastReset);
      lastReset = reset;
    }
    // An empty bucket is a minute from full, less what trickled back while these ran.
    expect(lastReset).toBeGreaterThanOrEqual(55);
    expect(lastReset).toBeLessThanOrEqual(60);
    const balance = (await admin.workspace(workspaceId)).balance;
    expect(balance).toBe(95);

    for (let i = 5; i < 8; i++) {
      const refused = await lookup(i);
      expectRateLimited(refused);
      expect(intHeader(refused, 'RateLimit-Limit')).toBe(5);
      // About 12 s until one token is back (a little less, as the bucket refills).
      expect(intHeader(refused, 'Retry-After')).toBeLessThanOrEqual(12);
      expect(refused.headers['x-request-id']).toBe(refused.body.meta.request_id);
      expect(refused.body.meta.credits_remaining).toBe(balance);
    }
    expect((await admin.workspace(workspaceId)).balance).toBe(balance);
  });

  it("every response with a valid key, errors included, takes a token from the key's bucket and carries the headers", async () => {
    const { key } = await admin.keyedWorkspace({ credits: 10, rate_limit_per_minute: 10 });
    const calls: Array<[string, (i: number) => Promise<HttpAnswer>, number, string?]> = [
      ['cache area', (i) => call(instance(i).url, '/v1/cache/stats', { headers: bearer(key) }), 200],
      ['invalid body', (i) => call(instance(i).url, '/v1/company', { headers: bearer(key), body: {} }), 400, 'invalid_request'],
      ['bad reference', (i) => call(instance(i).url, '/v1/company', { headers: bearer(key), body: { url: 'https://linkedin.com/in/jane' } }), 400, 'invalid_company_reference'],
      ['unknown path', (i) => call(instance(i).url, '/v1/nothing-here', { headers: bearer(key) }), 404, 'route_not_found'],
      ['wrong method', (i) => call(instance(i).url, '/v1/company', { headers: { 'x-api-key': key } }), 404, 'route_not_found'],
    ];
    for (const [i, [what, send, status, code]] of calls.entries()) {
      const answer = await send(i);
      expect(answer.status, what).toBe(status);
      if (code) expect(answer.body.error.code, what).toBe(code);
      expectRateHeaders(answer, 10, 9 - i);
      expect(answer.headers['x-request-id'], what).toMatch(/^req_[0-9A-HJKMNP-TV-Z]{26}$/);
    }
  });

  it('calls without a valid key (401, unknown routes, the Meta area) share a per-IP bucket of 120', async () => {
    const { key } = await admin.keyedWorkspace({ credits: 10 });
    const from = freshLoopbackAddress();
    const keyless: Array<[string, (i: number) => Promise<HttpAnswer>, number, string?]> = [
      ['meta: health', (i) => call(instance(i).url, '/v1/health', { localAddress: from }), 200],
      ['meta: pricing', (i) => call(instance(i).url, '/v1/pricing', { localAddress: from }), 200],
      ['no key', (i) => call(instance(i).url, '/v1/company', { localAddress: from, body: { url: 'globex' } }), 401, 'unauthorized'],
      ['malformed key', (i) => call(instance(i).url, '/v1/cache/stats', { localAddress: from, headers: bearer('lk_live_short') }), 401, 'unauthorized'],
      ['unknown key', (i) => call(instance(i).url, '/v1/cache/stats', { localAddress: from, headers: bearer(`lk_live_${'Z'.repeat(32)}`) }), 401, 'unauthorized'],
      ['unknown path, no key', (i) => call(instance(i).url, '/v1/nothing-here', { localAddress: from }), 404, 'route_not_found'],
      // The Meta area is public: a key sent along changes nothing.
      ['meta with a key', (i) => call(instance(i).url, '/v1/health', { localAddress: from, headers: bearer(key) }), 200],
    ];
    for (const [i, [what, send, status, code]] of keyless.entries()) {
      const answer = await send(i);
      expect(answer.status, what).toBe(status);
      if (code) expect(answer.body.error.code, what).toBe(code);
      if (status === 401) expect(answer.body.meta).toMatchObject({ credits_charged: 0, credits_remaining: null });
      expectRateHeaders(answer, 120, 119 - i);
    }

    // A call with a valid key from the same address draws on the key's bucket, not the address's.
    const keyed = await call(a.url, '/v1/cache/stats', { localAddress: from, headers: bearer(key) });
    expectRateHeaders(keyed, 600, 599);
    const after = await call(b.url, '/v1/health', { localAddress: from });
    expectRateHeaders(after, 120, 119 - keyless.length);
  });

  it('the per-IP bucket runs out after about 120 calls and then answers 429 with Retry-After', async () => {
    const from = freshLoopbackAddress();
    let allowed = 0;
    let refused: HttpAnswer | undefined;
    // The bucket refills at 2 per second, so a few more than 120 may pass while this runs.
    for (let i = 0; i < 140 && !refused; i++) {
      const answer = await call(instance(i).url, '/v1/health', { localAddress: from });
      if (answer.status === 200) allowed++;
      else refused = answer;
    }
    expect(refused, 'no 429 within 140 calls').toBeDefined();
    expectRateLimited(refused!);
    expect(intHeader(refused!, 'RateLimit-Limit')).toBe(120);
    expect(allowed).toBeGreaterThanOrEqual(120);
    expect(allowed).toBeLessThan(140);
  });

  it('the admin API carries no RateLimit headers and draws on no bucket', async () => {
    const from = freshLoopbackAddress();
    const before = await call(a.url, '/v1/health', { localAddress: from });
    expectRateHeaders(before, 120, 119);

    const ws = await admin.createWorkspace({ credits: 5 });
    const adminCalls = [
      () => call(a.url, `/admin/v1/workspaces/${ws.id}`, { localAddress: from, headers: bearer(ADMIN) }),
      () => call(b.url, `/admin/v1/workspaces/${ws.id}/keys`, { localAddress: from, headers: bearer(ADMIN) }),
      () => call(a.url, `/admin/v1/workspaces/${ws.id}/keys`, { localAddress: from, headers: bearer(ADMIN), body: { rate_limit_per_minute: 5 } }),
      // Refused admin calls are no different.
      () => call(b.url, `/admin/v1/workspaces/${ws.id}`, { localAddress: from, headers: bearer('not-the-admin-token-at-all') }),
      () => call(a.url, `/admin/v1/workspaces/ws_unknown`, { localAddress: from, headers: bearer(ADMIN) }),
    ];
    const statuses = [];
    for (const send of adminCalls) {
      const answer = await send();
      statuses.push(answer.status);
      for (const header of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) {
        expect(answer.headers[header], `${header} on admin ${answer.status}`).toBeUndefined();
      }
    }
    expect(statuses).toEqual([200, 200, 201, 401, 404]);

    const after = await call(b.url, '/v1/health', { localAddress: from });
    expectRateHeaders(after, 120, 118);
  });
});
