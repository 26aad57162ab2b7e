import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../contracts/errors';
import { endpoint, type EndpointId } from '../../contracts/endpoints';
import { idempotencyKeyProblem } from '../../contracts/validation';
import { scopeInMode } from '../common/key-mode';
import { fingerprint, type StoredResponse } from '../idempotency/idempotency';

/** Headers an idempotent replay repeats from the original answer. */
const REPLAYED_HEADERS = ['x-request-id', 'x-credits-charged', 'x-credits-remaining', 'x-cache', 'age'];

/**
 * Admission and bookkeeping shared by every charged call (a lookup, a search, a batch): load
 * shedding, then the Idempotency-Key (a replay, 409 while the first runs, 422 for another body),
 * then `run`, whose answer goes out and, when definitive (`isStoredOutcome`), is kept for replay.
 * `run` throws what it does not answer itself.
 */
export async function answerOnce(
  app: FastifyInstance,
  req: FastifyRequest,
  reply: FastifyReply,
  endpointId: EndpointId,
  /** The body as sent: the Idempotency-Key fingerprint compares it canonically. */
  json: unknown,
  run: () => Promise<StoredResponse>,
) {
  const { deps, shedder } = app;
  const key = req.apiKey!;
  // A test key's Idempotency-Keys live apart from its workspace's live ones (key-mode.ts).
  const scope = scopeInMode(key.workspaceId, key.mode);
  const idempotencyKey = headerValue(req.headers['idempotency-key']);
  const keyProblem = idempotencyKeyProblem(idempotencyKey);
  if (keyProblem) throw new ApiError('invalid_request', { details: [keyProblem] });
  if (!shedder.tryEnter()) throw new ApiError('no_capacity');

  let token: string | undefined;
  try {
    if (idempotencyKey !== undefined) {
      const begun = await deps.idempotency.begin(scope, idempotencyKey, fingerprint(endpoint(endpointId).path, json));
      if (begun.kind === 'replay') return replay(reply, begun.response);
      if (begun.kind === 'in_use') throw new ApiError('idempotency_key_in_use', { retryAfterSeconds: 1 });
      if (begun.kind === 'reused') throw new ApiError('idempotency_key_reused');
      token = begun.token;
    }
    const response = await run();
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
    // Cleanup never replaces the answer already decided: a failure is only logged, and the store
    // retries the release in the background (release-retries.ts).
    if (token !== undefined) {
      await deps.idempotency
        .abandon(scope, idempotencyKey!, token)
        .catch((err) => req.log.warn({ err }, 'Idempotency-Key not released now; the release is retried in the background'));
    }
  }
}

function replay(reply: FastifyReply, stored: StoredResponse) {
  const headers: Record<string, string> = { 'idempotent-replayed': 'true' };
  for (const name of REPLAYED_HEADERS) if (stored.headers[name] !== undefined) headers[name] = stored.headers[name]!;
  return reply.status(stored.status).headers(headers).send(stored.body);
}

const headerValue = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(',') : v);
