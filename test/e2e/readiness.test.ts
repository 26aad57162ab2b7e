// End-to-end: readiness, GET /v1/health/ready, is about this instance only (ADR 0011).
// Ready on the embedded defaults and on real servers; a shared dependency down or behind (the
// database read-only or stopped, Redis killed, the usage projection held back) leaves it 200, on
// servers this file owns, while the API itself answers 503 where it must; and after SIGTERM an
// instance answers 503 `draining` for DRAIN_DELAY_MS, still serving, then refuses connections and
// exits 0.
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
import { serverUrl } from '../support/servers';
import { ADMIN_TOKEN, backends, call, startE2eServer, type E2eServer, type HttpResult } from './support/harness';
import { call as rawCall } from './support-instances/http';
import { startChildInstance, startSharedServers, type SharedServersHandle } from './support-instances/instances';

/** Polls until `done` holds for an answer of GET `path` (a background state takes a moment to show). */
async function eventually(url: string, path: string, done: (res: HttpResult) => boolean, timeoutMs = 30_000, headers: Record<string, string> = {}): Promise<HttpResult> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await call(url, 'GET', path, { headers });
    if (done(res)) return res;
    if (Date.now() > deadline) throw new Error(`GET ${path} still ${res.status} ${res.text} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const READY = { status: 'ok', version: '1.0.0', checks: { started: 'ok', migrated: 'ok', not_draining: 'ok' }, failures: [] };

async function expectReady(url: string) {
  const res = await call(url, 'GET', '/v1/health/ready');
  expect(res.status, res.text).toBe(200);
  expect(res.body).toEqual(READY);
  expect(res.headers.get('x-request-id')).toMatch(/^req_/);
  expect(res.headers.get('ratelimit-limit')).toBeNull();
}

describe.each(backends())('readiness on $name', (backend) => {
  describe.skipIf(!backend.available)(`on ${backend.name}`, () => {
    let server: E2eServer;
    beforeAll(async () => {
      server = await startE2eServer(backend);
    }, 60_000);
    afterAll(async () => server?.stop());

    test('ready: started, migrated, not draining; liveness keeps its contract', async () => {
      await expectReady(server.url);
      const live = await call(server.url, 'GET', '/v1/health');
      expect(live.body).toEqual({ status: 'ok', version: '1.0.0', checks: { database: 'ok' } });
    });
  });
});

describe.skipIf(!privateServersAvailable(['postgres', 'redis'], 'readiness: shared dependencies down or behind'))('readiness: shared dependencies down or behind', () => {
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
        SOURCE_URL: 'sandbox',
        REDIS_URL: redis.url,
        DATA_DIR: dataDir,
        ADMIN_TOKEN,
        LOG_LEVEL: 'silent',
        MAX_EVENT_LOOP_DELAY_MS: '60000',
      }),
    );
    await expectReady(running.url);
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

  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

  test('the database read-only: still ready', async () => {
    await superuser(async (c) => {
      await c.query('ALTER SYSTEM SET default_transaction_read_only = on');
      await c.query('SELECT pg_reload_conf()');
    });
    try {
      const setting = await superuser(async (c) => (await c.query<{ default_transaction_read_only: string }>('SHOW default_transaction_read_only')).rows[0]!.default_transaction_read_only);
      expect(setting).toBe('on');
      await expectReady(running.url);
    } finally {
      await superuser(async (c) => {
        await c.query('ALTER SYSTEM RESET default_transaction_read_only');
        await c.query('SELECT pg_reload_conf()');
      });
    }
  }, 60_000);

  test('Redis killed: still ready (answered without the Redis bucket); a lookup answers 503', async () => {
    await redis.kill();
    try {
      const refused = await eventually(running.url, '/v1/company', (r) => r.status === 503, 20_000);
      expect(refused.body.error.code).toBe('service_unavailable');
      await expectReady(running.url);
    } finally {
      await redis.start();
    }
  }, 60_000);

  test('the usage projection held back: still ready; its lag is the metric the alert reads', async () => {
    // Holding the subscription's lock keeps every instance's usage projection from taking a batch.
    const holder = new pg.Client({ connectionString: postgres.url });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [subscriptionLockKey(usageProjection.name)]);
      const created = await call(running.url, 'POST', '/admin/v1/workspaces', { json: { name: 'lag', credits: 5 }, headers: admin });
      expect(created.status).toBe(201);
      const metrics = await eventually(running.url, '/metrics', (r) => /^lookup_api_subscription_lag_events\{subscription="usage_projection"\} [1-9]/m.test(r.text), 30_000, admin);
      expect(metrics.status).toBe(200);
      await expectReady(running.url);
    } finally {
      await holder.query('SELECT pg_advisory_unlock_all()');
      await holder.end();
    }
  }, 60_000);

  test('the database stopped: liveness 503, readiness still 200 (answered from memory, asking no dependency)', async () => {
    await postgres.stop('fast');
    try {
      const live = await eventually(running.url, '/v1/health', (r) => r.status === 503, 20_000);
      expect(live.body.checks.database).toBe('fail');
      await expectReady(running.url);
    } finally {
      await postgres.start();
    }
    await eventually(running.url, '/v1/health', (r) => r.status === 200);
  }, 60_000);
});

const databaseUrl = serverUrl('postgres');
const redisUrl = serverUrl('redis');

describe.skipIf(!databaseUrl || !redisUrl)('readiness while draining after SIGTERM', () => {
  let servers: SharedServersHandle;
  beforeAll(async () => {
    servers = await startSharedServers(redisUrl!);
  });
  afterAll(async () => servers?.close());

  test('503 `draining` naming not_draining for DRAIN_DELAY_MS while calls are still served; then connections are refused and the process exits 0', async () => {
    const instance = await startChildInstance(servers, { DRAIN_DELAY_MS: '3000' });
    try {
      expect((await rawCall(instance.url, '/v1/health/ready')).status).toBe(200);
      const exited = new Promise<number | null>((done) => instance.process.once('exit', (code) => done(code)));
      instance.process.kill('SIGTERM');
      let draining = await rawCall(instance.url, '/v1/health/ready');
      for (let i = 0; i < 20 && draining.status === 200; i++) {
        await new Promise((r) => setTimeout(r, 50));
        draining = await rawCall(instance.url, '/v1/health/ready');
      }
      expect(draining.status, instance.output()).toBe(503);
      expect(draining.body).toEqual({
        status: 'draining',
        version: '1.0.0',
        checks: { started: 'ok', migrated: 'ok', not_draining: 'fail' },
        failures: [{ check: 'not_draining', message: expect.stringMatching(/draining after SIGTERM/) }],
      });
      // Still serving while the balancer takes it out.
      expect((await rawCall(instance.url, '/v1/health')).status).toBe(200);
      expect(await exited, instance.output()).toBe(0);
      await expect(rawCall(instance.url, '/v1/health/ready')).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      await instance.stop();
    }
  }, 60_000);
});
