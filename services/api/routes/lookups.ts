import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../contracts/errors';
import { endpoint, type EndpointId } from '../../../contracts/endpoints';
import { idempotencyKeyProblem } from '../../../contracts/validation';
import { fingerprint, isStoredOutcome, type StoredResponse } from '../../idempotency/idempotency';
import { scopeInMode } from '../../keys/key-mode';
import type { Caller, LookupResult } from '../../lookup/lookup-service';
import { parseCompanyReference, parseDomain, parsePersonReference } from '../../lookup/references';
import { renderError, toApiError } from '../http/errors';
import { route } from '../http/route';
import { DEPS_PLUGIN } from '../plugins/deps';

/** Headers an idempotent replay repeats from the original answer. */
const REPLAYED_HEADERS = ['x-request-id', 'x-credits-charged', 'x-credits-remaining', 'x-cache', 'age'];

/** The charged lookups and search. */
export const lookupRoutes = fp(
  async (app) => {
    const { lookups } = app.deps;

    route(app, 'lookupCompany', async ({ req, reply, body, json }) => {
      const parsed = parseCompanyReference(body.url);
      if (!parsed.ok) throw new ApiError('invalid_company_reference');
      return runLookup(app, req, reply, 'lookupCompany', json, (caller) => lookups.company(caller, parsed.ref, body.max_age));
    });

    route(app, 'lookupDomain', async ({ req, reply, body, json }) => {
      const parsed = parseDomain(body.domain);
      if (!parsed.ok) throw new ApiError('invalid_domain');
      return runLookup(app, req, reply, 'lookupDomain', json, (caller) => lookups.domain(caller, parsed.domain, body.max_age));
    });

    route(app, 'lookupPerson', async ({ req, reply, body, json }) => {
      const parsed = parsePersonReference(body.url);
      if (!parsed.ok) throw new ApiError('invalid_person_reference');
      return runLookup(app, req, reply, 'lookupPerson', json, (caller) => lookups.person(caller, parsed.ref, body.max_age));
    });

    route(app, 'search', async ({ req, reply, body, json }) =>
      runLookup(app, req, reply, 'search', json, (caller) => lookups.search(caller, body.query, body.limit, body.max_age)),
    );
  },
  { name: 'routes-lookups', dependencies: [DEPS_PLUGIN] },
);

/**
 * Admission and bookkeeping shared by every charged call: load shedding, Idempotency-Key,
 * the workspace's concurrency slot, then the lookup, then the answer (stored for replay when
 * it is definitive).
 */
async function runLookup(
  app: FastifyInstance,
  req: FastifyRequest,
  reply: FastifyReply,
  endpointId: EndpointId,
  /** The body as sent: the Idempotency-Key fingerprint compares it canonically. */
  json: unknown,
  lookup: (caller: Caller) => Promise<LookupResult>,
) {
  const { deps, shedder } = app;
  const key = req.apiKey!;
  // A test key's Idempotency-Keys and concurrency slots are its workspace's, apart from the live ones.
  const scope = scopeInMode(key.workspaceId, key.mode);
  const idempotencyKey = headerValue(req.headers['idempotency-key']);
  const keyProblem = idempotencyKeyProblem(idempotencyKey);
  if (keyProblem) throw new ApiError('invalid_request', { details: [keyProblem] });
  if (!shedder.tryEnter()) throw new ApiError('no_capacity');

  let token: string | undefined;
  let slot: Awaited<ReturnType<typeof deps.slots.acquire>> = null;
  try {
    if (idempotencyKey !== undefined) {
      const begun = await deps.idempotency.begin(scope, idempotencyKey, fingerprint(endpoint(endpointId).path, json));
      if (begun.kind === 'replay') return replay(reply, begun.response);
      if (begun.kind === 'in_use') throw new ApiError('idempotency_key_in_use', { retryAfterSeconds: 1 });
      if (begun.kind === 'reused') throw new ApiError('idempotency_key_reused');
      token = begun.token;
    }

    slot = await deps.slots.acquire(`ws:${scope}`, key.maxConcurrency);
    if (!slot) throw new ApiError('concurrency_limited', { retryAfterSeconds: 1 });
    let response: StoredResponse;
    try {
      response = success(req.id, await lookup({ requestId: req.id, workspaceId: key.workspaceId, keyId: key.keyId, mode: key.mode }));
    } catch (err) {
      const apiError = toApiError(err, 'lookup');
      if (!isStoredOutcome(apiError.status)) throw apiError;
      const rendered = await renderError(deps, req, apiError);
      response = { status: rendered.status, body: rendered.body, headers: { ...rendered.headers, 'x-request-id': req.id } };
    }
    if (token !== undefined) {
      // The answer is decided and its money recorded: it goes out even if it cannot be kept for
      // replay (the database went away just now). Not abandoned either: the key stays locked
      // until its TTL lapses rather than let a retry pay a second time at once.
      await deps.idempotency
        .complete(scope, idempotencyKey!, token, response)
        .catch((err: unknown) => req.log.error({ err }, 'answer not stored for Idempotency-Key replay'));
      token = undefined;
    }
    return reply.status(response.status).headers(response.headers).send(response.body);
  } finally {
    shedder.leave();
    // Cleanup never replaces the answer already decided: each step is tried on its own and a
    // failure is only logged. A slot not released frees when its lease lapses
    // (CONCURRENCY_LEASE_MS); an Idempotency-Key not abandoned runs anew after IDEMPOTENCY_LOCK_TTL_MS.
    await Promise.all([
      slot?.release().catch((err) => req.log.warn({ err }, 'concurrency slot not released; it frees when its lease lapses')),
      token === undefined
        ? undefined
        : deps.idempotency
            .abandon(scope, idempotencyKey!, token)
            .catch((err) => req.log.warn({ err }, 'Idempotency-Key not abandoned; it runs anew once its lock lapses')),
    ]);
  }
}

function success(requestId: string, { answer, billing }: LookupResult): StoredResponse {
  return {
    status: 200,
    headers: {
      'x-request-id': requestId,
      'x-credits-charged': String(billing.charged),
      'x-credits-remaining': String(billing.balance),
      'x-cache': answer.cache.status,
      age: String(answer.cache.age_seconds),
    },
    body: {
      // Already in RFC 8785 key order (inCanonicalOrder, where the profile entered): the same
      // profile is the same bytes whichever way it came.
      data: answer.data,
      meta: {
        request_id: requestId,
        cache: answer.cache,
        content_hash: answer.contentHash,
        credits_charged: billing.charged,
        credits_remaining: billing.balance,
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
