import { endpoint, freeAreaEndpoints, pricedEndpoint } from '../../contracts/endpoints';
import { ERROR_CATALOGUE, ERROR_CODES, type BillingRule, type ErrorCode } from '../../contracts/errors';
import { BATCH_MAX_ITEMS, FREE_AREAS, type PricedOperation, type PricingResponse } from '../../contracts/http';
import { PRICES } from '../../contracts/prices';

/**
 * The pure rules that turn an outcome into credits, by the one price table (contracts/prices.ts,
 * docs/api.md "Prices"), and `GET /v1/pricing`, which serves that table.
 */

export type { PricedOperation };
/** Every operation a call can be billed as: the priced lookups plus the free cache and Meta areas. */
export type BilledOperation = PricedOperation | 'cache' | 'meta';
export type LookupOutcome = 'success' | 'not_found' | 'failure';

function isPriced(op: BilledOperation): op is PricedOperation {
  return op !== 'cache' && op !== 'meta';
}

/** Credits for a successful call; a cache HIT of a profile costs the same as a live fetch. */
export function successPrice(op: BilledOperation): number {
  return isPriced(op) ? PRICES[op].success : 0;
}

/** Credits for a definitive not-found fetched live; 0 where the operation has no not-found answer. */
export function notFoundPrice(op: BilledOperation): number {
  return isPriced(op) ? (PRICES[op].notFound ?? 0) : 0;
}

/**
 * Credits for a stale copy answered in place of a failed live fetch (`on_error: "stale"`): the
 * cache-hit price, as for any answer from the cache.
 */
export function staleAnswerPrice(op: BilledOperation): number {
  return chargeForOutcome(op, 'success', true);
}

/** What the call finally costs once its outcome is known. */
export function chargeForOutcome(op: BilledOperation, outcome: LookupOutcome, fromCache: boolean): number {
  switch (outcome) {
    case 'success':
      return successPrice(op);
    case 'not_found':
      return fromCache ? 0 : notFoundPrice(op);
    case 'failure':
      // Failures not caused by the caller are refunded in full.
      return 0;
  }
}

/**
 * What must be refunded of an amount already `charged` (the success price taken up front) once
 * the outcome is known: everything for a failure, the difference for a cheaper not-found,
 * nothing for a success. Never more than was charged, never negative.
 */
export function refundOwed(charged: number, outcome: LookupOutcome, op: BilledOperation, fromCache = false): number {
  return refundCap(charged, charged - chargeForOutcome(op, outcome, fromCache));
}

/** The refund cap: a refund is never more than was charged, never negative. */
export function refundCap(charged: number, owed: number): number {
  return Math.min(charged, Math.max(0, owed));
}

/** The codes the catalogue bills by `rule`, in catalogue order. */
export function codesBilled(rule: BillingRule): ErrorCode[] {
  return ERROR_CODES.filter((code) => ERROR_CATALOGUE[code].billing === rule);
}

/** "a, b and c". */
const listed = (items: readonly string[]) => (items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`);

/** The never-charged rule in words: whole statuses where every code of it is never charged, the other codes by name. */
function neverChargedText(): string {
  const neverCharged = codesBilled('never_charged');
  const statuses = [...new Set(ERROR_CODES.map((code) => ERROR_CATALOGUE[code].status))].sort((a, b) => a - b);
  const wholeStatuses = statuses.filter((status) => ERROR_CODES.every((code) => ERROR_CATALOGUE[code].status !== status || ERROR_CATALOGUE[code].billing === 'never_charged'));
  const byName = neverCharged.filter((code) => !wholeStatuses.includes(ERROR_CATALOGUE[code].status));
  return listed([...wholeStatuses.map(String), ...byName]).replace(/ and ([^ ]+)$/, ' or $1');
}

/** The body of `GET /v1/pricing`. */
export function pricingTable(): PricingResponse {
  return {
    unit: 'credit',
    operations: (Object.keys(PRICES) as PricedOperation[]).map((operation) => {
      const row = PRICES[operation];
      const { method, path } = pricedEndpoint(operation);
      if (method !== 'POST') throw new Error(`priced operation ${operation} is not a POST`);
      return {
        operation,
        method,
        endpoint: path,
        description: row.description,
        success_price: row.success,
        not_found_price: row.notFound,
        not_found_free_from_cache: row.notFound !== null,
      };
    }),
    batch: batchPricing(),
    free: FREE_AREAS.map((area) => ({ area, price: 0 as const, endpoints: freeAreaEndpoints(area) })),
    notes: [
      'A cache HIT of a profile is charged like a live lookup.',
      `A definitive not-found (${codesBilled('not_found_price').join(', ')}) is charged at the not-found price, and is free when answered from the cache.`,
      'A call is refused with insufficient_credits when the balance is below its success price; nothing is charged.',
      `Calls refused with ${neverChargedText()} are never charged.`,
      `${listed(codesBilled('refunded'))} are refunded automatically: credits_charged and X-Credits-Charged show 0.`,
      `${endpoint('batch').method} ${endpoint('batch').path} costs the sum of its items' prices, each item charged, refunded and refused as its single call.`,
      'Creating and reading watches is free; each refresh of a watch (on its schedule, or POST /v1/watches/{id}/run) is charged like a live lookup of its operation (company, domain, or person_url / person_name by its reference), refunded on failure.',
    ],
  };
}

function batchPricing(): PricingResponse['batch'] {
  // Its row's literal type says POST: no check at run time is needed.
  const { method, path } = endpoint('batch');
  return { method, endpoint: path, max_items: BATCH_MAX_ITEMS, price: 'sum_of_items' };
}

/**
 * The live not-found prices in words, for the errors page, e.g. "1 credit by company reference or
 * person, 4 by website domain".
 */
export function notFoundPricesText(): string {
  const byPrice = new Map<number, string[]>();
  for (const row of Object.values(PRICES)) {
    if (row.notFound === null) continue;
    const names = byPrice.get(row.notFound) ?? [];
    if (!names.includes(row.lookupBy)) names.push(row.lookupBy);
    byPrice.set(row.notFound, names);
  }
  return [...byPrice]
    .sort(([a], [b]) => a - b)
    .map(([price, names], i) => `${price}${i === 0 ? (price === 1 ? ' credit' : ' credits') : ''} by ${names.join(' or ')}`)
    .join(', ');
}
