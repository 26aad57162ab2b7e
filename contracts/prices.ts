import type { PricedOperation } from './http';

/**
 * The one price table: `GET /v1/pricing` serves it (services/ledger/pricing.ts), the billing rules
 * charge by it, and the endpoint descriptions of the OpenAPI document state it.
 */
export interface PriceRow {
  description: string;
  /** How the errors page names the lookup when it lists not-found prices. */
  lookupBy: string;
  success: number;
  /** null: the operation has no definitive not-found answer. */
  notFound: number | null;
}

export const PRICES: Readonly<Record<PricedOperation, PriceRow>> = {
  company: { description: 'Company lookup by any company reference.', lookupBy: 'company reference', success: 1, notFound: 1 },
  domain: { description: 'Company lookup by website domain.', lookupBy: 'website domain', success: 4, notFound: 4 },
  person_url: { description: 'Person lookup by profile URL.', lookupBy: 'person', success: 1, notFound: 1 },
  person_name: { description: 'Person lookup by name.', lookupBy: 'person', success: 3, notFound: 1 },
  search: { description: 'Web search results as JSON.', lookupBy: 'search', success: 1, notFound: null },
};

const credits = (n: number) => `${n} ${n === 1 ? 'credit' : 'credits'}`;

/** The prices of an endpoint's operations in words, e.g. "Price: 1 credit; a definitive not-found 1 credit (free from the cache)." */
export function priceSentence(operations: readonly PricedOperation[]): string {
  const parts = operations.map((op) => {
    const row = PRICES[op];
    const price = `${credits(row.success)}${row.notFound === null ? '' : `; a definitive not-found ${credits(row.notFound)} (free from the cache)`}`;
    return operations.length === 1 ? price : `\`${op}\` ${price}`;
  });
  return `Price: ${parts.join('. ')}.`;
}
