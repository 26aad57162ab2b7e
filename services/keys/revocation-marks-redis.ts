import { orLimiterUnavailable } from '../limits/limiter-unavailable';
import { apiKeyBucket } from '../limits/rate-limiter';
import type { RedisClient } from '../limits/redis-connection';
import { hashTagged } from '../limits/redis-keys';
import type { RevocationMarks } from './authenticator';

/**
 * Revocation marks as expiring Redis keys. The connection stays the caller's. When Redis does not
 * answer both calls throw LimiterUnavailableError: an unreadable mark counts as marked (the
 * database then decides, see KeyAuthenticator), and a mark not written makes the revoke answer
 * 503, so the caller retries it (revoking again is harmless) until every instance will see it.
 * A key's mark carries its rate-limit bucket's hash tag: the admission script reads both at once,
 * which a Redis Cluster allows only within one hash slot.
 */
export function createRedisRevocationMarks(redis: RedisClient, keyPrefix = 'revoked-key:'): RevocationMarks {
  const storageKey = (keyId: string) => hashTagged(keyPrefix, apiKeyBucket(keyId));
  return {
    async mark(keyId, ttlMs) {
      await orLimiterUnavailable('revocation mark write', () => redis.set(storageKey(keyId), '1', 'PX', Math.max(1, Math.ceil(ttlMs))));
    },
    async isMarked(keyId) {
      return (await orLimiterUnavailable('revocation mark read', () => redis.exists(storageKey(keyId)))) === 1;
    },
    storageKey,
  };
}
