import { freeAreaEndpoints, pricedEndpoint } from '../../contracts/endpoints';
import type { PricedOperation, PricingResponse } from '../../contracts/http';

/**
 * The one price table (decisions.md "Prices"), and the pure rules that turn an outcome into
 * credits. Served as is by `GET /v1/pricing`.
 */

export type { PricedOperation };
/** Every operation a call can be billed as: the priced lookups plus the free cache and Meta areas. */
export type BilledOperation = PricedOperation | 'cache' | 'meta';
export type LookupOutcome = 'success' | 'not_found' | 'failure';

interface PriceRow {
  description: string;
  /** How the errors page names the lookup when it lists not-found prices. */
  lookupBy: string;
  success: number;
  /** null: the operation has no definitive not-found answer. */
  notFound: number | null;
}

const PRICES: Readonly<Record<PricedOperation, PriceRow>> = {
  company: { description: 'Company lookup by any company reference.', lookupBy: 'company reference', success: 1, notFound: 1 },
  domain: { description: 'Company lookup by website domain.', lookupBy: 'website domain', success: 4, notFound: 4 },
  person_url: { description: 'Person lookup by profile URL.', lookupBy: 'person', success: 1, notFound: 1 },
  person_name: { description: 'Person lookup by name.', lookupBy: 'person', success: 3, notFound: 1 },
  search: { description: 'Web search results as JSON.', lookupBy: 'search', success: 1, notFound: null },
};

const FREE_AREAS = ['cache', 'meta'] as const;

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
  const owed = chargeForOutcome(op, outcome, fromCache);
  return Math.min(charged, Math.max(0, charged - owed));
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
    free: FREE_AREAS.map((area) => ({ area, price: 0 as const, endpoints: freeAreaEndpoints(area) })),
    notes: [
      'A cache HIT of a profile is charged like a live lookup.',
      'A definitive not-found (not_found, unresolvable_id) is charged at the not-found price, and is free when answered from the cache.',
      'A call is refused with insufficient_credits when the balance is below its success price; nothing is charged.',
      'Calls refused with 400, 401, 402, 409, 422, 429 or no_capacity are never charged.',
      'upstream_error, parse_error, blocked, source_rate_limited, timeout and internal_error are refunded automatically: credits_charged and X-Credits-Charged show 0.',
    ],
  };
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
