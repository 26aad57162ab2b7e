import { describe, expect, it } from 'vitest';
import {
  chargeForOutcome,
  codesBilled,
  notFoundPrice,
  notFoundPricesText,
  pricingTable,
  refundCap,
  refundOwed,
  staleAnswerPrice,
  successPrice,
  type BilledOperation,
  type PricedOperation,
} from '../../../services/ledger/pricing';
import { ERROR_CATALOGUE } from '../../../contracts/errors';
import { PricingResponse } from '../../../contracts/http';
import { decideVoid } from '../../../services/ledger/commands/void-charge';
import { call, locked, workspace } from './commands/support';

const PRICED: PricedOperation[] = ['company', 'domain', 'person_url', 'person_name', 'search'];

describe('price table (docs/api.md "Prices")', () => {
  it.each([
    ['company', 1, 1],
    ['domain', 4, 4],
    ['person_url', 1, 1],
    ['person_name', 3, 1],
    ['search', 1, 0],
    ['cache', 0, 0],
    ['meta', 0, 0],
  ] as [BilledOperation, number, number][])('%s: success %i, not-found %i', (op, success, notFound) => {
    expect(successPrice(op)).toBe(success);
    expect(notFoundPrice(op)).toBe(notFound);
  });

  it.each(['company', 'domain', 'person_url', 'person_name', 'search'] as PricedOperation[])(
    'given %s, when a stale copy answers a failed fetch (on_error stale), then it costs the cache-hit price, the success price',
    (op) => {
      expect(staleAnswerPrice(op)).toBe(chargeForOutcome(op, 'success', true));
      expect(staleAnswerPrice(op)).toBe(successPrice(op));
    },
  );

  it('the not-found prices in words, for the errors page', () => {
    expect(notFoundPricesText()).toBe('1 credit by company reference or person, 4 by website domain');
  });
});

describe('chargeForOutcome', () => {
  it('given a successful live lookup, then the success price is charged', () => {
    expect(chargeForOutcome('domain', 'success', false)).toBe(4);
  });

  it('given a cache HIT of a profile, then it is charged like a live one', () => {
    for (const op of PRICED) expect(chargeForOutcome(op, 'success', true)).toBe(successPrice(op));
  });

  it('given a definitive not-found fetched live, then the not-found price is charged', () => {
    expect(chargeForOutcome('company', 'not_found', false)).toBe(1);
    expect(chargeForOutcome('domain', 'not_found', false)).toBe(4);
    expect(chargeForOutcome('person_url', 'not_found', false)).toBe(1);
    expect(chargeForOutcome('person_name', 'not_found', false)).toBe(1);
  });

  it('given a definitive not-found answered from the cache, then it is free', () => {
    for (const op of PRICED) expect(chargeForOutcome(op, 'not_found', true)).toBe(0);
  });

  it('given a failure not caused by the caller, then nothing is kept', () => {
    for (const op of PRICED) {
      expect(chargeForOutcome(op, 'failure', false)).toBe(0);
      expect(chargeForOutcome(op, 'failure', true)).toBe(0);
    }
  });

  it('given the cache and Meta areas, then every outcome is free', () => {
    for (const op of ['cache', 'meta'] as const) {
      for (const outcome of ['success', 'not_found', 'failure'] as const) expect(chargeForOutcome(op, outcome, false)).toBe(0);
    }
  });
});

describe('refundOwed', () => {
  it('given the success price was charged up front, when the lookup fails, then all of it comes back', () => {
    expect(refundOwed(4, 'failure', 'domain')).toBe(4);
    expect(refundOwed(3, 'failure', 'person_name')).toBe(3);
  });

  it('given a person-by-name charged 3, when the answer is a live not-found, then 2 come back (not-found price 1)', () => {
    expect(refundOwed(3, 'not_found', 'person_name')).toBe(2);
  });

  it('given a domain charged 4, when the answer is a live not-found, then nothing comes back (not-found price 4)', () => {
    expect(refundOwed(4, 'not_found', 'domain')).toBe(0);
  });

  it('given a charge, when the not-found came from the cache, then all of it comes back', () => {
    expect(refundOwed(1, 'not_found', 'company', true)).toBe(1);
  });

  it('given a success, then nothing comes back', () => {
    for (const op of PRICED) expect(refundOwed(successPrice(op), 'success', op)).toBe(0);
  });

  it('never refunds more than was charged, nor a negative amount', () => {
    expect(refundOwed(0, 'failure', 'domain')).toBe(0);
    expect(refundOwed(0, 'success', 'domain')).toBe(0);
    expect(refundOwed(2, 'not_found', 'domain')).toBe(0);
  });
});

describe('pricingTable (GET /v1/pricing)', () => {
  const table = pricingTable();

  it('matches the response schema', () => {
    expect(PricingResponse.safeParse(table).success).toBe(true);
  });

  it('lists every priced operation with its endpoint and the prices of the rules above', () => {
    expect(table.operations.map((o) => o.operation)).toEqual(PRICED);
    for (const row of table.operations) {
      expect(row.success_price).toBe(successPrice(row.operation));
      if (row.not_found_price !== null) expect(row.not_found_price).toBe(notFoundPrice(row.operation));
    }
    expect(table.operations.find((o) => o.operation === 'domain')).toMatchObject({
      endpoint: '/v1/domain',
      success_price: 4,
      not_found_price: 4,
      not_found_free_from_cache: true,
    });
    expect(table.operations.find((o) => o.operation === 'search')).toMatchObject({
      endpoint: '/v1/search',
      not_found_price: null,
      not_found_free_from_cache: false,
    });
  });

  it('lists the cache, webhooks, watches and Meta areas at 0, and says a watch\'s refresh is charged', () => {
    expect(table.free.map((a) => [a.area, a.price])).toEqual([
      ['cache', 0],
      ['webhooks', 0],
      ['watches', 0],
      ['meta', 0],
    ]);
    expect(table.free[0]!.endpoints).toContain('GET /v1/cache/stats');
    expect(table.free[1]!.endpoints).toContain('POST /v1/webhook-endpoints/{id}/rotate-secret');
    expect(table.free[2]!.endpoints).toContain('POST /v1/watches/{id}/run');
    expect(table.free[3]!.endpoints).toContain('GET /v1/pricing');
    expect(table.notes.some((note) => note.includes('each refresh of a watch'))).toBe(true);
  });

  it('returns a fresh copy each time, so a caller cannot alter the table', () => {
    const first = pricingTable();
    first.free[0]!.endpoints.push('mutated');
    expect(pricingTable().free[0]!.endpoints).not.toContain('mutated');
  });
});

describe('refunded codes, from the error catalogue', () => {
  it('given the catalogue, then the refunded codes are those it bills "refunded", service_unavailable among them', () => {
    expect(codesBilled('refunded')).toEqual(['upstream_error', 'parse_error', 'blocked', 'source_rate_limited', 'timeout', 'internal_error', 'service_unavailable']);
  });

  it('given GET /v1/pricing, then its note names every refunded code of the catalogue and only those', () => {
    const note = pricingTable().notes.find((n) => n.includes('refunded automatically'))!;
    for (const code of Object.keys(ERROR_CATALOGUE) as (keyof typeof ERROR_CATALOGUE)[]) {
      expect(new RegExp(`\\b${code}\\b`).test(note), code).toBe(ERROR_CATALOGUE[code].billing === 'refunded');
    }
  });

  it('given a charge of 3, when the call ends in 503 service_unavailable, then the void refunds all 3 and records that code', () => {
    const decision = decideVoid(locked(workspace(5), { credits: 3, refundedCredits: null, settled: false }), { ...call, cacheStatus: 'MISS' });
    expect(decision.result).toEqual({ refunded: 3, kept: 0 });
    const completed = decision.events.find((e) => e.type === 'LookupCompleted')!.data as { error_code: keyof typeof ERROR_CATALOGUE; credits_charged: number };
    expect(completed).toMatchObject({ error_code: 'service_unavailable', credits_charged: 0 });
    expect(ERROR_CATALOGUE[completed.error_code].billing).toBe('refunded');
  });
});

describe('refundCap', () => {
  it.each([
    [3, 3, 3],
    [3, 5, 3],
    [3, -1, 0],
    [3, 2, 2],
    [0, 4, 0],
  ])('given %i charged and %i owed, then %i comes back', (charged, owed, back) => {
    expect(refundCap(charged, owed)).toBe(back);
  });
});
