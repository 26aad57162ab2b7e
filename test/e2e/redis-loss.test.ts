// Redis lost under load (ADR 0008): an instance (a child process) on a Redis of its own
// that the test SIGKILLs for ~3 s while ~20 clients keep looking up. Nothing answers 500 and the
// process does not exit: while Redis is out, calls answer at once 503 service_unavailable with
// Retry-After and nothing charged; once it is back they succeed again with no restart, and the
// money reconciles. A slot release that fails after a lookup ended never changes its answer.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privateServersAvailable, startPrivateRedis, type PrivateRedis } from '../support/private-servers';
import { serverUrl } from '../support/servers';
import { bearer, call, type HttpAnswer } from './support-instances/http';
import { Admin, ADMIN_TOKEN, eventually, startChildInstance, startSharedServers, type ChildInstance, type SharedServersHandle } from './support-instances/instances';

const databaseUrl = serverUrl('postgres');
const redisAvailable = privateServersAvailable(['redis'], 'Redis lost under load');

const CLIENTS = 20;
const OUTAGE_MS = 3_000;
/** Long enough for the test to see the lookup hold its slot and kill Redis before it ends. */
const SOURCE_TIMEOUT_MS = 3_000;

/** A 503 of a limiter that cannot reach Redis: the catalogue's entry, Retry-After, nothing charged. */
function expectServiceUnavailable(answer: HttpAnswer, area: 'api' | 'admin' = 'api') {
  expect(answer.status, JSON.stringify(answer.body)).toBe(503);
  expect(answer.body.error).toMatchObject({ code: 'service_unavailable', type: 'api_error', retryable: true });
  const retryAfter = answer.body.error.retry_after_seconds;
  expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true);
  expect(answer.headers['retry-after']).toBe(String(retryAfter));
  expect(answer.body.meta.credits_charged).toBe(0);
  expect(answer.headers['x-request-id']).toBe(answer.body.meta.request_id);
  // The admin area draws on no bucket (docs/api.md "Limits"), so it has no RateLimit-* headers.
  if (area === 'admin') return;
  // "All responses" carry RateLimit-*. A bucket that could not be read says 0 left until the retry;
  // a call whose token was taken before Redis went (its slot could not be) says what was left.
  const limit = Number(answer.headers['ratelimit-limit']);
  const remaining = Number(answer.headers['ratelimit-remaining']);
  expect(limit).toBeGreaterThan(0);
  expect(Number.isInteger(remaining) && remaining >= 0 && remaining <= limit).toBe(true);
  if (remaining === 0) expect(answer.headers['ratelimit-reset']).toBe(String(retryAfter));
}

const isServiceUnavailable = (answer: HttpAnswer) => answer.status === 503 && answer.body?.error?.code === 'service_unavailable';

describe.skipIf(!databaseUrl || !redisAvailable)('Redis lost under load', () => {
  let redis: PrivateRedis;
  let servers: SharedServersHandle;
  let instance: ChildInstance;
  let admin: Admin;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    servers = await startSharedServers(redis.url);
    // Load shedding by event-loop delay stays out of the way on a busy 2-core machine; info shows
    // the Redis connection's recovery line.
    instance = await startChildInstance(servers, {
      SOURCE_TIMEOUT_MS: String(SOURCE_TIMEOUT_MS),
      MAX_EVENT_LOOP_DELAY_MS: '60000',
      LOG_LEVEL: 'info',
    });
    admin = new Admin(instance.url);
  }, 60_000);

  afterAll(async () => {
    await instance?.stop();
    await servers?.close();
    await redis?.destroy();
  });

  const expectAlive = () =>
    expect({ exitCode: instance.process.exitCode, signal: instance.process.signalCode }, instance.output()).toEqual({ exitCode: null, signal: null });

  it(`~${CLIENTS} clients, Redis killed for ${OUTAGE_MS / 1000} s: no 500, 503 service_unavailable meanwhile, 200 again after, money reconciles`, async () => {
    const initialCredits = 100_000;
    const { key, workspaceId } = await admin.keyedWorkspace({ credits: initialCredits, max_concurrency: 100, rate_limit_per_minute: 100_000 });
    type Phase = 'before' | 'outage' | 'after';
    let phase: Phase = 'before';
    let stop = false;
    const answers: Array<{ phase: Phase; answer: HttpAnswer; ms: number }> = [];
    const okSentIn = (p: Phase) => answers.filter((a) => a.phase === p && a.answer.status === 200).length;

    // Every fifth client waits on the slow source (2 s), so lookups hold their slots when Redis dies.
    const client = async (i: number) => {
      const body = i % 5 === 0 ? { url: 'sandbox-slow', max_age: 0 } : { url: i % 2 ? 'acme-robotics' : 'globex', max_age: 0 };
      while (!stop) {
        const sentIn = phase;
        const sentAt = performance.now();
        const answer = await call(instance.url, '/v1/company', { headers: bearer(key), body });
        answers.push({ phase: sentIn, answer, ms: performance.now() - sentAt });
        // A well-behaved client honours Retry-After.
        const retryAfter = Number(answer.headers['retry-after'] ?? 0);
        if (answer.status !== 200 && retryAfter > 0) await sleep(retryAfter * 1000);
      }
    };
    const clients = Array.from({ length: CLIENTS }, (_, i) => client(i));

    try {
      expect(await eventually(async () => okSentIn('before') >= 2 * CLIENTS, 30_000), `no load before the outage:\n${instance.output()}`).toBe(true);
      await redis.kill();
      phase = 'outage';
      // Liveness stays a liveness answer: the process lives, whatever Redis does; the rest of the
      // Meta area, whose per-IP bucket cannot be read, is refused like any other call.
      const health = await call(instance.url, '/v1/health');
      expect(health.status, JSON.stringify(health.body)).toBe(200);
      expect(health.body.status).toBe('ok');
      expect(health.headers['ratelimit-limit']).toBeUndefined();
      expectServiceUnavailable(await call(instance.url, '/v1/pricing'));
      await sleep(OUTAGE_MS);
      await redis.start();
      phase = 'after';
      // Recovered by itself: lookups sent after the restart succeed again.
      expect(await eventually(async () => okSentIn('after') >= 2 * CLIENTS, 30_000), `no recovery:\n${instance.output()}`).toBe(true);
    } finally {
      stop = true;
      await Promise.all(clients);
    }

    expectAlive();
    expect(answers.filter((a) => a.answer.status === 500)).toEqual([]);
    const refused = answers.filter((a) => a.answer.status !== 200);
    // The outage was felt, and every call it failed is a fast, retryable, free 503.
    expect(refused.filter((a) => a.phase === 'outage').length).toBeGreaterThan(0);
    for (const { answer } of refused) expectServiceUnavailable(answer);

    const charged = answers.reduce((sum, a) => sum + a.answer.body.meta.credits_charged, 0);
    expect(charged).toBe(answers.filter((a) => a.answer.status === 200).length);
    expect((await admin.workspace(workspaceId)).balance).toBe(initialCredits - charged);
    const audit = await call(instance.url, '/admin/v1/audit', { method: 'POST', headers: bearer(ADMIN_TOKEN) });
    expect(audit.body).toMatchObject({ ok: true, mismatches: [] });

    // The connection logged the outage once and its end once (not every failed reconnect).
    const log = instance.output();
    expect(log.match(/Redis unavailable \(/g)).toHaveLength(1);
    expect(log).toMatch(/Redis available again after \d+ ms/);
    console.info(
      `redis-loss: ${answers.length} answers, ${answers.length - refused.length} x 200, ${refused.length} x 503 ` +
        `(${refused.filter((a) => a.phase === 'outage').length} sent during the outage; slowest 503 in ` +
        `${Math.round(Math.max(...refused.map((a) => a.ms)))} ms), ${charged} credits charged`,
    );
  }, 90_000);

  it('a lookup that ends 504 timeout while its slot cannot be released still answers 504, and its Idempotency-Key runs anew', async () => {
    const { key, workspaceId } = await admin.keyedWorkspace({ credits: 50 });
    const headers = { ...bearer(key), 'idempotency-key': 'redis-loss-timeout-1' };
    const body = { url: 'sandbox-timeout', max_age: 0 };
    const balance = (await admin.workspace(workspaceId)).balance;

    const hitsBefore = servers.sourceHits();
    let answered = false;
    const pending = call(instance.url, '/v1/company', { headers, body }).finally(() => (answered = true));
    // The source has the request: the lookup holds its slot (taken before the fetch).
    expect(await eventually(async () => servers.sourceHits() > hitsBefore, 10_000, 10), instance.output()).toBe(true);
    await redis.kill();
    expect(answered, 'the lookup ended before Redis was killed: raise SOURCE_TIMEOUT_MS').toBe(false);

    const timedOut = await pending;
    expect(timedOut.status, JSON.stringify(timedOut.body)).toBe(504);
    expect(timedOut.body.error).toMatchObject({ code: 'timeout', type: 'upstream_error', retryable: true });
    expect(timedOut.headers['retry-after']).toBe(String(timedOut.body.error.retry_after_seconds));
    expect(timedOut.body.meta.credits_charged).toBe(0);
    // The release did fail (Redis was out), and was logged with the request id.
    const requestId = timedOut.body.meta.request_id;
    // The release runs after the answer is sent: its log line may follow the answer by a moment.
    const logged = () => instance.output().split('\n').some((line) => line.includes(requestId) && line.includes('concurrency slot not released'));
    expect(await eventually(async () => logged(), 10_000, 50), instance.output()).toBe(true);

    await redis.start();
    // Retried with the same key once the limiter answers again: not 409 in use, a new run.
    let retried: HttpAnswer | undefined;
    const hitsBeforeRetry = servers.sourceHits();
    expect(await eventually(async () => !isServiceUnavailable((retried = await call(instance.url, '/v1/company', { headers, body }))), 20_000, 200)).toBe(true);
    expect(retried!.status, JSON.stringify(retried!.body)).toBe(504);
    expect(retried!.body.error.code).toBe('timeout');
    expect(retried!.headers['idempotent-replayed']).toBeUndefined();
    expect(servers.sourceHits()).toBeGreaterThan(hitsBeforeRetry);
    expect((await admin.workspace(workspaceId)).balance).toBe(balance);
    expectAlive();
  }, 60_000);

  it('a key revoked while Redis is out is never served: the revoke answers 503 until its mark is written, and the key is refused after', async () => {
    const { key, keyId } = await admin.keyedWorkspace({ credits: 50 });
    const stats = () => call(instance.url, '/v1/cache/stats', { headers: bearer(key) });
    const revoke = () => call(instance.url, `/admin/v1/keys/${keyId}/revoke`, { method: 'POST', headers: bearer(ADMIN_TOKEN) });
    expect((await stats()).status).toBe(200);

    await redis.kill();
    // Committed, but not yet marked for the other instances: the caller is told to retry.
    expectServiceUnavailable(await revoke(), 'admin');
    expectServiceUnavailable(await stats());

    await redis.start();
    let after: HttpAnswer | undefined;
    expect(await eventually(async () => !isServiceUnavailable((after = await stats())), 20_000, 200)).toBe(true);
    expect(after!.status).toBe(401);
    expect(after!.body.error.code).toBe('unauthorized');
    const retried = await revoke();
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ id: keyId, revoked_at: expect.any(String) });
    expectAlive();
  }, 60_000);
});
