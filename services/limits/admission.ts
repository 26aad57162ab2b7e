import { assertMax, type ConcurrencySlots, type SlotHandle } from './concurrency';
import type { RateDecision, RateLimiter } from './rate-limiter';
import { assertPerMinute } from './token-bucket';

/** A concurrency slot wanted with a key's admission: one of `max` in `scope`. */
export interface SlotWanted {
  scope: string;
  max: number;
}

/** A key admitted: its token's decision and, when a slot was wanted, what became of it. */
export interface KeyAdmitted {
  decision: RateDecision;
  /**
   * The slot when one was wanted and granted; null when none was free, or when the token was
   * refused (then none is taken); absent when none was wanted.
   */
  slot?: SlotHandle | null;
}

/**
 * A key's admission in one step: unless its revocation mark (`markKey`) exists, one token of its
 * bucket and, with that token, a concurrency slot. A marked key takes nothing ('marked'); a key
 * whose token is refused takes no slot. Where the marks, buckets and slots live in one Redis, one
 * round trip (admission-redis.ts).
 */
export interface KeyAdmission {
  admit(bucketKey: string, markKey: string, perMinute: number, slot?: SlotWanted): Promise<KeyAdmitted | 'marked'>;
}

/**
 * The same steps one after another, through the ports: the in-process adapters (one process, where
 * nothing else takes from the same bucket and slots in between that matters), and the reference
 * the Redis script is held to by the contract suite (test/unit/limits/admission.contract.ts).
 */
export function sequentialKeyAdmission(rateLimiter: RateLimiter, slots: ConcurrencySlots, isMarked: (markKey: string) => Promise<boolean>): KeyAdmission {
  return {
    async admit(bucketKey, markKey, perMinute, slot) {
      assertPerMinute(perMinute);
      if (slot) assertMax(slot.max);
      if (await isMarked(markKey)) return 'marked';
      const decision = await rateLimiter.take(bucketKey, perMinute);
      if (!slot) return { decision };
      return { decision, slot: decision.allowed ? await slots.acquire(slot.scope, slot.max) : null };
    },
  };
}
