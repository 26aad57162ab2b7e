// One in-process app per route test file: the real adapters on embedded PGlite (in memory), the
// in-process limiter and slots, and the sandbox network as the source. Requests go through
// app.inject: no socket.
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../services/api/app';
import type { AppDeps } from '../../services/http/deps';
import { KeyAuthenticator } from '../../services/keys/authenticator';
import { KeyUseRecorder } from '../../services/keys/key-use';
import { loadConfig } from '../../services/config/config';
import { EventStore } from '../../services/eventstore/event-store';
import { migrate } from '../../services/eventstore/migrate';
import { createPgliteSql } from '../../services/eventstore/sql-pglite';
import { createSqlIdempotencyStore } from '../../services/idempotency/sql-idempotency-store';
import { withReleaseRetries } from '../../services/idempotency/release-retries';
import { backgroundLogger } from '../../services/common/log';
import { Ledger } from '../../services/ledger/ledger';
import { Keys } from '../../services/keys/keys';
import { ReadModels } from '../../services/read-models/read-models';
import { Workspaces } from '../../services/workspaces/workspaces';
import { createMemoryConcurrencySlots } from '../../services/limits/concurrency-memory';
import { createRedisLimits } from '../../services/limits/admission-redis';
import { closeRedisConnection, createRedisConnection, startRedisConnection } from '../../services/limits/redis-connection';
import { createRedisRevocationMarks } from '../../services/keys/revocation-marks-redis';
import type { Sql } from '../../services/eventstore/sql';
import { createMemoryRateLimiter } from '../../services/limits/rate-limiter-memory';
import { LookupService } from '../../services/lookup/lookup-service';
import { createHttpSource } from '../../services/lookup/source/http-source';
import { INLINE_PROJECTIONS } from '../../services/projections/inline';
import { startSandbox } from '../../services/sandbox/server';
import { buildAdminOpenApiDocument, buildOpenApiDocument } from '../../contracts/openapi';
import { OpenApiConformance } from './openapi-conformance';

export const ADMIN_TOKEN = 'route-tests-admin-token';
// Past the 2 s of `sandbox-slow`, which must succeed; `sandbox-timeout` waits it out.
const SOURCE_TIMEOUT_MS = 4_000;

export interface RouteApp {
  app: FastifyInstance;
  ledger: Ledger;
  readModels: ReadModels;
  workspaces: Workspaces;
  keys: Keys;
  /** The event store of the app (to write what an earlier fetch would have, say). */
  store: EventStore;
  /** A workspace with `credits` and one key; `headers` authenticate as that key. */
  keyed(opts?: { credits?: number; rateLimitPerMinute?: number; maxConcurrency?: number; mode?: 'live' | 'test' }): Promise<{ workspaceId: string; keyId: string; headers: Record<string, string> }>;
  call(method: InjectOptions['method'], url: string, opts?: { headers?: Record<string, string>; body?: unknown }): Promise<Answer>;
  balance(workspaceId: string): Promise<number>;
  close(): Promise<void>;
}

export type Answer = LightMyRequestResponse & { body: string; json(): any };

/**
 * `env`: more settings (LOG_LEVEL, ACCESS_LOG_SAMPLE...); `deps`: adapters to use instead (a log stream...).
 * `liveSourceUrl`: where live keys fetch instead of the sandbox (test keys fetch from the sandbox whatever it is).
 * `redisLimits`: the rate limits and slots on Redis at `REDIS_URL` (as server.ts composes them), not in process.
 * `sql`: the database to use as it is (not migrated): one out of reach, say.
 */
export async function startRouteApp(
  options: { env?: Record<string, string>; deps?: Partial<AppDeps>; redisLimits?: boolean; sql?: Sql; liveSourceUrl?: string } = {},
): Promise<RouteApp> {
  const sql = options.sql ?? (await createPgliteSql());
  if (!options.sql) await migrate(sql);
  const store = new EventStore(sql, INLINE_PROJECTIONS);
  const ledger = new Ledger(store);
  const readModels = new ReadModels(sql);
  const sandbox = await startSandbox({ host: '127.0.0.1', port: 0 });
  const config = loadConfig({ ADMIN_TOKEN, LOG_LEVEL: 'silent', SOURCE_URL: sandbox.url, SOURCE_TIMEOUT_MS: String(SOURCE_TIMEOUT_MS), ...options.env });
  const redis = options.redisLimits && config.redis ? createRedisConnection(config.redis) : undefined;
  if (redis) await startRedisConnection(redis, { error: () => {}, info: () => {} });
  const authenticator = new KeyAuthenticator(sql, { marks: redis && createRedisRevocationMarks(redis) });
  // A database out of reach from the start leaves the key set unsure, as a lost connection does.
  await authenticator.start().catch((err: unknown) => {
    if (!options.sql) throw err;
  });
  const keyUse = new KeyUseRecorder(sql);
  const { rateLimiter, slots, keyAdmission } = redis
    ? createRedisLimits(redis, { leaseMs: config.concurrencyLeaseMs })
    : { rateLimiter: createMemoryRateLimiter(), slots: createMemoryConcurrencySlots({ leaseMs: config.concurrencyLeaseMs }), keyAdmission: undefined };
  const workspaces = new Workspaces(store);
  const keys = new Keys(store, authenticator);
  const idempotency = withReleaseRetries(createSqlIdempotencyStore(sql, { lockTtlMs: config.idempotencyLockTtlMs }), backgroundLogger(config.logLevel));
  const app = await buildApp({
    config,
    store,
    ledger,
    workspaces,
    keys,
    readModels,
    // Test keys always fetch from the sandbox; live keys from it too unless `liveSourceUrl` says otherwise.
    lookups: new LookupService(
      sql,
      ledger,
      createHttpSource({ baseUrl: options.liveSourceUrl ?? sandbox.url, timeoutMs: SOURCE_TIMEOUT_MS }),
      undefined,
      undefined,
      createHttpSource({ baseUrl: sandbox.url, timeoutMs: SOURCE_TIMEOUT_MS }),
    ),
    authenticator,
    keyUse,
    rateLimiter,
    slots,
    keyAdmission,
    idempotency,
    ...options.deps,
  });
  await app.ready();
  checkEveryAnswer(app);

  return {
    app,
    ledger,
    readModels,
    workspaces,
    keys,
    store,
    async keyed({ credits = 100, rateLimitPerMinute, maxConcurrency, mode } = {}) {
      const ws = await workspaces.create({ name: 'route test', credits, maxConcurrency });
      const key = await keys.create(ws.id, { rateLimitPerMinute, mode });
      return { workspaceId: ws.id, keyId: key.id, headers: { authorization: `Bearer ${key.key}` } };
    },
    async call(method, url, { headers = {}, body } = {}) {
      const json = body === undefined ? {} : { payload: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } };
      return (await app.inject({ method, url, headers, ...json })) as Answer;
    },
    async balance(workspaceId) {
      return (await workspaces.get(workspaceId))!.balance;
    },
    async close() {
      await app.close();
      await keyUse.stop();
      await authenticator.stop();
      await rateLimiter.close();
      await slots.close();
      if (redis) await closeRedisConnection(redis);
      await idempotency.stop();
      await ledger.close();
      await sandbox.close();
      await sql.close();
    },
  };
}

/** The service's OpenAPI document (what GET /v1/openapi.json serves), its console part included. */
export const conformance = new OpenApiConformance(buildOpenApiDocument());
/** The admin API's (what GET /admin/v1/openapi.json serves). */
const adminConformance = new OpenApiConformance(buildAdminOpenApiDocument());

/**
 * Every answer a route suite gets through app.inject is checked against the OpenAPI document of
 * its operation (public or admin): one that does not match fails the call, and so the test that made it.
 */
function checkEveryAnswer(app: FastifyInstance): void {
  const inject = app.inject.bind(app) as (opts: InjectOptions) => Promise<LightMyRequestResponse>;
  const checked = async (opts: InjectOptions | string) => {
    const options = typeof opts === 'string' ? { url: opts } : opts;
    const answer = await inject(options);
    const url = typeof options.url === 'string' ? options.url : (options.url?.pathname ?? options.path ?? '/');
    for (const document of [conformance, adminConformance]) document.check(options.method ?? 'GET', String(url), answer);
    return answer;
  };
  (app as unknown as { inject: typeof checked }).inject = checked;
}

/** The error envelope's essentials: status, code, billing meta, the request id in header and body. */
export function errorOf(answer: Answer) {
  const body = answer.json();
  expectEnvelope(answer);
  return { status: answer.statusCode, code: body.error.code as string, charged: body.meta.credits_charged as number, remaining: body.meta.credits_remaining as number | null };
}

function expectEnvelope(answer: Answer) {
  const body = answer.json();
  if (!body.error || !body.meta || body.meta.request_id !== answer.headers['x-request-id']) {
    throw new Error(`not an error envelope with its request id: ${answer.statusCode} ${answer.body}`);
  }
}

/** A member of `workspaceId` with `role`, signed in to the console through an invitation: their session cookie. */
export async function signedInMember(t: RouteApp, workspaceId: string, email: string, role: 'owner' | 'member'): Promise<{ cookie: string }> {
  const invitation = await t.call('POST', `/admin/v1/workspaces/${workspaceId}/invitations`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, body: { email, role } });
  if (invitation.statusCode !== 201) throw new Error(`invitation: ${invitation.statusCode} ${invitation.body}`);
  const token = new URL(invitation.json().link).searchParams.get('token');
  const accepted = await t.call('POST', '/console/v1/invitations/accept', { body: { token, password: `${role} password 123456` } });
  if (accepted.statusCode !== 200) throw new Error(`accept: ${accepted.statusCode} ${accepted.body}`);
  return { cookie: String(accepted.headers['set-cookie']).split(';')[0]! };
}
