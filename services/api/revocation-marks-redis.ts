import type { Redis } from 'ioredis';
import type { RevocationMarks } from './auth';

/** Revocation marks as expiring Redis keys. The connection stays the caller's. */
export function createRedisRevocationMarks(redis: Redis, keyPrefix = 'revoked-key:'): RevocationMarks {
  return {
    async mark(keyId, ttlMs) {
      await redis.set(keyPrefix + keyId, '1', 'PX', Math.max(1, Math.ceil(ttlMs)));
    },
    async isMarked(keyId) {
      return (await redis.exists(keyPrefix + keyId)) === 1;
    },
  };
}
