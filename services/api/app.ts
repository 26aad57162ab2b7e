import type { Socket } from 'node:net';
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { ANONYMOUS_RATE_PER_MINUTE } from '../../contracts/endpoints';
import { ANONYMOUS_RATE_LIMITED, ApiError } from '../../contracts/errors';
import { newRequestId } from '../common/ids';
import { describeError } from '../common/log';
import type { Config } from '../config/config';
import { consoleAccounts } from '../console-web/accounts';
import { consoleRoutes } from '../console-web/plugin';
import { AnonymousBucket } from '../http/admission/buckets';
import { admissionPlugin } from '../http/admission/plugin';
import { createRawAnswerer, type Admission as RawAdmission } from '../http/client-errors';
import type { AppDeps } from '../http/deps';
import { depsPlugin } from '../http/deps-plugin';
import { sendError, toApiError } from '../http/errors';
import { rateLimitHeaders, readingOf } from '../http/rate-limit-headers';
import { LoadShedder } from '../http/load-shedder';
import { proxyTrust } from '../http/public-url';
import { observeResponse } from './access-log';
import { paymentRefusalsRecorder } from './payment-refusals';
import { routePlugins } from './routes';

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

  app.decorateRequest('errorAnswer', null);
  app.addHook('onRequest', async (req, reply) => {
    reply.header('X-Request-Id', req.id);
    reply.header('X-Content-Type-Options', 'nosniff');
  });
  app.addHook('onResponse', async (req, reply) => observeResponse(deps.config, req, reply));
  await app.register(depsPlugin, { deps, shedder });

  // Bodies arrive as text: the route decides what is valid JSON, so every problem gets the
  // spec's `details` and not a framework message.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));

  // Admission by each row's policies (services/http/admission); every route below is a row.
  const accounts = consoleAccounts(deps.store);
  await app.register(admissionPlugin, {
    adminToken: deps.config.adminToken,
    authenticator: deps.authenticator,
    keyUse: deps.keyUse,
    rateLimiter: deps.rateLimiter,
    keyAdmission: deps.keyAdmission,
    anonymous: new AnonymousBucket(deps.rateLimiter),
    sessions: accounts.sessions,
  });

  app.setErrorHandler(async (error, req, reply) => {
    const endpoint = req.routeOptions.config?.endpoint;
    let apiError = toApiError(error, endpoint?.admission);
    // The framework's refusal of a request on no route (a bad Content-Type on an unknown path) is still an unknown path.
    if (req.is404 && !(error instanceof ApiError) && apiError.code === 'invalid_request') apiError = new ApiError('route_not_found');
    return sendError(deps, req, reply, error, apiError);
  });

  for (const plugin of routePlugins) await app.register(plugin);
  await app.register(consoleRoutes, { accounts });
  await app.register(paymentRefusalsRecorder);
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
async function admitAnonymous(deps: AppDeps, app: FastifyInstance, ip: string, requestId: string): Promise<RawAdmission> {
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

/** Fastify's reading of TRUST_PROXY, the same as the public base URL's (see public-url.ts). */
function trustProxyOption(config: Config): boolean | ((address: string) => boolean) {
  if (typeof config.trustProxy === 'boolean') return config.trustProxy;
  const trusts = proxyTrust(config.trustProxy);
  return (address) => trusts(address);
}
