import type { Socket } from 'node:net';
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { ANONYMOUS_RATE_LIMITED, ApiError } from '../../contracts/errors';
import { newRequestId } from '../common/ids';
import type { Config } from '../config/config';
import { LimiterUnavailableError } from '../limits/limiter-unavailable';
import { apiKeyBucket, type RateDecision } from '../limits/rate-limiter';
import { isAdminAuthorization, readCredentials } from './auth';
import { MALFORMED_REQUEST, createRawAnswerer, type Admission } from './client-errors';
import type { AppDeps, RequestArea } from './deps';
import { DrainedAddresses } from './drained-addresses';
import { describeError } from '../common/log';
import { observeResponse } from './access-log';
import { sendError, toApiError } from './http/errors';
import { rateLimitHeaders, readingOf, setRateLimitHeaders, setUnreadableBucketHeaders } from './http/rate-limit-headers';
import { LoadShedder } from './load-shedder';
import { depsPlugin } from './plugins/deps';
import { proxyTrust } from './public-url';
import { routePlugins } from './routes';

/** Per-IP bucket for calls without a valid key (401s, the Meta area). */
export const ANONYMOUS_RATE_PER_MINUTE = 120;
/**
 * find-my-way cuts a path parameter at 100 characters with its own 414; the admin routes judge
 * their `{id}` themselves (400 in the envelope). Node's 16 KB header limit bounds the URL anyway.
 */
const MAX_PARAM_CHARS = 16 * 1024;

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  // Requests Node's HTTP parser refuses, and CONNECT, are answered on the socket (client-errors.ts).
  const raw = createRawAnswerer({
    config: deps.config,
    admit: (ip, requestId) => admitAnonymous(deps, app, ip, requestId),
    log: { debug: (obj, msg) => app.log.debug(obj, msg), error: (obj, msg) => app.log.error(obj, msg) },
  });
  const app: FastifyInstance = Fastify({
    logger:
      deps.config.logLevel === 'silent'
        ? false
        : { level: deps.config.logLevel, serializers: { err: (err: Error) => describeError(err) as { type: string; message: string; stack: string } }, ...(deps.logStream ? { stream: deps.logStream } : {}) },
    genReqId: () => newRequestId(),
    // Fastify's two lines per request are replaced by one sampled access line (access-log.ts).
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    bodyLimit: 64 * 1024,
    return503OnClosing: false,
    // HEAD is not an endpoint of the contract: it is route_not_found like any other method.
    exposeHeadRoutes: false,
    // X-Forwarded-For/-Proto count for req.ip and req.protocol only from peers TRUST_PROXY names.
    trustProxy: trustProxyOption(deps.config),
    routerOptions: { maxParamLength: MAX_PARAM_CHARS },
    // Node would answer a missing Host with an empty 400 of its own; the hook below refuses it in the envelope.
    http: { requireHostHeader: false },
    clientErrorHandler: (error, socket) => raw.onClientError(error, socket),
    // A path that is not valid %-encoded UTF-8 and the like: no route, no hooks, the same envelope.
    frameworkErrors: (error, req, reply) => {
      answerFrameworkError(deps, app, error, req, reply).catch((err: unknown) => {
        req.log.error({ err }, 'could not answer a framework error');
        reply.raw.destroy();
      });
    },
  });
  app.server.on('connect', (_req, socket) => raw.onConnect(socket as Socket));
  // An Expect other than 100-continue may be ignored (RFC 9110 §10.1.1): the request runs as usual
  // instead of Node's bodiless 417.
  app.server.on('checkExpectation', (req, res) => app.server.emit('request', req, res));
  const shedder = new LoadShedder(deps.config);
  app.addHook('onClose', async () => shedder.stop());

  app.decorateRequest('apiKey', null);
  app.decorateRequest('errorAnswer', null);
  app.addHook('onResponse', async (req, reply) => observeResponse(deps.config, req, reply));
  await app.register(depsPlugin, { deps, shedder });

  // Bodies arrive as text: the route decides what is valid JSON, so every problem gets the
  // spec's `details` and not a framework message.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));

  const drained = new DrainedAddresses();
  const takeAnonymous = async (address: string): Promise<RateDecision> => {
    const decision = await deps.rateLimiter.take(`ip:${address}`, ANONYMOUS_RATE_PER_MINUTE);
    drained.noteTake(address, decision);
    return decision;
  };

  app.addHook('onRequest', async (req, reply) => {
    reply.header('X-Request-Id', req.id);
    reply.header('X-Content-Type-Options', 'nosniff');
    const area = areaOf(req);
    if (area === 'admin') {
      // Admin answers carry keys and balances: no cache along the way may keep them.
      reply.header('Cache-Control', 'no-store');
      // Known path or not: without the token the admin area shows nothing, not even which paths exist.
      if (!isAdminAuthorization(req.raw.rawHeaders, deps.config.adminToken)) {
        reply.header('WWW-Authenticate', 'Bearer');
        throw new ApiError('unauthorized', { message: 'The admin token is missing or wrong.' });
      }
      return;
    }
    if (area === 'console') return; // on its own per-IP bucket, taken by services/console-web
    if (req.routeOptions.config?.rateLimit === 'none') return; // the readiness probe (see the route table)
    const credentials = readCredentials(req.raw.rawHeaders);
    let anonymous: RateDecision | undefined;
    let decision: RateDecision | undefined;
    if (credentials.kind === 'key' && area !== 'meta') {
      // Steady state: the revocation mark and the key's token in one Redis round trip.
      const { takeUnlessMarked } = deps.rateLimiter;
      const admitted = takeUnlessMarked
        ? await deps.authenticator.admitCached(credentials.key, (k, markKey) => takeUnlessMarked(apiKeyBucket(k.keyId), markKey, k.rateLimitPerMinute))
        : undefined;
      if (admitted) {
        req.apiKey = admitted.key;
        decision = admitted.decision;
      } else {
        // A made-up key is refused from memory (the key set), so a valid one never pays per IP.
        const screening = await deps.authenticator.screen(credentials.key);
        // Only while the set cannot vouch does an unknown key cost a database query: from an
        // address that ran dry, that attempt pays its per-IP token first.
        if (screening === 'unsure') {
          req.log.debug({ drained: drained.has(req.ip) }, 'key set cannot vouch (being rebuilt); the key is checked in the database');
          if (drained.has(req.ip)) anonymous = await takeAnonymous(req.ip);
        }
        if (screening !== 'unlisted' && (!anonymous || anonymous.allowed)) req.apiKey = await deps.authenticator.authenticate(credentials.key);
      }
      // Any authenticated request uses the key, whatever its answer (429 included).
      if (req.apiKey) deps.keyUse.note(req.apiKey.keyId);
    }
    try {
      decision ??= req.apiKey
        ? await deps.rateLimiter.take(apiKeyBucket(req.apiKey.keyId), req.apiKey.rateLimitPerMinute)
        : (anonymous ?? (await takeAnonymous(req.ip)));
    } catch (err) {
      if (err instanceof LimiterUnavailableError && req.routeOptions.config?.rateLimit === 'bucket_when_reachable') {
        // A liveness probe says whether this process lives, whatever Redis does (see the route table).
        req.log.warn({ err }, 'rate limiter out of reach; liveness answered without its bucket');
        return;
      }
      if (err instanceof LimiterUnavailableError) {
        setUnreadableBucketHeaders(reply, req.apiKey ? 'key' : 'ip', req.apiKey ? req.apiKey.rateLimitPerMinute : ANONYMOUS_RATE_PER_MINUTE);
      }
      throw err;
    }
    setRateLimitHeaders(reply, req.apiKey ? 'key' : 'ip', decision);
    if (!decision.allowed) {
      throw new ApiError('rate_limited', { retryAfterSeconds: decision.retryAfterSeconds, ...(req.apiKey ? {} : { message: ANONYMOUS_RATE_LIMITED }) });
    }
    if ((area === 'lookup' || area === 'cache') && !req.apiKey) {
      // RFC 9110 §11.6.1: a 401 names the scheme it wants.
      reply.header('WWW-Authenticate', 'Bearer');
      throw new ApiError('unauthorized');
    }
  });

  // HTTP/1.1 requires Host (RFC 9112 §3.2); HTTP/1.0 may omit it.
  app.addHook('onRequest', async (req) => {
    const { httpVersionMajor, httpVersionMinor } = req.raw;
    if (req.headers.host === undefined && (httpVersionMajor > 1 || (httpVersionMajor === 1 && httpVersionMinor >= 1))) {
      throw new ApiError('invalid_request', { message: MALFORMED_REQUEST, details: [{ field: 'Host', issue: 'required', message: 'HTTP/1.1 requests must send Host.' }] });
    }
  });

  app.setErrorHandler(async (error, req, reply) => {
    let apiError = toApiError(error, areaOf(req));
    // The framework's refusal of a request on no route (a bad Content-Type on an unknown path) is still an unknown path.
    if (req.is404 && !(error instanceof ApiError) && apiError.code === 'invalid_request') apiError = new ApiError('route_not_found');
    return sendError(deps, req, reply, error, apiError);
  });

  app.setNotFoundHandler(async () => {
    throw new ApiError('route_not_found', { message: 'No endpoint exists at this method and path.' });
  });

  for (const plugin of routePlugins) await app.register(plugin);
  return app;
}

/**
 * Fastify's `frameworkErrors`: the router refused the URL, so no route, hook or error handler
 * runs. The answer is the one rendering of every error, with X-Request-Id and, outside the admin
 * API, a token of the caller's per-IP bucket (the request never reached a key check).
 */
async function answerFrameworkError(deps: AppDeps, app: FastifyInstance, error: FastifyError, req: FastifyRequest, reply: FastifyReply) {
  reply.header('X-Request-Id', req.id);
  let apiError = toApiError(error);
  if (!req.url.startsWith('/admin/')) {
    const admission = await admitAnonymous(deps, app, req.ip, req.id);
    reply.headers(admission.headers);
    apiError = admission.refusal ?? apiError;
  }
  return sendError(deps, req, reply, error, apiError);
}

/** One token of the per-IP bucket, for answers given outside the routes' hooks. */
async function admitAnonymous(deps: AppDeps, app: FastifyInstance, ip: string, requestId: string): Promise<Admission> {
  try {
    const decision = await deps.rateLimiter.take(`ip:${ip}`, ANONYMOUS_RATE_PER_MINUTE);
    return {
      headers: rateLimitHeaders('ip', readingOf(decision)),
      refusal: decision.allowed ? null : new ApiError('rate_limited', { retryAfterSeconds: decision.retryAfterSeconds, message: ANONYMOUS_RATE_LIMITED }),
    };
  } catch (err) {
    // The refusal still goes out, without RateLimit headers, rather than not at all.
    app.log.error({ err, request_id: requestId }, 'rate limiter failed while answering a malformed request');
    return { headers: {}, refusal: null };
  }
}

function areaOf(req: FastifyRequest): RequestArea {
  const configured = req.routeOptions.config?.area;
  if (configured) return configured;
  return /^\/admin(?:[/?#]|$)/.test(req.url) ? 'admin' : 'unknown';
}

/** Fastify's reading of TRUST_PROXY, the same as the public base URL's (see public-url.ts). */
function trustProxyOption(config: Config): boolean | ((address: string) => boolean) {
  if (typeof config.trustProxy === 'boolean') return config.trustProxy;
  const trusts = proxyTrust(config.trustProxy);
  return (address) => trusts(address);
}
