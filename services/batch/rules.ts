import { ApiError, errorBody } from '../../contracts/errors';
import type { BatchOperation } from '../../contracts/http';
import type { LookupResult } from '../lookup/lookup-service';

/**
 * The rules of a batch call (docs/api.md "Batch"), without I/O: which items run, and what each
 * answers. The route (services/api/routes/batch.ts) does the reading and writing around them.
 */

/** An item as sent (its envelope checked), with the request id it is answered under. */
export interface BatchItem {
  operation: BatchOperation;
  body: unknown;
  id?: string;
  requestId: string;
}

/** What happens to an item before anything is charged. */
export type ItemPlan<Call> =
  /** Past the key's bucket: 429 `rate_limited`, uncharged. */
  | { kind: 'refused'; error: ApiError }
  /** Its body is one its single call would refuse: that call's 400, uncharged. */
  | { kind: 'invalid'; error: ApiError }
  | { kind: 'run'; call: Call };

/** The tokens of the key's bucket a batch drew: the admission's one, then `granted` of the rest. */
export interface BatchTokens {
  /** Tokens the batch holds, one per item from the first. */
  granted: number;
  /** Seconds until one more token is back, for the items past the bucket. */
  retryAfterSeconds: number;
}

/** An item's call from its body, or the 400 its single call would answer. */
export type Prepared<Call> = { ok: true; call: Call } | { ok: false; error: ApiError };

/**
 * Each item's body judged by its call's own rules (`prepare` throws its ApiError). Anything else
 * thrown is a bug, not a 400: it is not caught.
 */
export function prepareItems<Call>(items: readonly BatchItem[], prepare: (item: BatchItem) => Call): Prepared<Call>[] {
  return items.map((item): Prepared<Call> => {
    try {
      return { ok: true, call: prepare(item) };
    } catch (err) {
      if (err instanceof ApiError) return { ok: false, error: err };
      throw err;
    }
  });
}

/**
 * One token per item, in order: the first `granted` items are admitted, the rest are refused as
 * their single calls would be past the bucket, whatever their bodies (a single call's admission
 * comes before its body). An admitted item runs its prepared call, or answers its 400.
 */
export function planItems<Call>(prepared: readonly Prepared<Call>[], tokens: BatchTokens): ItemPlan<Call>[] {
  return prepared.map((item, index): ItemPlan<Call> => {
    if (index >= tokens.granted) return { kind: 'refused', error: new ApiError('rate_limited', { retryAfterSeconds: Math.max(1, tokens.retryAfterSeconds) }) };
    return item.ok ? { kind: 'run', call: item.call } : { kind: 'invalid', error: item.error };
  });
}

/** The extra tokens a batch of `items` asks for beyond the one its admission took (none for one item). */
export function extraTokensWanted(items: number): number {
  return Math.max(0, items - 1);
}

/** An item answered with data, in its single call's shape. */
export function itemSuccess(item: BatchItem, { answer, billing }: LookupResult) {
  return {
    ...(item.id === undefined ? {} : { id: item.id }),
    operation: item.operation,
    status: 200,
    request_id: item.requestId,
    data: answer.data,
    cache: answer.cache,
    content_hash: answer.contentHash,
    ...(answer.resolved ? { resolved: answer.resolved } : {}),
    credits_charged: billing.charged,
  };
}

/** An item answered with an error, in its single call's shape: what it cost is the error's billing (0 unless a charged 404). */
export function itemError(item: BatchItem, error: ApiError, docsUrl: string) {
  return {
    ...(item.id === undefined ? {} : { id: item.id }),
    operation: item.operation,
    status: error.status,
    request_id: item.requestId,
    error: errorBody(error, docsUrl),
    credits_charged: error.billing?.charged ?? 0,
  };
}

export type ItemResult = ReturnType<typeof itemSuccess> | ReturnType<typeof itemError>;

/** The batch's own billing: what its items cost together. */
export function batchCharged(results: readonly Pick<ItemResult, 'credits_charged'>[]): number {
  return results.reduce((sum, result) => sum + result.credits_charged, 0);
}
