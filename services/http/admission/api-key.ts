import type { onRequestAsyncHookHandler } from 'fastify';
import { ApiError } from '../../../contracts/errors';
import type { KeyAuthenticator } from '../../keys/authenticator';
import type { KeyUseRecorder } from '../../keys/key-use';
import { apiKeyBucket, type RateDecision, type RateLimiter } from '../../limits/rate-limiter';
import type { AnonymousBucket } from './buckets';
import { readCredentials } from './credentials';

export interface KeyAdmissionDeps {
  authenticator: KeyAuthenticator;
  keyUse: KeyUseRecorder;
  rateLimiter: RateLimiter;
  anonymous: AnonymousBucket;
}

/**
 * `apiKey`, first step: which key calls, if any (`req.apiKey`). A key sent and not valid leaves
 * none, for requireKey to refuse once the caller's bucket was charged.
 */
export function identifyKey({ authenticator, keyUse, rateLimiter, anonymous }: KeyAdmissionDeps): onRequestAsyncHookHandler {
  return async (req) => {
    const credentials = readCredentials(req.raw.rawHeaders);
    if (credentials.kind !== 'key') return;
    // Steady state: the revocation mark and the key's token in one Redis round trip.
    const { takeUnlessMarked } = rateLimiter;
    const admitted = takeUnlessMarked
      ? await authenticator.admitCached(credentials.key, (k, markKey) => takeUnlessMarked(apiKeyBucket(k.keyId), markKey, k.rateLimitPerMinute))
      : undefined;
    if (admitted) {
      req.apiKey = admitted.key;
      req.bucketDecision = admitted.decision;
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
