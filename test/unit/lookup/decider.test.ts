import { describe, expect, it } from 'vitest';
import type { Operation } from '../../../contracts/events';
import { decideFailureAfterCharge, decideFetched, decideFromCache, decideStale, type CachedEntry, type LookupAsked, type SourceOutcome } from '../../../services/lookup/decider';

const NOW = new Date('2025-06-01T12:00:00.000Z');
const secondsAgo = (s: number) => new Date(NOW.getTime() - s * 1000);
const REQUEST_ID = 'req_01J9Z8Q4V6Y3M2K7T5R1N0B8CD';

/** docs/api.md "Prices", written out: success price and live not-found price per operation. */
const PRICES: Record<Operation, { success: number; notFound: number | null }> = {
  company: { success: 1, notFound: 1 },
  domain: { success: 4, notFound: 4 },
  person_url: { success: 1, notFound: 1 },
  person_name: { success: 3, notFound: 1 },
  search: { success: 1, notFound: null },
};
const OPERATIONS = Object.keys(PRICES) as Operation[];

const ASKED: Record<Operation, LookupAsked> = {
  company: { operation: 'company', alias: 'company:slug:acme', kind: 'company', notFoundReason: 'no_company' },
  domain: { operation: 'domain', alias: 'domain:acme.com', kind: 'company', notFoundReason: 'no_company_for_domain' },
  person_url: { operation: 'person_url', alias: 'person:id:jane', kind: 'person', notFoundReason: 'no_profile_at_url' },
  person_name: { operation: 'person_name', alias: 'person:name:jane doe', kind: 'person', notFoundReason: 'no_profile_for_name' },
  search: { operation: 'search', alias: 'search:10:acme', kind: 'search', notFoundReason: 'no_results' },
};

const PROFILE = { id: '42', name: 'Acme' };
const HASH = `sha256:${'a'.repeat(64)}`;
const cachedProfile = (age: number): CachedEntry => ({ kind: 'profile', entity: 'company:1', data: PROFILE, contentHash: HASH, fetchedAt: secondsAgo(age) });
const cachedNotFound = (age: number): CachedEntry => ({ kind: 'not_found', code: 'not_found', reason: 'no_company', fetchedAt: secondsAgo(age) });

const FOUND: SourceOutcome = { kind: 'found', entity: 'company:42', entityKind: 'company', stream: 'company-42', data: PROFILE, aliases: ['company:id:42', 'company:slug:acme'] };

/** docs/api.md "Prices": failures not caused by the caller are refunded. */
const FAILURE_CODES = ['upstream_error', 'parse_error', 'blocked', 'source_rate_limited', 'timeout', 'internal_error'] as const;

describe('decideFromCache: the pricing table from the cache side', () => {
  describe.each(OPERATIONS)('%s', (operation) => {
    const asked = ASKED[operation];
    const { success } = PRICES[operation];

    it(`given nothing cached, when looked up, then it is fetched live (MISS) and ${success} credits are charged up front`, () => {
      expect(decideFromCache({ asked, cached: undefined, maxAge: 3600, now: NOW })).toEqual({ kind: 'fetch', status: 'MISS', charge: success });
    });

    it(`given a profile older than max_age, when looked up, then it is fetched live (REFRESH), ${success} credits up front`, () => {
      expect(decideFromCache({ asked, cached: cachedProfile(3601), maxAge: 3600, now: NOW })).toEqual({ kind: 'fetch', status: 'REFRESH', charge: success });
    });

    it('given a fresh profile, when max_age is 0, then it is fetched live (REFRESH)', () => {
      expect(decideFromCache({ asked, cached: cachedProfile(0), maxAge: 0, now: NOW })).toMatchObject({ kind: 'fetch', status: 'REFRESH' });
    });

    it(`given a fresh profile, when looked up, then it is a HIT charged like a live lookup (${success}), answered from the cache`, () => {
      expect(decideFromCache({ asked, cached: cachedProfile(60), maxAge: 3600, now: NOW })).toEqual({
        kind: 'hit',
        charge: success,
        completed: { outcome: 'success', cache_status: 'HIT', credits_charged: success, error_code: null },
        answer: { data: PROFILE, contentHash: HASH, cache: { status: 'HIT', age_seconds: 60, fetched_at: secondsAgo(60).toISOString() } },
      });
    });

    it('given a fresh cached not-found, when looked up, then it is free and answers the cached code and reason', () => {
      expect(decideFromCache({ asked, cached: cachedNotFound(60), maxAge: 3600, now: NOW })).toEqual({
        kind: 'cached_not_found',
        completed: { outcome: 'not_found', cache_status: 'HIT', credits_charged: 0, error_code: 'not_found' },
        error: { code: 'not_found', reason: 'no_company' },
      });
    });

    it('given a stale cached not-found, when looked up, then it is fetched live again (REFRESH), charged up front', () => {
      expect(decideFromCache({ asked, cached: cachedNotFound(7200), maxAge: 3600, now: NOW })).toEqual({ kind: 'fetch', status: 'REFRESH', charge: success });
    });
  });

  it('given a cached unresolvable id, when looked up, then it answers unresolvable_id with its reason, free', () => {
    const cached: CachedEntry = { kind: 'not_found', code: 'unresolvable_id', reason: 'no_public_page', fetchedAt: secondsAgo(1) };
    expect(decideFromCache({ asked: ASKED.company, cached, maxAge: 3600, now: NOW })).toMatchObject({
      kind: 'cached_not_found',
      completed: { credits_charged: 0, error_code: 'unresolvable_id' },
      error: { code: 'unresolvable_id', reason: 'no_public_page' },
    });
  });

  it('given a cached not-found without code or reason, when looked up, then it answers not_found with the lookup\'s reason', () => {
    const cached: CachedEntry = { kind: 'not_found', code: null, reason: null, fetchedAt: secondsAgo(1) };
    expect(decideFromCache({ asked: ASKED.domain, cached, maxAge: 3600, now: NOW })).toMatchObject({
      completed: { error_code: null },
      error: { code: 'not_found', reason: 'no_company_for_domain' },
    });
  });
});

describe('decideFetched: the pricing and refund tables once the source answered', () => {
  describe.each(OPERATIONS)('%s', (operation) => {
    const asked = ASKED[operation];
    const { success, notFound } = PRICES[operation];

    for (const status of ['MISS', 'REFRESH'] as const) {
      it(`given a ${status} charged ${success}, when the source finds it, then nothing is refunded, the profile is stored and answered`, () => {
        const verdict = decideFetched({ asked, status, charged: success, outcome: FOUND, fetchedAt: NOW, requestId: REQUEST_ID });
        expect(verdict.settlement.refund).toBeUndefined();
        expect(verdict.settlement.completed).toEqual({ outcome: 'success', cache_status: status, credits_charged: success, error_code: null });
        expect(verdict.settlement.entityEvents).toHaveLength(1);
        const [stored] = verdict.settlement.entityEvents!;
        expect(stored!.stream).toBe('company-42');
        expect(stored!.event).toMatchObject({ type: 'ProfileFetched', data: { entity: 'company:42', kind: 'company', data: PROFILE, fetched_at: NOW.toISOString(), aliases: FOUND.kind === 'found' ? FOUND.aliases : [] }, metadata: { request_id: REQUEST_ID } });
        expect('answer' in verdict && verdict.answer).toEqual({
          data: PROFILE,
          contentHash: (stored!.event.data as { content_hash: string }).content_hash,
          cache: { status, age_seconds: 0, fetched_at: NOW.toISOString() },
        });
      });
    }

    for (const code of ['not_found', 'unresolvable_id'] as const) {
      const kept = notFound ?? 0;
      it(`given a charge of ${success}, when the source answers ${code}, then ${kept} is kept (${success - kept} refunded) and the not-found is stored`, () => {
        const verdict = decideFetched({ asked, status: 'MISS', charged: success, outcome: { kind: 'not_found', code }, fetchedAt: NOW, requestId: REQUEST_ID });
        expect(verdict.settlement.refund).toEqual({ owed: success - kept, cause: 'not_found_price' });
        expect(verdict.settlement.completed).toEqual({ outcome: 'not_found', cache_status: 'MISS', credits_charged: kept, error_code: code });
        const reason = code === 'unresolvable_id' ? 'no_public_page' : asked.notFoundReason;
        expect(verdict.settlement.entityEvents).toEqual([
          {
            stream: `notfound-${asked.alias}`,
            event: expect.objectContaining({
              type: 'ProfileNotFound',
              data: { kind: asked.kind === 'person' ? 'person' : 'company', alias: asked.alias, code, reason, fetched_at: NOW.toISOString() },
            }),
          },
        ]);
        expect('error' in verdict && verdict.error).toEqual({ code, reason });
      });
    }

    for (const code of FAILURE_CODES) {
      it(`given a charge of ${success}, when the fetch ends in ${code}, then all of it is refunded, nothing stored, the error answered`, () => {
        const outcome: SourceOutcome = { kind: 'failure', code, retryAfterSeconds: 7 };
        const verdict = decideFetched({ asked, status: 'REFRESH', charged: success, outcome, fetchedAt: NOW, requestId: REQUEST_ID });
        expect(verdict.settlement).toEqual({
          refund: { owed: success, cause: code },
          completed: { outcome: 'error', cache_status: 'REFRESH', credits_charged: 0, error_code: code },
        });
        expect('error' in verdict && verdict.error).toEqual({ code, retryAfterSeconds: 7 });
      });
    }
  });

  it('given an internal failure with a message, when decided, then the message goes with the error', () => {
    const verdict = decideFetched({
      asked: ASKED.company,
      status: 'MISS',
      charged: 1,
      outcome: { kind: 'failure', code: 'internal_error', message: 'socket hang up' },
      fetchedAt: NOW,
      requestId: REQUEST_ID,
    });
    expect('error' in verdict && verdict.error).toEqual({ code: 'internal_error', message: 'socket hang up' });
  });

  it('given search results, when found, then they are stored on the search stream under the search entity', () => {
    const results = { query: 'acme', results: [] };
    const outcome: SourceOutcome = { kind: 'found', entity: 'search:10:acme', entityKind: 'search', stream: 'search-10-acme', data: results, aliases: ['search:10:acme'] };
    const verdict = decideFetched({ asked: ASKED.search, status: 'MISS', charged: 1, outcome, fetchedAt: NOW, requestId: REQUEST_ID });
    expect(verdict.settlement.entityEvents?.[0]).toMatchObject({ stream: 'search-10-acme', event: { data: { kind: 'search', entity: 'search:10:acme' } } });
  });
});

describe('decideFailureAfterCharge: a failure on the service\'s side after the charge', () => {
  describe.each(OPERATIONS)('%s', (operation) => {
    const { success } = PRICES[operation];
    it.each(['MISS', 'REFRESH'] as const)('given a %s charged at the success price, when the lookup fails after it, then the whole charge is refunded as internal_error, unless settled meanwhile', (status) => {
      expect(decideFailureAfterCharge({ asked: ASKED[operation], status, charged: success })).toEqual({
        onlyIfUnsettled: true,
        refund: { owed: success, cause: 'internal_error' },
        completed: { outcome: 'error', cache_status: status, credits_charged: 0, error_code: 'internal_error' },
      });
    });
  });
});

describe('decideStale: on_error "stale", a cached copy in place of a failed live fetch', () => {
  describe.each(OPERATIONS)('%s', (operation) => {
    const asked = ASKED[operation];
    const { success } = PRICES[operation];

    it.each(FAILURE_CODES)(
      `given a cached profile and on_error stale, when the REFRESH fails with %s, then the copy answers STALE at the cache-hit price (${success}) and the charge is kept`,
      (code) => {
        expect(
          decideStale({ asked, onError: 'stale', status: 'REFRESH', charged: success, failure: { kind: 'failure', code }, cached: cachedProfile(7200), now: NOW }),
        ).toEqual({
          // The failed fetch's refund and the stale answer's charge net out: nothing to refund.
          settlement: { completed: { outcome: 'success', cache_status: 'STALE', credits_charged: success, error_code: code } },
          answer: { data: PROFILE, contentHash: HASH, cache: { status: 'STALE', age_seconds: 7200, fetched_at: secondsAgo(7200).toISOString() } },
          staleBecause: code,
        });
      },
    );
  });

  it('given a copy of any age (a year), when the fetch fails, then it still answers, its age told', () => {
    const year = 365 * 86_400;
    const verdict = decideStale({ asked: ASKED.company, onError: 'stale', status: 'REFRESH', charged: 1, failure: { kind: 'failure', code: 'timeout' }, cached: cachedProfile(year), now: NOW });
    expect(verdict?.answer.cache).toEqual({ status: 'STALE', age_seconds: year, fetched_at: secondsAgo(year).toISOString() });
  });

  it('given more charged up front than the cache-hit price, when answered stale, then the difference is refunded with the failure as its cause', () => {
    const verdict = decideStale({ asked: ASKED.company, onError: 'stale', status: 'REFRESH', charged: 3, failure: { kind: 'failure', code: 'blocked' }, cached: cachedProfile(10), now: NOW });
    expect(verdict?.settlement).toEqual({
      refund: { owed: 2, cause: 'blocked' },
      completed: { outcome: 'success', cache_status: 'STALE', credits_charged: 1, error_code: 'blocked' },
    });
  });

  it('given no on_error, when the fetch fails with a copy cached, then nothing changes: no stale verdict', () => {
    expect(decideStale({ asked: ASKED.company, onError: undefined, status: 'REFRESH', charged: 1, failure: { kind: 'failure', code: 'upstream_error' }, cached: cachedProfile(10), now: NOW })).toBeNull();
  });

  it('given on_error stale but nothing cached (a MISS), when the fetch fails, then no stale verdict: the failure answers', () => {
    expect(decideStale({ asked: ASKED.company, onError: 'stale', status: 'MISS', charged: 1, failure: { kind: 'failure', code: 'upstream_error' }, cached: undefined, now: NOW })).toBeNull();
  });

  it('given on_error stale and a cached not-found, when the fetch fails, then no stale verdict: a not-found is no copy to answer with', () => {
    expect(decideStale({ asked: ASKED.company, onError: 'stale', status: 'REFRESH', charged: 1, failure: { kind: 'failure', code: 'timeout' }, cached: cachedNotFound(10), now: NOW })).toBeNull();
  });
});

describe('a test key\'s call (mode test): priced 0, the cache left alone', () => {
  const NOT_FOUND: SourceOutcome = { kind: 'not_found', code: 'not_found' };
  describe.each(OPERATIONS)('%s', (operation) => {
    const asked: LookupAsked = { ...ASKED[operation], mode: 'test' };

    it('given nothing cached, when asked, then it is fetched and charged 0', () => {
      expect(decideFromCache({ asked, cached: undefined, maxAge: 60, now: NOW })).toEqual({ kind: 'fetch', status: 'MISS', charge: 0 });
    });

    it('given a found profile, when settled, then it completes at 0 credits and writes nothing to the cache', () => {
      const v = decideFetched({ asked, status: 'MISS', charged: 0, outcome: FOUND, fetchedAt: NOW, requestId: REQUEST_ID });
      expect(v.settlement.entityEvents).toBeUndefined();
      expect(v.settlement.completed).toMatchObject({ outcome: 'success', credits_charged: 0 });
      expect('answer' in v && v.answer.cache.status).toBe('MISS');
    });

    it('given a live not-found, when settled, then it costs 0, refunds nothing and caches nothing', () => {
      const v = decideFetched({ asked, status: 'MISS', charged: 0, outcome: NOT_FOUND, fetchedAt: NOW, requestId: REQUEST_ID });
      expect(v.settlement.entityEvents).toBeUndefined();
      expect(v.settlement.completed.credits_charged).toBe(0);
      expect(v.settlement.refund?.owed ?? 0).toBe(0);
    });

    it.each(FAILURE_CODES.filter((c) => c !== 'internal_error'))('given a failure %s, when settled, then the error is the live one, at 0 credits', (code) => {
      const v = decideFetched({ asked, status: 'MISS', charged: 0, outcome: { kind: 'failure', code }, fetchedAt: NOW, requestId: REQUEST_ID });
      expect('error' in v && v.error.code).toBe(code);
      expect(v.settlement.completed).toMatchObject({ outcome: 'error', credits_charged: 0, error_code: code });
    });
  });
});
