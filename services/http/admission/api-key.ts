import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { SlotHandle } from '../../limits/concurrency';
import { ApiError } from '../../../contracts/errors';
import type { KeyAuthenticator } from '../../keys/authenticator';
import type { KeyUseRecorder } from '../../keys/key-use';
import type { KeyAdmission } from '../../limits/admission';
import { apiKeyBucket, type RateDecision, type RateLimiter } from '../../limits/rate-limiter';
import { slotScope } from '../../common/key-mode';
import { recordAdmissionSlot } from '../../metrics/metrics';
import type { AnonymousBucket } from './buckets';
import { readCredentials } from './credentials';

export interface KeyAdmissionDeps {
  authenticator: KeyAuthenticator;
  keyUse: KeyUseRecorder;
  rateLimiter: RateLimiter;
  /** The mark, the token and the slot in one step (Redis); without it the slow path below. */
  keyAdmission?: KeyAdmission;
  anonymous: AnonymousBucket;
}

/**
 * `apiKey`, first step: which key calls, if any (`req.apiKey`). A key sent and not valid leaves
 * none, for requireKey to refuse once the caller's bucket was charged.
 *
 * `withSlot` (single lookups): the concurrency slot is asked for with the token, in the same
 * round trip (docs/adr/0031-one-redis-round-trip-per-admission.md). Its refusal is not answered
 * here: the lookup asks again where the slot's 429 always came, after the body and the
 * Idempotency-Key checks, so every refusal keeps its order.
 */
export function identifyKey({ authenticator, keyUse, keyAdmission, anonymous }: KeyAdmissionDeps, withSlot = false): onRequestAsyncHookHandler {
  return async (req) => {
    const credentials = readCredentials(req.raw.rawHeaders);
    if (credentials.kind !== 'key') return;
    // Steady state: the revocation mark, the key's token and its slot in one Redis round trip.
    const admitted = keyAdmission
      ? await authenticator.admitCached(credentials.key, (k, markKey) =>
          keyAdmission.admit(apiKeyBucket(k.keyId), markKey, k.rateLimitPerMinute, withSlot ? { scope: slotScope(k), max: k.maxConcurrency } : undefined),
        )
      : undefined;
    if (admitted) {
      req.apiKey = admitted.key;
      const { decision, slot } = admitted.admitted;
      req.bucketDecision = decision;
      // A refused token took no slot: the bucket's 429 follows.
      if (slot !== undefined && decision.allowed) {
        req.admissionSlot = slot;
        recordAdmissionSlot(slot ? 'granted' : 'none_free');
        if (!slot) req.log.debug({ request_id: req.id }, 'no concurrency slot free at admission; asked again before the lookup');
      }
    } else {
      // A made-up key is refused from memory (the key set), so a valid one never pays per IP.
      const screening = await authenticator.screen(credentials.key);
      // Only while the set cannot vouch does an unknown key cost a database query: from an
      // address that ran dry, that attempt pays its per-IP token first.
      let paid: RateDecision | undefined;
      if (screening === 'unsure') {
        const drained = anonymous.drained.has(req.ip);
        req.log.debug({ drained }, 'key set cannot vouch (being rebuilt); the key is checked in the database');
        if (drained) paid = await anonymous.take(req.ip);
      }
      if (screening !== 'unlisted' && (!paid || paid.allowed)) req.apiKey = await authenticator.authenticate(credentials.key);
      if (!req.apiKey && paid) req.bucketDecision = paid;
    }
    // Any authenticated request uses the key, whatever its answer (429 included).
    if (req.apiKey) keyUse.note(req.apiKey.keyId);
  };
}

/** `apiKey`, last step: after the bucket, a call without a valid key is 401. */
export const requireKey: onRequestAsyncHookHandler = async (req, reply) => {
  if (req.apiKey) return;
  // RFC 9110 §11.6.1: a 401 names the scheme it wants.
  reply.header('WWW-Authenticate', 'Bearer');
  throw new ApiError('unauthorized');
};

/**
 * The slot a single lookup's admission took, now the lookup's to release (null: none was taken,
 * the lookup asks for one itself). Claimed, it is no longer released by releaseAdmissionSlot.
 */
export function claimAdmissionSlot(req: FastifyRequest): SlotHandle | null {
  const slot = req.admissionSlot;
  req.admissionSlot = null;
  return slot;
}

/**
 * A slot taken at admission for a request answered without its lookup (a 400, a replay, a 409,
 * any refusal): freed before the answer goes out, as the lookup frees its own.
 */
export async function releaseAdmissionSlot(req: FastifyRequest): Promise<void> {
  const slot = claimAdmissionSlot(req);
  await slot?.release().catch((err: unknown) => req.log.warn({ err, request_id: req.id }, 'concurrency slot not released; it frees when its lease lapses'));
}
