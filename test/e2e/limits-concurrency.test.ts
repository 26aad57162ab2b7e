// The workspace concurrency cap over HTTP on two instances sharing Redis (docs/api.md "Limits"):
// at most max_concurrency lookups in flight across all instances, the rest 429
// concurrency_limited with Retry-After: 1 and no charge; Cache-area calls are not counted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../services/api/server';
import { serverUrl } from '../support/servers';
import { bearer, call, intHeader, type HttpAnswer } from './support-instances/http';
import { Admin, startInstance, startSharedServers, type SharedServersHandle } from './support-instances/instances';

const databaseUrl = serverUrl('postgres');
const redisUrl = serverUrl('redis');

function expectConcurrencyLimited(answer: HttpAnswer) {
  expect(answer.status).toBe(429);
  expect(answer.body.error).toMatchObject({ code: 'concurrency_limited', type: 'rate_limit_error', retryable: true, retry_after_seconds: 1 });
  expect(answer.headers['retry-after']).toBe('1');
  expect(answer.body.meta.credits_charged).toBe(0);
  expect(intHeader(answer, 'RateLimit-Limit')).toBe(600);
}

/** The first `n` answers that match, as soon as they have arrived (fewer if the rest never match). */
function firstMatching(answers: Promise<HttpAnswer>[], n: number, match: (answer: HttpAnswer) => boolean): Promise<HttpAnswer[]> {
  return new Promise((done, fail) => {
    const seen: HttpAnswer[] = [];
    let settled = 0;
    for (const answer of answers) {
      answer.then((r) => {
        if (match(r) && seen.push(r) === n) done(seen);
        if (++settled === answers.length) done(seen);
      }, fail);
    }
  });
}

describe.skipIf(!databaseUrl || !redisUrl)('concurrency cap on two instances sharing Redis', () => {
  let servers: SharedServersHandle;
  let a: RunningServer;
  let b: RunningServer;
  let admin: Admin;
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

  it('with max_concurrency 2, exactly 2 of 5 concurrent slow lookups run; the others get 429 and pay nothing', async () => {
    const { key, workspaceId } = await admin.keyedWorkspace({ credits: 50 });
    // Both instances know the key (and its workspace's limit of 8) before the limit changes.
    for (let i = 0; i < 4; i++) expect((await call(instance(i).url, '/v1/cache/stats', { headers: bearer(key) })).status).toBe(200);
    expect(await admin.setMaxConcurrency(workspaceId, 2)).toMatchObject({ id: workspaceId, max_concurrency: 2 });
    // The other instance hears of the change by NOTIFY, a moment after the PATCH is answered.
    await new Promise((r) => setTimeout(r, 500));

    const slow = (i: number) =>
      call(instance(i).url, '/v1/company', { headers: bearer(key), body: { url: 'sandbox-slow', max_age: 0 } });
    const started = Date.now();
    const inFlight = [0, 1, 2, 3, 4].map((i) => slow(i));

    // The refused ones answer at once, while the admitted two still wait on the slow source.
    const refused = await firstMatching(inFlight, 3, (r) => r.status === 429);
    expect(refused).toHaveLength(3);
    expect(Date.now() - started).toBeLessThan(1500);
    for (const answer of refused) expectConcurrencyLimited(answer);

    // Slots full: another lookup (search counts too) is refused, the Cache area is not counted.
    expectConcurrencyLimited(await call(a.url, '/v1/search', { headers: bearer(key), body: { query: 'robots' } }));
    expectConcurrencyLimited(await call(b.url, '/v1/company', { headers: bearer(key), body: { url: 'globex' } }));
    for (let i = 0; i < 4; i++) {
      const cacheCall = await call(instance(i).url, '/v1/cache/company', { headers: bearer(key), body: { url: 'sandbox-slow' } });
      expect(cacheCall.status).toBe(200);
      expect(cacheCall.body.meta.credits_charged).toBe(0);
    }

    const answers = await Promise.all(inFlight);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
    const admitted = answers.filter((r) => r.status === 200);
    expect(admitted).toHaveLength(2);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(3);
    for (const ok of admitted) expect(ok.headers['x-credits-charged']).toBe('1');
    expect((await admin.workspace(workspaceId)).balance).toBe(48);

    // Once they are done the slots are free again.
    const after = await call(b.url, '/v1/company', { headers: bearer(key), body: { url: 'acme-robotics' } });
    expect(after.status).toBe(200);
  });
});
