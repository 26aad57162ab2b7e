// One admission policy at a time: a bare Fastify app with the admission plugin
// (services/http/admission), the one error renderer, and rows of the endpoint table registered
// through route() with a handler that only says who was admitted. The adapters are the real ones
// (PGlite in memory, the in-process limiter); requests go through app.inject.
import Fastify, { type FastifyInstance, type InjectOptions } from 'fastify';
import type { EndpointId } from '../../../contracts/endpoints';
import { loadConfig } from '../../../services/config/config';
import { EventStore } from '../../../services/eventstore/event-store';
import { migrate } from '../../../services/eventstore/migrate';
import { createPgliteSql } from '../../../services/eventstore/sql-pglite';
import { AnonymousBucket } from '../../../services/http/admission/buckets';
import { admissionPlugin } from '../../../services/http/admission/plugin';
import { sendError, toApiError } from '../../../services/http/errors';
import { route } from '../../../services/http/route';
import { KeyAuthenticator } from '../../../services/keys/authenticator';
import { KeyUseRecorder } from '../../../services/keys/key-use';
import { LimiterUnavailableError } from '../../../services/limits/limiter-unavailable';
import { createMemoryRateLimiter } from '../../../services/limits/rate-limiter-memory';
import type { RateLimiter } from '../../../services/limits/rate-limiter';
import { consoleAccounts } from '../../../services/console-web/accounts';
import { INLINE_PROJECTIONS } from '../../../services/projections/inline';
import { ReadModels } from '../../../services/read-models/read-models';
import { Workspaces } from '../../../services/workspaces/workspaces';
import { Keys } from '../../../services/keys/keys';
import type { Answer } from '../support';

export const ADMIN_TOKEN = 'admission-tests-admin-token';

export interface AdmissionApp {
  app: FastifyInstance;
  workspaces: Workspaces;
  keys: Keys;
  accounts: ReturnType<typeof consoleAccounts>;
  limiter: SwitchableLimiter;
  call(options: InjectOptions): Promise<Answer>;
  close(): Promise<void>;
}

/** `rows`: registered with a handler answering who was admitted. */
export async function startAdmissionApp(rows: readonly EndpointId[]): Promise<AdmissionApp> {
  const sql = await createPgliteSql();
  await migrate(sql);
  const store = new EventStore(sql, INLINE_PROJECTIONS);
  const authenticator = new KeyAuthenticator(sql, {});
  await authenticator.start();
  const keyUse = new KeyUseRecorder(sql);
  const rateLimiter = new SwitchableLimiter();
  const workspaces = new Workspaces(store);
  const keys = new Keys(store, authenticator);
  const readModels = new ReadModels(sql);
  const accounts = consoleAccounts(store);
  const config = loadConfig({ ADMIN_TOKEN, LOG_LEVEL: 'silent', SOURCE_URL: 'sandbox' });
  const app = Fastify({ exposeHeadRoutes: false });
  app.decorateRequest('errorAnswer', null);
  // As app.ts does: bodies arrive as text for route() to read, and every answer names its request id.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  app.addHook('onRequest', async (req, reply) => {
    reply.header('X-Request-Id', req.id);
  });
  app.setErrorHandler(async (error, req, reply) => {
    const row = req.routeOptions.config?.endpoint;
    return sendError({ config, readModels }, req, reply, error, toApiError(error, row?.admission));
  });
  await app.register(admissionPlugin, { adminToken: ADMIN_TOKEN, authenticator, keyUse, rateLimiter, anonymous: new AnonymousBucket(rateLimiter), sessions: accounts.sessions });
  for (const id of rows) {
    route(app, id, async ({ req, reply }) => reply.send({ key: req.apiKey?.keyId ?? null, member: req.signedIn?.member.memberId ?? null }));
  }
  await app.ready();
  return {
    app,
    workspaces,
    keys,
    accounts,
    limiter: rateLimiter,
    call: async (opts) => (await app.inject(opts)) as Answer,
    async close() {
      await app.close();
      await keyUse.stop();
      await authenticator.stop();
      await rateLimiter.close();
      await sql.close();
    },
  };
}

/** The in-process limiter, whose store can be put out of reach as the Redis one is while Redis is down. */
export class SwitchableLimiter implements RateLimiter {
  reachable = true;
  private readonly limiter = createMemoryRateLimiter();

  async take(bucketKey: string, perMinute: number) {
    this.refuseWhileUnreachable();
    return this.limiter.take(bucketKey, perMinute);
  }

  async takeUpTo(bucketKey: string, perMinute: number, wanted: number) {
    this.refuseWhileUnreachable();
    return this.limiter.takeUpTo(bucketKey, perMinute, wanted);
  }

  private refuseWhileUnreachable() {
    if (!this.reachable) throw new LimiterUnavailableError('rate limit take', new Error('connection refused'));
  }

  close() {
    return this.limiter.close();
  }
}

/** Runs `body` while the limiter's store is out of reach. */
export async function whileUnreachable<T>(limiter: SwitchableLimiter, body: () => Promise<T>): Promise<T> {
  limiter.reachable = false;
  try {
    return await body();
  } finally {
    limiter.reachable = true;
  }
}
