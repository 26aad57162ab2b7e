// End-to-end: readiness, GET /v1/health/ready (issue 13, part 2). Ready on the embedded defaults
// and on real servers; then each check failing on its own, on servers this file owns: the
// database turned read-only, Redis killed, the usage projection held back past
// READY_MAX_LAG_EVENTS. Each time 503 names the failing check, liveness (GET /v1/health) stays
// 200, and readiness comes back once the cause is gone.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServer, type RunningServer } from '../../services/api/server';
import { loadConfig } from '../../services/config/config';
import { subscriptionLockKey } from '../../services/eventstore/subscription';
import { usageProjection } from '../../services/projections/usage';
import { privateServersAvailable, startPrivatePostgres, startPrivateRedis, type PrivatePostgres, type PrivateRedis } from '../support/private-servers';
import { ADMIN_TOKEN, backends, call, startE2eServer, type E2eServer, type HttpResult } from './support/harness';

/** Polls until `done` holds for an answer of GET `path` (a background state takes a moment to show). */
async function eventually(url: string, path: string, done: (res: HttpResult) => boolean, timeoutMs = 30_000): Promise<HttpResult> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await call(url, 'GET', path);
    if (done(res)) return res;
    if (Date.now() > deadline) throw new Error(`GET ${path} still ${res.status} ${res.text} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function expectNotReady(res: HttpResult, check: string) {
  expect(res.status, res.text).toBe(503);
  expect(res.body.status).toBe('degraded');
  expect(res.body.checks[check]).toBe('fail');
  expect(res.body.failures.map((f: { check: string }) => f.check)).toEqual([check]);
  expect(res.body.failures[0].message).toEqual(expect.any(String));
  expect(res.headers.get('x-request-id')).toMatch(/^req_/);
}

describe.each(backends())('readiness on $name', (backend) => {
  describe.skipIf(!backend.available)(`on ${backend.name}`, () => {
    let server: E2eServer;
    beforeAll(async () => {
      server = await startE2eServer(backend);
    }, 60_000);
    afterAll(async () => server?.stop());

    test('ready: every configured check ok, the lag of the usage projection reported; liveness keeps its contract', async () => {
      const ready = await eventually(server.url, '/v1/health/ready', (res) => res.status === 200);
      const expected: Record<string, string> = { database: 'ok', usage_projection: 'ok' };
      if (backend.name === 'PostgreSQL' && process.env.REDIS_URL) expected.redis = 'ok';
      expect(ready.body).toEqual({ status: 'ok', version: '1.0.0', checks: expected, lag_events: { usage_projection: expect.any(Number) }, failures: [] });
      const live = await call(server.url, 'GET', '/v1/health');
      expect(live.body).toEqual({ status: 'ok', version: '1.0.0', checks: { database: 'ok' } });
    });
  });
});

describe.skipIf(!privateServersAvailable(['postgres', 'redis'], 'readiness: each failing check'))('readiness: each failing check', () => {
  let postgres: PrivatePostgres;
  let redis: PrivateRedis;
  let running: RunningServer;
  let dataDir: string;

  beforeAll(async () => {
    [postgres, redis] = await Promise.all([startPrivatePostgres(), startPrivateRedis()]);
    dataDir = mkdtempSync(join(tmpdir(), 'lookup-ready-'));
    running = await startServer(
      loadConfig({
        PORT: '0',
        DATABASE_URL: postgres.url,
        REDIS_URL: redis.url,
        DATA_DIR: dataDir,
        ADMIN_TOKEN,
        LOG_LEVEL: 'silent',
        MAX_EVENT_LOOP_DELAY_MS: '60000',
        // Any event the usage projection has not taken is lag: the test holds it back on purpose.
        READY_MAX_LAG_EVENTS: '0',
      }),
    );
    await eventually(running.url, '/v1/health/ready', (res) => res.status === 200);
  }, 120_000);

  afterAll(async () => {
    await running?.close();
    await Promise.all([postgres?.destroy(), redis?.destroy()]);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const superuser = async <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  };

  test('the database read-only: 503 naming `database`; back to 200 when it takes writes again', async () => {
    await superuser(async (c) => {
      await c.query('ALTER SYSTEM SET default_transaction_read_only = on');
      await c.query('SELECT pg_reload_conf()');
    });
    try {
      expectNotReady(await eventually(running.url, '/v1/health/ready', (res) => res.status !== 200), 'database');
      // Liveness is not readiness: the process answers and the database answers reads.
      expect((await call(running.url, 'GET', '/v1/health')).status).toBe(200);
    } finally {
      await superuser(async (c) => {
        await c.query('ALTER SYSTEM RESET default_transaction_read_only');
        await c.query('SELECT pg_reload_conf()');
      });
    }
    await eventually(running.url, '/v1/health/ready', (res) => res.status === 200);
  }, 60_000);

  test('Redis killed: 503 naming `redis`; back to 200 once it runs again', async () => {
    await redis.kill();
    try {
      const res = await eventually(running.url, '/v1/health/ready', (r) => r.status !== 200);
      expectNotReady(res, 'redis');
      // Unmetered: answered without the Redis bucket, so it can say Redis is what fails.
      expect(res.headers.get('ratelimit-limit')).toBeNull();
    } finally {
      await redis.start();
    }
    await eventually(running.url, '/v1/health/ready', (res) => res.status === 200);
  }, 60_000);

  test('the usage projection held back past READY_MAX_LAG_EVENTS: 503 naming `usage_projection` with its lag; 200 once it catches up', async () => {
    // Holding the subscription's lock keeps every instance's usage projection from taking a batch.
    const holder = new pg.Client({ connectionString: postgres.url });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [subscriptionLockKey(usageProjection.name)]);
      // A workspace and a key: events the projection has not processed.
      const created = await call(running.url, 'POST', '/admin/v1/workspaces', { json: { name: 'lag', credits: 5 }, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(created.status).toBe(201);
      const res = await eventually(running.url, '/v1/health/ready', (r) => r.status !== 200);
      expectNotReady(res, 'usage_projection');
      expect(res.body.lag_events.usage_projection).toBeGreaterThanOrEqual(1);
      expect(res.body.checks).toMatchObject({ database: 'ok', redis: 'ok' });
    } finally {
      await holder.query('SELECT pg_advisory_unlock_all()');
      await holder.end();
    }
    const back = await eventually(running.url, '/v1/health/ready', (r) => r.status === 200);
    expect(back.body.lag_events.usage_projection).toBe(0);
  }, 60_000);
});
