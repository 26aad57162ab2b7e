import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { ApiError, errorBody } from '../../contracts/errors';
import { invalidJsonDetail, isJsonContentType, parseValue, unsupportedContentTypeDetail } from '../../contracts/validation';
import { newRequestId } from '../common/ids';
import type { Config } from '../config/config';
import type { EventStore } from '../eventstore/event-store';
import type { IdempotencyStore } from '../idempotency/idempotency';
import type { Ledger } from '../ledger/ledger';
import type { ConcurrencySlots } from '../limits/concurrency';
import type { RateLimiter } from '../limits/rate-limiter';
import type { CallContext, LookupService } from '../lookup/lookup-service';
import { readCredentials, type AuthenticatedKey, type KeyAuthenticator } from './auth';
import { LoadShedder } from './load-shedder';
import { registerAdminRoutes } from './routes/admin';
import { registerCacheRoutes } from './routes/cache';
import { registerLookupRoutes } from './routes/lookups';
import { registerMetaRoutes } from './routes/meta';

/** Per-IP bucket for calls without a valid key (401s, the Meta area). */
export const ANONYMOUS_RATE_PER_MINUTE = 120;

/** Which part of the API a route belongs to: decides auth, buckets and counting. */
export type Area = 'meta' | 'lookup' | 'cache' | 'admin' | 'unknown';

export interface AppDeps {
  config: Config;
  store: EventStore;
  ledger: Ledger;
  lookups: LookupService;
  authenticator: KeyAuthenticator;
  rateLimiter: RateLimiter;
  slots: ConcurrencySlots;
  idempotency: IdempotencyStore;
  /** Relay lag, when the Kafka relay runs in this process. */
  relayLag?: () => Promise<unknown>;
}

declare module 'fastify' {
  interface FastifyRequest {
    apiKey: AuthenticatedKey | null;
    call: CallContext | null;
  }
  interface FastifyContextConfig {
    area?: Area;
  }
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: deps.config.logLevel === 'silent' ? false : { level: deps.config.logLevel },
    genReqId: () => newRequestId(),
    // Per-request access logs would cost more than the lookups; errors are logged by the handler.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    bodyLimit: 64 * 1024,
    return503OnClosing: false,
    // HEAD is not an endpoint of the contract: it is route_not_found like any other method.
    exposeHeadRoutes: false,
  });
  const shedder = new LoadShedder(deps.config);
  app.addHook('onClose', async () => shedder.stop());

  app.decorateRequest('apiKey', null);
  app.decorateRequest('call', null);

  // Bodies arrive as text: the route decides what is valid JSON, so every problem gets the
  // spec's `details` and not a framework message.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));

  app.addHook('onRequest', async (req, reply) => {
    reply.header('X-Request-Id', req.id);
    const area = areaOf(req);
    if (area === 'admin') return;
    const credentials = readCredentials(req.headers);
    if (credentials.kind === 'key' && area !== 'meta') req.apiKey = await deps.authenticator.authenticate(credentials.key);
    const decision = req.apiKey
      ? await deps.rateLimiter.take(`key:${req.apiKey.keyId}`, req.apiKey.rateLimitPerMinute)
      : await deps.rateLimiter.take(`ip:${req.ip}`, ANONYMOUS_RATE_PER_MINUTE);
    reply.header('RateLimit-Limit', decision.limit);
    reply.header('RateLimit-Remaining', decision.remaining);
    reply.header('RateLimit-Reset', decision.resetSeconds);
    if (!decision.allowed) throw new ApiError('rate_limited', { retryAfterSeconds: decision.retryAfterSeconds });
    if ((area === 'lookup' || area === 'cache') && !req.apiKey) throw new ApiError('unauthorized');
  });

  app.setErrorHandler(async (error, req, reply) => {
    const apiError = toApiError(error);
    if (apiError.code === 'internal_error') req.log.error({ err: error }, 'internal error');
    const rendered = await renderError(deps, req, apiError);
    return reply.status(rendered.status).headers(rendered.headers).send(rendered.body);
  });

  app.setNotFoundHandler(async () => {
    throw new ApiError('route_not_found', { message: 'No endpoint exists at this method and path.' });
  });

  const helpers = { deps, shedder };
  registerMetaRoutes(app, deps);
  registerLookupRoutes(app, helpers);
  registerCacheRoutes(app, deps);
  registerAdminRoutes(app, deps);
  return app;
}

/** The one rendering of every error: status, `Retry-After`, envelope with billing meta. */
export async function renderError(deps: AppDeps, req: FastifyRequest, apiError: ApiError) {
  const headers: Record<string, string> = {};
  if (apiError.retryAfterSeconds !== undefined) headers['retry-after'] = String(apiError.retryAfterSeconds);
  let remaining: number | null = req.call?.balance ?? null;
  if (remaining === null && req.apiKey) remaining = await deps.ledger.balance(req.apiKey.workspaceId).catch(() => null);
  return {
    status: apiError.status,
    headers,
    body: {
      error: errorBody(apiError, docsUrlFor(deps.config, req)),
      meta: { request_id: req.id, credits_charged: req.call?.charged ?? 0, credits_remaining: remaining },
    },
  };
}

export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const e = error as { statusCode?: number; code?: string; message?: string };
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return new ApiError('invalid_request', { details: [{ field: 'body', issue: 'too_big', message: 'The body is too large.' }] });
  }
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new ApiError('invalid_request', { message: e.message });
  }
  return new ApiError('internal_error', { cause: error });
}

function areaOf(req: FastifyRequest): Area {
  const configured = req.routeOptions.config?.area;
  if (configured) return configured;
  return req.url.startsWith('/admin/') ? 'admin' : 'unknown';
}

/** `{docs_url}`: DOCS_URL, else `{base_url}/docs` as the caller reached us. */
export function docsUrlFor(config: Config, req: FastifyRequest): string {
  if (config.docsUrl) return config.docsUrl;
  const host = req.headers.host ?? `${config.host}:${config.port}`;
  return `${req.protocol}://${host}/docs`;
}

/** The JSON value of a POST body: wrong content type or invalid JSON is a 400 with details. */
export function readJson(req: FastifyRequest): unknown {
  if (!isJsonContentType(req.headers['content-type'])) throw new ApiError('invalid_request', { details: [unsupportedContentTypeDetail()] });
  try {
    return JSON.parse(typeof req.body === 'string' ? req.body : '');
  } catch {
    throw new ApiError('invalid_request', { details: [invalidJsonDetail()] });
  }
}

/** A decoded body checked against its schema; every problem field a 400 detail. */
export function validated<T>(schema: import('zod').ZodType<T>, json: unknown): T {
  const parsed = parseValue(schema, json);
  if (!parsed.ok) throw new ApiError('invalid_request', { details: parsed.details });
  return parsed.value;
}

/** JSON body of a POST, validated against its schema. */
export function jsonBody<T>(req: FastifyRequest, schema: import('zod').ZodType<T>): T {
  return validated(schema, readJson(req));
}

export type LookupRouteHelpers = { deps: AppDeps; shedder: LoadShedder };
export type { FastifyReply };
