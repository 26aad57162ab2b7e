import { contentHash, inCanonicalOrder } from '../../contracts/content-hash';
import { type ErrorCode, type ErrorReason, isErrorReason, type ReasonOf } from '../../contracts/errors';
import type { OnError } from '../../contracts/http';
import { newEvent, streams, type EventData, type KeyMode, type Operation, type RefundedErrorCode } from '../../contracts/events';
import { priceInMode, usesCache } from '../common/key-mode';
import type { SettleCommand } from '../ledger/ledger';
import { chargeForOutcome, refundOwed, staleAnswerPrice, successPrice } from '../ledger/pricing';
import { ageSeconds, cacheDecision, type CacheDecision } from './freshness';

/**
 * What a lookup does, decided without I/O (docs/api.md "Prices", "Billing
 * rules"): given what the cache holds and what the source answered, which charge, which
 * settlement, which events and which answer or error. The lookup service does the reading and
 * writing around these two decisions.
 */

/** How an answer was served: the cache decision, or STALE (a cached copy in place of a failed fetch). */
export type ServedStatus = CacheDecision | 'STALE';

export interface LookupAnswer {
  data: Record<string, unknown>;
  contentHash: string;
  cache: { status: ServedStatus; age_seconds: number; fetched_at: string };
  resolved?: { domain: string; confirmed: boolean };
}

/** One lookup as asked: what it is billed as and where its answer is cached. */
export interface LookupAsked {
  operation: Operation;
  /** The cache alias of the reference asked. */
  alias: string;
  kind: 'company' | 'person' | 'search';
  /** `error.reason` of a not-found for this kind of reference. */
  notFoundReason: ReasonOf<NotFoundCode>;
  /** The caller's key's: a test call costs nothing and leaves the cache alone. Absent: live. */
  mode?: KeyMode;
}

/** Credits in the asked call's mode (services/common/key-mode.ts). */
const inMode = (asked: Pick<LookupAsked, 'mode'>, credits: number) => priceInMode(asked.mode ?? 'live', credits);

export type NotFoundCode = 'not_found' | 'unresolvable_id';

/** What the cache holds for an alias. */
export type CachedEntry =
  | { kind: 'profile'; entity: string; data: Record<string, unknown>; contentHash: string; fetchedAt: Date }
  | { kind: 'not_found'; code: NotFoundCode | null; reason: string | null; fetchedAt: Date };

/** What the live fetch came back with. */
export type SourceOutcome =
  | { kind: 'found'; entity: string; entityKind: 'company' | 'person' | 'search'; stream: string; data: Record<string, unknown>; aliases: string[] }
  | { kind: 'not_found'; code: NotFoundCode }
  | { kind: 'failure'; code: RefundedErrorCode; retryAfterSeconds?: number; message?: string };

/** The `LookupCompleted` of the call, less who made it. */
export type Completed = SettleCommand['completed'];

/** An error answer, to be raised with the call's billing. */
export interface LookupErrorAnswer {
  code: ErrorCode;
  reason?: ErrorReason;
  retryAfterSeconds?: number;
  message?: string;
}

export type CacheVerdict =
  /** Served from the cache, charged like a live lookup; the completion commits with the charge. */
  | { kind: 'hit'; charge: number; completed: Completed; answer: LookupAnswer }
  /** A cached not-found: free, recorded as uncharged. */
  | { kind: 'cached_not_found'; completed: Completed; error: LookupErrorAnswer }
  /** Fetched live: the success price is charged up front, settled once the source answers. */
  | { kind: 'fetch'; status: 'MISS' | 'REFRESH'; charge: number };

/** Settles a charge made up front: what the fetch stored, what goes back, how the call completed. */
export type Settlement = Pick<SettleCommand, 'entityEvents' | 'refund' | 'completed'>;

/** Settles a charge whose lookup failed on the service's side, unless it was settled meanwhile. */
export type FailureSettlement = Pick<SettleCommand, 'refund' | 'completed' | 'onlyIfUnsettled'>;

/** A settled charge whose call is answered with data. */
type AnsweredVerdict = { settlement: Settlement; answer: LookupAnswer };

export type FetchVerdict = AnsweredVerdict | { settlement: Settlement; error: LookupErrorAnswer };

export function decideFromCache(given: { asked: LookupAsked; cached: CachedEntry | undefined; maxAge: number; now: Date }): CacheVerdict {
  const { asked, cached, maxAge, now } = given;
  if (cached === undefined) return { kind: 'fetch', status: 'MISS', charge: inMode(asked, successPrice(asked.operation)) };
  const status = cacheDecision({ fetchedAt: cached.fetchedAt }, maxAge, now);
  if (status !== 'HIT') return { kind: 'fetch', status, charge: inMode(asked, successPrice(asked.operation)) };

  if (cached.kind === 'not_found') {
    return {
      kind: 'cached_not_found',
      completed: { outcome: 'not_found', cache_status: 'HIT', credits_charged: inMode(asked, chargeForOutcome(asked.operation, 'not_found', true)), error_code: cached.code },
      error: { code: cached.code ?? 'not_found', reason: cached.reason !== null && isErrorReason(cached.reason) ? cached.reason : asked.notFoundReason },
    };
  }
  const price = inMode(asked, chargeForOutcome(asked.operation, 'success', true));
  return {
    kind: 'hit',
    charge: price,
    completed: { outcome: 'success', cache_status: 'HIT', credits_charged: price, error_code: null },
    answer: {
      data: cached.data,
      contentHash: cached.contentHash,
      cache: { status: 'HIT', age_seconds: ageSeconds(cached.fetchedAt, now), fetched_at: cached.fetchedAt.toISOString() },
    },
  };
}

export function decideFetched(given: {
  asked: LookupAsked;
  status: 'MISS' | 'REFRESH';
  /** Credits charged up front (the success price). */
  charged: number;
  outcome: SourceOutcome;
  fetchedAt: Date;
  requestId: string;
}): FetchVerdict {
  const { asked, status, charged, outcome, fetchedAt, requestId } = given;
  const fetched_at = fetchedAt.toISOString();

  if (outcome.kind === 'found') {
    const hash = contentHash(outcome.data);
    const profile: EventData<'ProfileFetched'> = { entity: outcome.entity, kind: outcome.entityKind, data: outcome.data, content_hash: hash, fetched_at, aliases: outcome.aliases };
    return {
      settlement: {
        ...(usesCache(asked.mode ?? 'live') ? { entityEvents: [{ stream: outcome.stream, event: newEvent('ProfileFetched', profile, requestId) }] } : {}),
        completed: { outcome: 'success', cache_status: status, credits_charged: inMode(asked, chargeForOutcome(asked.operation, 'success', false)), error_code: null },
      },
      answer: { data: inCanonicalOrder(outcome.data), contentHash: hash, cache: { status, age_seconds: 0, fetched_at } },
    };
  }

  if (outcome.kind === 'not_found') {
    const reason = outcome.code === 'unresolvable_id' ? 'no_public_page' : asked.notFoundReason;
    const notFound: EventData<'ProfileNotFound'> = { kind: asked.kind === 'person' ? 'person' : 'company', alias: asked.alias, code: outcome.code, reason, fetched_at };
    return {
      settlement: {
        ...(usesCache(asked.mode ?? 'live') ? { entityEvents: [{ stream: streams.notFound(asked.alias), event: newEvent('ProfileNotFound', notFound, requestId) }] } : {}),
        refund: { owed: refundOwed(charged, 'not_found', asked.operation), cause: 'not_found_price' },
        completed: { outcome: 'not_found', cache_status: status, credits_charged: inMode(asked, chargeForOutcome(asked.operation, 'not_found', false)), error_code: outcome.code },
      },
      error: { code: outcome.code, reason },
    };
  }

  return {
    settlement: {
      refund: { owed: refundOwed(charged, 'failure', asked.operation), cause: outcome.code },
      completed: { outcome: 'error', cache_status: status, credits_charged: chargeForOutcome(asked.operation, 'failure', false), error_code: outcome.code },
    },
    error: {
      code: outcome.code,
      ...(outcome.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: outcome.retryAfterSeconds }),
      ...(outcome.message === undefined ? {} : { message: outcome.message }),
    },
  };
}

/**
 * A charged live lookup failed on the service's side after its charge (a write refused, a bug):
 * settled as an `internal_error`, the whole charge refunded (docs/api.md "Prices").
 * `onlyIfUnsettled`: a failed settlement that committed after all is left as it is.
 */
export function decideFailureAfterCharge(given: { asked: Pick<LookupAsked, 'operation'>; status: 'MISS' | 'REFRESH'; charged: number }): FailureSettlement {
  const { asked, status, charged } = given;
  return {
    onlyIfUnsettled: true,
    refund: { owed: refundOwed(charged, 'failure', asked.operation), cause: 'internal_error' },
    completed: { outcome: 'error', cache_status: status, credits_charged: chargeForOutcome(asked.operation, 'failure', false), error_code: 'internal_error' },
  };
}

/** A live fetch that failed with a refunded error. */
export type FetchFailure = Extract<SourceOutcome, { kind: 'failure' }>;

/** A stale copy answers the call: the settlement of its charge and the answer. */
export type StaleVerdict = AnsweredVerdict & {
  /** The failure of the live fetch the copy stands in for. */
  staleBecause: RefundedErrorCode;
};

/**
 * `on_error: "stale"` (docs/api.md, "A stale copy when the live fetch fails"): the live fetch failed
 * with a refunded error; a cached profile of any age answers instead, at the cache-hit price. The
 * charge taken up front is settled, not charged again: the failed fetch's refund and the stale
 * answer's charge net out (both the success price today), and only a difference goes back, with
 * the failure's code as its cause. `LookupCompleted` records success, `STALE`, the price kept and,
 * in `error_code`, the failure it stood in for. Null: no flag, no copy, or a cached not-found (no
 * copy to answer with): the failure is answered as without the flag.
 */
export function decideStale(given: {
  asked: Pick<LookupAsked, 'operation'>;
  onError: OnError;
  status: 'MISS' | 'REFRESH';
  /** Credits charged up front (the success price). */
  charged: number;
  failure: FetchFailure;
  /** The copy the cache decision read. */
  cached: CachedEntry | undefined;
  now: Date;
}): StaleVerdict | null {
  const { asked, onError, charged, failure, cached, now } = given;
  if (onError !== 'stale' || cached?.kind !== 'profile') return null;
  // The stale answer is a success from the cache: the refund rule of any charge settled so.
  const owed = refundOwed(charged, 'success', asked.operation, true);
  return {
    settlement: {
      ...(owed > 0 ? { refund: { owed, cause: failure.code } } : {}),
      completed: { outcome: 'success', cache_status: 'STALE', credits_charged: staleAnswerPrice(asked.operation), error_code: failure.code },
    },
    answer: {
      data: cached.data,
      contentHash: cached.contentHash,
      cache: { status: 'STALE', age_seconds: ageSeconds(cached.fetchedAt, now), fetched_at: cached.fetchedAt.toISOString() },
    },
    staleBecause: failure.code,
  };
}
