// The OpenAPI document against the answers themselves. Every route suite's answers are checked as
// they come (support.ts); here, the checker is shown to refuse what is not documented, and every
// documented operation is called while Redis is out and while PostgreSQL is out, whose answers
// the other suites never see.
import { parseList, type Item } from 'structured-headers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../contracts/openapi';
import { SESSION_COOKIE } from '../../contracts/console';
import { createPgSql } from '../../services/eventstore/sql-pg';
import type { Answer, RouteApp } from './support';
import { conformance, startRouteApp } from './support';

/** Nothing listens on port 1: every connection is refused at once. */
const CLOSED_PORT = 1;
const KEY_SHAPED = `Bearer lk_live_${'a'.repeat(32)}`;
const SESSION_SHAPED = `${SESSION_COOKIE}=${'s'.repeat(43)}`;

/**
 * One call of every documented operation, with a key and a session cookie of the right shape; an
 * answer not as documented fails the call (support.ts), and each such failure is kept.
 */
async function callEveryOperation(t: RouteApp): Promise<{ answers: Map<string, Answer>; mismatches: string[] }> {
  const answers = new Map<string, Answer>();
  const mismatches: string[] = [];
  for (const op of conformance.allOperations()) {
    const url = op.path.replace(/\{\w+\}/g, 'key_00000000000000000000000000').concat(op.path.includes('invitations/preview') ? '?token=unknown' : '');
    try {
      const answer = (await t.app.inject({
        method: op.method as 'GET',
        url,
        headers: { authorization: KEY_SHAPED, cookie: SESSION_SHAPED, ...(op.node.requestBody ? { 'content-type': 'application/json' } : {}) },
        ...(op.node.requestBody ? { payload: '{}' } : {}),
      })) as Answer;
      answers.set(`${op.method} ${op.path}`, answer);
    } catch (err) {
      mismatches.push((err as Error).message);
    }
  }
  return { answers, mismatches };
}

describe('the checker', () => {
  let t: RouteApp;
  beforeAll(async () => {
    t = await startRouteApp();
  }, 60_000);
  afterAll(async () => t?.close());

  it('checks against the document GET /v1/openapi.json serves, console part included', async () => {
    const served = (await t.call('GET', '/v1/openapi.json')).json();
    const serverUrl = served.servers[0].url as string;
    expect(served).toEqual(buildOpenApiDocument({ serverUrl }));
    expect(Object.keys(served.paths).some((path) => path.startsWith('/console/v1/'))).toBe(true);
  });

  it('refuses a status, a body or a missing required header the document does not have', async () => {
    const pricing = await t.call('GET', '/v1/pricing');
    expect(conformance.mismatches('GET', '/v1/pricing', pricing)).toEqual([]);
    expect(conformance.mismatches('GET', '/v1/pricing', { ...pricing, statusCode: 418 } as Answer)[0]).toMatch(/status not in the document/);
    expect(conformance.mismatches('GET', '/v1/pricing', { ...pricing, body: '{"nothing":1}' } as Answer)[0]).toMatch(/body/);
    const { 'ratelimit-limit': _dropped, ...headers } = pricing.headers;
    expect(conformance.mismatches('GET', '/v1/pricing', { ...pricing, headers } as Answer)).toEqual(['GET /v1/pricing 200: required header RateLimit-Limit missing']);
    expect(conformance.mismatches('GET', '/v1/pricing', { ...pricing, headers: { ...pricing.headers, 'content-type': 'text/plain' } } as Answer)[0]).toMatch(/content type/);
  });

  it('an unknown invitation token: 404 not_found, at the preview and at the accept', async () => {
    const preview = await t.call('GET', '/console/v1/invitations/preview?token=no-such-token');
    expect([preview.statusCode, preview.json().error.code]).toEqual([404, 'not_found']);
    const accept = await t.call('POST', '/console/v1/invitations/accept', { body: { token: 'no-such-token', password: 'a long enough password 1' } });
    expect([accept.statusCode, accept.json().error.code]).toEqual([404, 'not_found']);
  });

  it('every documented operation answers as documented to a call of the right shape', async () => {
    const { answers, mismatches } = await callEveryOperation(t);
    expect(mismatches).toEqual([]);
    expect(answers.size).toBe(conformance.allOperations().length);
  });
});

describe('Redis out (REDIS_URL at a closed port)', () => {
  let t: RouteApp;
  let answers: Map<string, Answer>;
  let mismatches: string[];
  beforeAll(async () => {
    t = await startRouteApp({ env: { REDIS_URL: `redis://127.0.0.1:${CLOSED_PORT}` }, redisLimits: true });
    ({ answers, mismatches } = await callEveryOperation(t));
  }, 60_000);
  afterAll(async () => t?.close());

  it('every answer is as the document says', () => {
    expect(mismatches).toEqual([]);
  });

  it('every operation on a bucket answers 503 service_unavailable with Retry-After and its RateLimit headers', () => {
    for (const [operation, answer] of answers) {
      if (operation === 'GET /v1/health' || operation === 'GET /v1/health/ready') continue;
      expect([operation, answer.statusCode, answer.json().error.code]).toEqual([operation, 503, 'service_unavailable']);
      expect(answer.headers['retry-after'], operation).toBeDefined();
      expect(answer.headers['ratelimit-remaining'], operation).toBe('0');
      // The structured field says the same: nothing left, back after Retry-After.
      const [[, params]] = parseList(String(answer.headers.ratelimit)) as [Item];
      expect([params.get('r'), params.get('t')], operation).toEqual([0, Number(answer.headers['retry-after'])]);
    }
  });

  it('the probes answer without a bucket: health without RateLimit headers, readiness never with them', () => {
    const health = answers.get('GET /v1/health')!;
    expect([health.statusCode, health.headers['ratelimit-limit']]).toEqual([200, undefined]);
    const ready = answers.get('GET /v1/health/ready')!;
    expect([ready.statusCode, ready.headers['ratelimit-limit']]).toEqual([200, undefined]);
  });
});

describe('PostgreSQL out (DATABASE_URL at a closed port)', () => {
  let t: RouteApp;
  let answers: Map<string, Answer>;
  let mismatches: string[];
  beforeAll(async () => {
    t = await startRouteApp({ sql: createPgSql(`postgresql://postgres@127.0.0.1:${CLOSED_PORT}/test`, { connectionTimeoutMillis: 1_000 }) });
    ({ answers, mismatches } = await callEveryOperation(t));
  }, 60_000);
  afterAll(async () => t?.close());

  it('every answer is as the document says', () => {
    expect(mismatches).toEqual([]);
  });

  it('what needs the database answers 503 service_unavailable; nothing answers 500', () => {
    for (const [operation, answer] of answers) expect([operation, answer.statusCode]).not.toEqual([operation, 500]);
    expect(answers.get('POST /v1/company')!.json().error.code).toBe('service_unavailable');
    expect(answers.get('GET /v1/cache/stats')!.json().error.code).toBe('service_unavailable');
    expect(answers.get('GET /console/v1/overview')!.json().error.code).toBe('service_unavailable');
    expect(answers.get('GET /console/v1/invitations/preview')!.json().error.code).toBe('service_unavailable');
  });

  it('health answers 503 degraded in its own body; readiness and the static documents answer 200', () => {
    const health = answers.get('GET /v1/health')!;
    expect([health.statusCode, health.json().status]).toEqual([503, 'degraded']);
    for (const operation of ['GET /v1/health/ready', 'GET /v1/pricing', 'GET /v1/openapi.json', 'GET /v1/errors']) expect([operation, answers.get(operation)!.statusCode]).toEqual([operation, 200]);
  });
});
