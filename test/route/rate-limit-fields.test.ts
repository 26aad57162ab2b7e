// The structured fields RateLimit-Policy and RateLimit (docs/api.md, Limits), parsed as RFC 9651
// structured fields by a library, against the contract's RateLimit-Limit/-Remaining/-Reset of the
// same answer: on a key's bucket, the client address's, the console's, a refusal, and the raw
// answers written to the socket before a request exists.
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { parseList, type Item } from 'structured-headers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANONYMOUS_RATE_PER_MINUTE } from '../../contracts/endpoints';
import { errorOf, startRouteApp, type RouteApp } from './support';

let t: RouteApp;
beforeAll(async () => {
  t = await startRouteApp();
}, 60_000);
afterAll(async () => t?.close());

let lastAddress = 0;
const freshAddress = () => `10.30.${Math.floor(++lastAddress / 250)}.${(lastAddress % 250) + 1}`;

type Headers = Record<string, string | string[] | number | undefined>;

/** The one item of a structured list field, as [name, parameters]. */
function onlyItem(value: unknown): [unknown, Record<string, unknown>] {
  expect(typeof value).toBe('string');
  const list = parseList(value as string);
  expect(list).toHaveLength(1);
  const [name, params] = list[0] as Item;
  return [name, Object.fromEntries(params)];
}

/** Both fields parsed, checked to describe the bucket the contract's three headers describe. */
function fieldsOf(headers: Headers) {
  const [policyName, policy] = onlyItem(headers['ratelimit-policy']);
  const [limitName, limit] = onlyItem(headers.ratelimit);
  expect(limitName).toBe(policyName);
  expect(policy).toEqual({ q: Number(headers['ratelimit-limit']), w: 60 });
  expect(limit.r).toBe(Number(headers['ratelimit-remaining']));
  return { bucket: policyName, q: policy.q, r: limit.r, t: limit.t };
}

describe('200', () => {
  it("a key's call: the key's bucket, q its rate, r what is left, t the seconds until it is full", async () => {
    const { headers } = await t.keyed({ rateLimitPerMinute: 30 });
    const first = await t.call('GET', '/v1/cache/stats', { headers });
    expect(first.statusCode).toBe(200);
    expect(fieldsOf(first.headers)).toEqual({ bucket: 'key', q: 30, r: 29, t: 2 });
    const second = await t.call('GET', '/v1/cache/stats', { headers });
    expect(fieldsOf(second.headers)).toMatchObject({ bucket: 'key', q: 30, r: 28, t: Number(second.headers['ratelimit-reset']) });
  });

  it("a call without a key: the client address's bucket", async () => {
    const answer = await t.app.inject({ method: 'GET', url: '/v1/pricing', remoteAddress: freshAddress() });
    expect(fieldsOf(answer.headers)).toEqual({ bucket: 'ip', q: ANONYMOUS_RATE_PER_MINUTE, r: ANONYMOUS_RATE_PER_MINUTE - 1, t: 1 });
  });

  it("a console page: the console's bucket", async () => {
    const answer = await t.app.inject({ method: 'GET', url: '/console', remoteAddress: freshAddress() });
    expect(answer.statusCode).toBe(200);
    expect(fieldsOf(answer.headers)).toMatchObject({ bucket: 'console', q: 600, r: 599 });
  });
});

describe('401 unauthorized', () => {
  it("a made-up key is on the client address's bucket", async () => {
    const answer = await t.app.inject({
      method: 'GET',
      url: '/v1/cache/stats',
      headers: { authorization: `Bearer lk_live_${'b'.repeat(32)}` },
      remoteAddress: freshAddress(),
    });
    expect(answer.statusCode).toBe(401);
    expect(fieldsOf(answer.headers).bucket).toBe('ip');
  });
});

describe('429 rate_limited', () => {
  it('a refusal: r is 0 and t is Retry-After, never later (the draft: Retry-After not before t)', async () => {
    const { headers } = await t.keyed({ rateLimitPerMinute: 2 });
    await t.call('GET', '/v1/cache/stats', { headers });
    await t.call('GET', '/v1/cache/stats', { headers });
    const refused = await t.call('GET', '/v1/cache/stats', { headers });
    expect(errorOf(refused)).toMatchObject({ status: 429, code: 'rate_limited' });
    const fields = fieldsOf(refused.headers);
    expect(fields).toMatchObject({ bucket: 'key', q: 2, r: 0 });
    expect(fields.t).toBe(Number(refused.headers['retry-after']));
    // RateLimit-Reset still says when the bucket is full, which is later.
    expect(Number(refused.headers['ratelimit-reset'])).toBeGreaterThan(fields.t as number);
  });
});

describe('400 before a request exists (written to the socket)', () => {
  it("a header the HTTP parser refuses: the client address's bucket, both fields parse", async () => {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write('GET /v1/pricing HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\n\r\n'));
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString('latin1');
      });
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    const [statusLine, ...lines] = raw.split('\r\n\r\n')[0]!.split('\r\n');
    expect(statusLine).toMatch(/^HTTP\/1\.1 400 /);
    const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
    expect(fieldsOf(headers)).toMatchObject({ bucket: 'ip', q: ANONYMOUS_RATE_PER_MINUTE });
  });
});
