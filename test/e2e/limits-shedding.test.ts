// Load shedding over HTTP: an instance past MAX_IN_FLIGHT refuses new lookups with 503
// no_capacity and Retry-After, before anything is charged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../services/api/server';
import { serverUrl } from '../support/servers';
import { bearer, call, intHeader } from './support-instances/http';
import { Admin, eventually, startInstance, startSharedServers, type SharedServersHandle } from './support-instances/instances';

const databaseUrl = serverUrl('postgres');
const redisUrl = serverUrl('redis');

describe.skipIf(!databaseUrl || !redisUrl)('load shedding with MAX_IN_FLIGHT=1', () => {
  let servers: SharedServersHandle;
  let instance: RunningServer;
  let admin: Admin;

  beforeAll(async () => {
    servers = await startSharedServers(redisUrl!);
    instance = await startInstance(servers, { MAX_IN_FLIGHT: '1' });
    admin = new Admin(instance.url);
  });

  afterAll(async () => {
    await instance?.close();
    await servers?.close();
  });

  it('admits one lookup at a time; the others get 503 no_capacity with Retry-After and pay nothing', async () => {
    const { key, workspaceId } = await admin.keyedWorkspace({ credits: 20 });
    const slow = () => call(instance.url, '/v1/company', { headers: bearer(key), body: { url: 'sandbox-slow', max_age: 0 } });
    const withKey = (k: string) => call(instance.url, '/v1/company', { headers: { ...bearer(key), 'idempotency-key': k }, body: { url: 'sandbox-slow', max_age: 0 } });

    const hitsBefore = servers.sourceHits();
    const first = slow();
    // Once the source has the first request it is admitted (and waits ~2 s); everything after it is refused at once.
    expect(await eventually(async () => servers.sourceHits() > hitsBefore, 5000, 10)).toBe(true);
    const others = await Promise.all([slow(), slow(), withKey('shed-1'), withKey('shed-2')]);
    for (const answer of others) {
      expect(answer.status).toBe(503);
      expect(answer.body.error).toMatchObject({ code: 'no_capacity', type: 'upstream_error', retryable: true });
      const retryAfter = intHeader(answer, 'Retry-After');
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(answer.body.error.retry_after_seconds).toBe(retryAfter);
      expect(answer.body.meta.credits_charged).toBe(0);
      expect(intHeader(answer, 'RateLimit-Limit')).toBe(600);
    }
    expect((await first).status).toBe(200);
    expect((await admin.workspace(workspaceId)).balance).toBe(19);

    // A refused Idempotency-Key was not stored: once there is room it runs.
    const retried = await withKey('shed-1');
    expect(retried.status).toBe(200);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect((await admin.workspace(workspaceId)).balance).toBe(18);
  });

  it('concurrent arrivals are admitted one at a time too (with and without Idempotency-Key)', async () => {
    const { key, workspaceId } = await admin.keyedWorkspace({ credits: 20 });
    const answers = await Promise.all(
      [0, 1, 2, 3, 4, 5].map((i) =>
        call(instance.url, '/v1/company', {
          headers: { ...bearer(key), ...(i % 2 === 0 ? { 'idempotency-key': `burst-${i}` } : {}) },
          body: { url: 'sandbox-slow', max_age: 0 },
        }),
      ),
    );
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 503, 503, 503, 503, 503]);
    expect((await admin.workspace(workspaceId)).balance).toBe(19);
  });
});
