import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../contracts/errors';
import { isStoredOutcome, type StoredResponse } from '../../idempotency/idempotency';
import { slotScope } from '../../common/key-mode';
import { claimAdmissionSlot } from '../../http/admission/api-key';
import type { LookupResult } from '../../lookup/lookup-service';
import { renderError, toApiError } from '../../http/errors';
import { answerOnce } from '../../http/idempotent-answer';
import { LOOKUP_CALLS, type LookupCall, type LookupEndpointId } from '../lookup-calls';
import { route } from '../../http/route';
import { DEPS_PLUGIN } from '../../http/deps-plugin';

/** The charged lookups and search. */
export const lookupRoutes = fp(
  async (app) => {
    const { lookups } = app.deps;

    // The reference is judged first: a malformed one is a 400 before the Idempotency-Key is looked at.
    const answer = (req: FastifyRequest, reply: FastifyReply, id: LookupEndpointId, json: unknown, call: LookupCall) =>
      answerOnce(app, req, reply, id, json, () => runLookup(app, req, call));
    route(app, 'lookupCompany', async ({ req, reply, body, json }) => answer(req, reply, 'lookupCompany', json, LOOKUP_CALLS.lookupCompany(lookups, body)));
    route(app, 'lookupDomain', async ({ req, reply, body, json }) => answer(req, reply, 'lookupDomain', json, LOOKUP_CALLS.lookupDomain(lookups, body)));
    route(app, 'lookupPerson', async ({ req, reply, body, json }) => answer(req, reply, 'lookupPerson', json, LOOKUP_CALLS.lookupPerson(lookups, body)));
    route(app, 'search', async ({ req, reply, body, json }) => answer(req, reply, 'search', json, LOOKUP_CALLS.search(lookups, body)));
  },
  { name: 'routes-lookups', dependencies: [DEPS_PLUGIN] },
);

/**
 * One lookup of a single call: the workspace's concurrency slot, the lookup, its answer (an error
 * the lookup settled is answered here, with its billing, so that a 404 is kept for replay).
 */
async function runLookup(app: FastifyInstance, req: FastifyRequest, call: LookupCall): Promise<StoredResponse> {
  const { deps } = app;
  const key = req.apiKey!;
  // The slot taken with the key's token, else one asked for now. A test key's calls take slots of
  // their own: testing never holds a live call back.
  const slot = claimAdmissionSlot(req) ?? (await deps.slots.acquire(slotScope(key), key.maxConcurrency));
  if (!slot) throw new ApiError('concurrency_limited', { retryAfterSeconds: 1 });
  try {
    const result = await call({ requestId: req.id, workspaceId: key.workspaceId, keyId: key.keyId, mode: key.mode });
    if (result.staleBecause) {
      req.log.warn({ request_id: req.id, failure: result.staleBecause, age_seconds: result.answer.cache.age_seconds }, 'live fetch failed; answered with the cached copy (on_error: stale)');
    }
    return success(req.id, result);
  } catch (err) {
    const apiError = toApiError(err, 'apiKey');
    if (!isStoredOutcome(apiError.status)) throw apiError;
    const rendered = await renderError(deps, req, apiError);
    return { status: rendered.status, body: rendered.body, headers: { ...rendered.headers, 'x-request-id': req.id } };
  } finally {
    // A slot not released frees when its lease lapses (CONCURRENCY_LEASE_MS); the answer stands.
    await slot.release().catch((err) => req.log.warn({ err }, 'concurrency slot not released; it frees when its lease lapses'));
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
