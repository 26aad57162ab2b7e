// Admission `public` alone: no key read, and each rate-limit policy of the route table on its own
// (`bucket`: the client address's; `none`: the readiness probe; `bucket_when_reachable`: the
// liveness probe; `console`: the console's own bucket), plus the same-origin rule of sign-in.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANONYMOUS_RATE_PER_MINUTE, CONSOLE_RATE_PER_MINUTE } from '../../../contracts/endpoints';
import { errorOf } from '../support';
import { startAdmissionApp, whileUnreachable, type AdmissionApp } from './support';

const ROWS = ['pricing', 'health', 'ready', 'consoleSignIn', 'consoleSignInPage'] as const;
let t: AdmissionApp;
beforeAll(async () => {
  t = await startAdmissionApp(ROWS);
}, 120_000);
afterAll(async () => t?.close());

let lastAddress = 0;
const freshAddress = () => `10.30.${Math.floor(++lastAddress / 250)}.${(lastAddress % 250) + 1}`;
const signIn = { workspace_id: 'ws_x', email: 'someone@example.org', password: 'a long enough password' };

describe('200', () => {
  it('`bucket`: a token of the client address, with RateLimit headers; a key sent is not read', async () => {
    const remoteAddress = freshAddress();
    const answer = await t.call({ method: 'GET', url: '/v1/pricing', remoteAddress, headers: { authorization: `Bearer lk_live_${'a'.repeat(32)}` } });
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toEqual({ key: null, member: null });
    expect(answer.headers['ratelimit-limit']).toBe(String(ANONYMOUS_RATE_PER_MINUTE));
    expect(answer.headers['ratelimit-remaining']).toBe(String(ANONYMOUS_RATE_PER_MINUTE - 1));
  });

  it('`none`: no bucket, no RateLimit headers, however often it is asked', async () => {
    const remoteAddress = freshAddress();
    for (let i = 0; i < ANONYMOUS_RATE_PER_MINUTE + 5; i++) {
      const answer = await t.call({ method: 'GET', url: '/v1/health/ready', remoteAddress });
      expect(answer.statusCode).toBe(200);
      expect(answer.headers['ratelimit-limit']).toBeUndefined();
    }
  });

  it('`bucket_when_reachable`: answered while the bucket cannot be read, without RateLimit headers', async () => {
    const answer = await whileUnreachable(t.limiter, () => t.call({ method: 'GET', url: '/v1/health' }));
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['ratelimit-limit']).toBeUndefined();
  });

  it('`console`: the console page on its own bucket per address', async () => {
    const answer = await t.call({ method: 'GET', url: '/console', remoteAddress: freshAddress() });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['ratelimit-limit']).toBe(String(CONSOLE_RATE_PER_MINUTE));
  });

  it('sign-in from this origin, or from a client that sends no Origin', async () => {
    for (const headers of [{ origin: 'http://localhost:3000' }, {}]) {
      const answer = await t.call({ method: 'POST', url: '/console/v1/session', headers: { host: 'localhost:3000', ...headers }, payload: signIn });
      expect(answer.statusCode, answer.body).toBe(200);
    }
  });
});

describe('403 forbidden', () => {
  it('sign-in from a page of another origin (reason csrf)', async () => {
    const answer = await t.call({ method: 'POST', url: '/console/v1/session', headers: { host: 'localhost:3000', origin: 'https://elsewhere.example' }, payload: signIn });
    expect(errorOf(answer)).toMatchObject({ status: 403, code: 'forbidden' });
    expect(answer.json().error.reason).toBe('csrf');
  });
});

describe('429 rate_limited', () => {
  it('`bucket`: the client address ran dry, said of the address, not of a key', async () => {
    const remoteAddress = freshAddress();
    let refused: Awaited<ReturnType<AdmissionApp['call']>> | undefined;
    for (let i = 0; i < 2 * ANONYMOUS_RATE_PER_MINUTE && !refused; i++) {
      const answer = await t.call({ method: 'GET', url: '/v1/pricing', remoteAddress });
      if (answer.statusCode === 429) refused = answer;
    }
    expect(errorOf(refused!)).toMatchObject({ status: 429, code: 'rate_limited', remaining: null });
    expect(refused!.json().error.message).toMatch(/client address/);
    expect(refused!.headers['retry-after']).toBeDefined();
  });
});

describe('503 service_unavailable', () => {
  it('`bucket` and `console`: the bucket cannot be read, with the RateLimit headers of a refusal', async () => {
    for (const [url, limit] of [['/v1/pricing', ANONYMOUS_RATE_PER_MINUTE], ['/console', CONSOLE_RATE_PER_MINUTE]] as const) {
      const answer = await whileUnreachable(t.limiter, () => t.call({ method: 'GET', url }));
      expect(errorOf(answer), url).toMatchObject({ status: 503, code: 'service_unavailable' });
      expect(answer.headers['ratelimit-limit']).toBe(String(limit));
      expect(answer.headers['ratelimit-remaining']).toBe('0');
    }
  });
});
