import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../contracts/errors';
import { CompanyLookupRequest, DomainLookupRequest, PersonLookupRequest, SearchRequest } from '../../../contracts/http';
import { idempotencyKeyProblem } from '../../../contracts/validation';
import { fingerprint, isStoredOutcome, type StoredResponse } from '../../idempotency/idempotency';
import type { CallContext, LookupAnswer } from '../../lookup/lookup-service';
import { parseCompanyReference, parseDomain, parsePersonReference } from '../../lookup/references';
import { readJson, renderError, toApiError, validated, type LookupRouteHelpers } from '../app';

/** Headers an idempotent replay repeats from the original answer. */
const REPLAYED_HEADERS = ['x-request-id', 'x-credits-charged', 'x-credits-remaining', 'x-cache', 'age'];

export function registerLookupRoutes(app: FastifyInstance, helpers: LookupRouteHelpers) {
  const { lookups } = helpers.deps;
  const config = { area: 'lookup' as const };

  app.post('/v1/company', { config }, async (req, reply) => {
    const json = readJson(req);
    const body = validated(CompanyLookupRequest, json);
    const parsed = parseCompanyReference(body.url);
    if (!parsed.ok) throw new ApiError('invalid_company_reference');
    return runLookup(helpers, req, reply, '/v1/company', json, (ctx) => lookups.company(ctx, parsed.ref, body.max_age));
  });

  app.post('/v1/domain', { config }, async (req, reply) => {
    const json = readJson(req);
    const body = validated(DomainLookupRequest, json);
    const parsed = parseDomain(body.domain);
    if (!parsed.ok) throw new ApiError('invalid_domain');
    return runLookup(helpers, req, reply, '/v1/domain', json, (ctx) => lookups.domain(ctx, parsed.domain, body.max_age));
  });

  app.post('/v1/person', { config }, async (req, reply) => {
    const json = readJson(req);
    const body = validated(PersonLookupRequest, json);
    const parsed = parsePersonReference(body.url);
    if (!parsed.ok) throw new ApiError('invalid_person_reference');
    return runLookup(helpers, req, reply, '/v1/person', json, (ctx) => lookups.person(ctx, parsed.ref, body.max_age));
  });

  app.post('/v1/search', { config }, async (req, reply) => {
    const json = readJson(req);
    const body = validated(SearchRequest, json);
    return runLookup(helpers, req, reply, '/v1/search', json, (ctx) => lookups.search(ctx, body.query, body.limit, body.max_age));
  });
}

/**
 * Admission and bookkeeping shared by every charged call: load shedding, Idempotency-Key,
 * the workspace's concurrency slot, then the lookup, then the answer (stored for replay when
 * it is definitive).
 */
async function runLookup(
  { deps, shedder }: LookupRouteHelpers,
  req: FastifyRequest,
  reply: FastifyReply,
  endpoint: string,
  /** The body as sent: the Idempotency-Key fingerprint compares it canonically. */
  json: unknown,
  lookup: (ctx: CallContext) => Promise<LookupAnswer>,
) {
  const key = req.apiKey!;
  const idempotencyKey = headerValue(req.headers['idempotency-key']);
  const keyProblem = idempotencyKeyProblem(idempotencyKey);
  if (keyProblem) throw new ApiError('invalid_request', { details: [keyProblem] });
  if (!shedder.tryEnter()) throw new ApiError('no_capacity');

  let token: string | undefined;
  let slot: Awaited<ReturnType<typeof deps.slots.acquire>> = null;
  try {
    if (idempotencyKey !== undefined) {
      const begun = await deps.idempotency.begin(key.workspaceId, idempotencyKey, fingerprint(endpoint, json));
      if (begun.kind === 'replay') return replay(reply, begun.response);
      if (begun.kind === 'in_use') throw new ApiError('idempotency_key_in_use', { retryAfterSeconds: 1 });
      if (begun.kind === 'reused') throw new ApiError('idempotency_key_reused');
      token = begun.token;
    }

    slot = await deps.slots.acquire(`ws:${key.workspaceId}`, key.maxConcurrency);
    if (!slot) throw new ApiError('concurrency_limited', { retryAfterSeconds: 1 });
    const ctx: CallContext = { requestId: req.id, workspaceId: key.workspaceId, keyId: key.keyId, charged: 0, balance: null };
    req.call = ctx;
    let response: StoredResponse;
    try {
      response = success(req.id, ctx, await lookup(ctx));
    } catch (err) {
      const apiError = toApiError(err);
      if (!isStoredOutcome(apiError.status)) throw apiError;
      const rendered = await renderError(deps, req, apiError);
      response = { status: rendered.status, body: rendered.body, headers: { ...rendered.headers, 'x-request-id': req.id } };
    }
    if (token !== undefined) {
      await deps.idempotency.complete(key.workspaceId, idempotencyKey!, token, response);
      token = undefined;
    }
    return reply.status(response.status).headers(response.headers).send(response.body);
  } finally {
    shedder.leave();
    await slot?.release();
    if (token !== undefined) await deps.idempotency.abandon(key.workspaceId, idempotencyKey!, token).catch(() => {});
  }
}

function success(requestId: string, ctx: CallContext, answer: LookupAnswer): StoredResponse {
  return {
    status: 200,
    headers: {
      'x-request-id': requestId,
      'x-credits-charged': String(ctx.charged),
      'x-credits-remaining': String(ctx.balance ?? 0),
      'x-cache': answer.cache.status,
      age: String(answer.cache.age_seconds),
    },
    body: {
      data: answer.data,
      meta: {
        request_id: requestId,
        cache: answer.cache,
        content_hash: answer.contentHash,
        credits_charged: ctx.charged,
        credits_remaining: ctx.balance ?? 0,
        ...(answer.resolved ? { resolved: answer.resolved } : {}),
      },
    },
  };
}

function replay(reply: FastifyReply, stored: StoredResponse) {
  const headers: Record<string, string> = { 'idempotent-replayed': 'true' };
  for (const name of REPLAYED_HEADERS) if (stored.headers[name] !== undefined) headers[name] = stored.headers[name]!;
  return reply.status(stored.status).headers(headers).send(stored.body);
}

const headerValue = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(',') : v);
