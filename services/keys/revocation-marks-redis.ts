import type { Redis } from 'ioredis';
import { orLimiterUnavailable } from '../limits/limiter-unavailable';
import type { RevocationMarks } from './authenticator';

/**
 * Revocation marks as expiring Redis keys. The connection stays the caller's. When Redis does not
 * answer both calls throw LimiterUnavailableError: an unreadable mark counts as marked (the
 * database then decides, see KeyAuthenticator), and a mark not written makes the revoke answer
 * 503, so the caller retries it (revoking again is harmless) until every instance will see it.
 */
export function createRedisRevocationMarks(redis: Redis, keyPrefix = 'revoked-key:'): RevocationMarks {
  return {
    async mark(keyId, ttlMs) {
      await orLimiterUnavailable('revocation mark write', () => redis.set(keyPrefix + keyId, '1', 'PX', Math.max(1, Math.ceil(ttlMs))));
    },
    async isMarked(keyId) {
      return (await orLimiterUnavailable('revocation mark read', () => redis.exists(keyPrefix + keyId))) === 1;
    },
    storageKey: (keyId) => keyPrefix + keyId,
  };
}
