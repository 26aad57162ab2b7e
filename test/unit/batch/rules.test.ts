import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../contracts/errors';
import { batchCharged, extraTokensWanted, itemError, itemSuccess, planItems, prepareItems, type BatchItem } from '../../../services/batch/rules';

const item = (n: number, body: unknown = { url: `c${n}` }): BatchItem => ({ operation: 'company', body, requestId: `req_${n}` });
const prepare = (it: BatchItem) => {
  if ((it.body as { url?: unknown }).url === undefined) throw new ApiError('invalid_request', { details: [{ field: 'url', issue: 'required', message: 'required' }] });
  return `call ${it.requestId}`;
};

const planned = (items: BatchItem[], tokens: { granted: number; retryAfterSeconds: number }) => planItems(prepareItems(items, prepare), tokens);

describe('prepareItems and planItems', () => {
  it('given tokens for every item, when planned, then each runs with its prepared call', () => {
    const plans = planned([item(1), item(2)], { granted: 2, retryAfterSeconds: 0 });
    expect(plans).toEqual([
      { kind: 'run', call: 'call req_1' },
      { kind: 'run', call: 'call req_2' },
    ]);
  });

  it('given 2 tokens for 4 items, when planned, then the last 2 are rate_limited with the wait for a token, whatever their bodies', () => {
    const plans = planned([item(1), item(2), item(3, {}), item(4)], { granted: 2, retryAfterSeconds: 6 });
    expect(plans.map((p) => p.kind)).toEqual(['run', 'run', 'refused', 'refused']);
    const refused = plans[2]!;
    expect(refused.kind === 'refused' && [refused.error.code, refused.error.retryAfterSeconds]).toEqual(['rate_limited', 6]);
  });

  it('given an item its call would refuse, when planned, then that item alone is invalid with the call\'s details', () => {
    const plans = planned([item(1), item(2, {}), item(3)], { granted: 3, retryAfterSeconds: 0 });
    expect(plans.map((p) => p.kind)).toEqual(['run', 'invalid', 'run']);
    const invalid = plans[1]!;
    expect(invalid.kind === 'invalid' && invalid.error.details).toEqual([{ field: 'url', issue: 'required', message: 'required' }]);
  });

  it('given a preparation that fails with something other than an ApiError (a bug), when planned, then it is not hidden as a 400', () => {
    expect(() => prepareItems([item(1)], () => { throw new TypeError('bug'); })).toThrow(TypeError);
  });

  it('given a refused item whose wait is not known, then it still says at least 1 second', () => {
    const [plan] = planned([item(1)], { granted: 0, retryAfterSeconds: 0 });
    expect(plan!.kind === 'refused' && plan!.error.retryAfterSeconds).toBe(1);
  });
});

describe('tokens and totals', () => {
  it('a batch asks for one token per item beyond the one its admission took', () => {
    expect([1, 2, 100].map(extraTokensWanted)).toEqual([0, 1, 99]);
  });

  it("a batch costs what its items cost together", () => {
    expect(batchCharged([{ credits_charged: 1 }, { credits_charged: 0 }, { credits_charged: 4 }])).toBe(5);
  });
});

describe('item results', () => {
  it('given a lookup answered, then the item carries its data, cache block, hash and billing, and the caller\'s id', () => {
    const result = itemSuccess(
      { ...item(1), id: 'row-1', operation: 'domain' },
      {
        answer: { data: { name: 'A' }, contentHash: 'sha256:x', cache: { status: 'HIT', age_seconds: 5, fetched_at: '2025-01-01T00:00:00.000Z' }, resolved: { domain: 'a.com', confirmed: true } },
        billing: { charged: 4, balance: 10 },
      },
    );
    expect(result).toEqual({
      id: 'row-1',
      operation: 'domain',
      status: 200,
      request_id: 'req_1',
      data: { name: 'A' },
      cache: { status: 'HIT', age_seconds: 5, fetched_at: '2025-01-01T00:00:00.000Z' },
      content_hash: 'sha256:x',
      resolved: { domain: 'a.com', confirmed: true },
      credits_charged: 4,
    });
  });

  it('given a charged not-found, then the item keeps its not-found price; a refunded failure costs 0', () => {
    const notFound = itemError(item(1), new ApiError('not_found', { billing: { charged: 1, balance: 9 } }), 'https://x/docs');
    expect([notFound.status, notFound.credits_charged, notFound.error.code, notFound.error.doc_url]).toEqual([404, 1, 'not_found', 'https://x/docs/errors#not_found']);
    const refunded = itemError(item(2), new ApiError('timeout', { billing: { charged: 0, balance: 10 } }), 'https://x/docs');
    expect([refunded.status, refunded.credits_charged, 'id' in refunded]).toEqual([504, 0, false]);
  });
});
