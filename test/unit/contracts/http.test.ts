import { describe, expect, it } from 'vitest';
import {
  AuditResponse,
  CacheEntryResponse,
  CompanyCacheRequest,
  CompanyLookupRequest,
  CompanyLookupResponse,
  CreditsGrantRequest,
  DomainLookupRequest,
  DomainLookupResponse,
  ErrorEnvelope,
  KeyCreateRequest,
  KeyCreatedResponse,
  LedgerQuery,
  PersonLookupRequest,
  SearchRequest,
  UsageQuery,
  WorkspaceCreateRequest,
  WorkspacePatchRequest,
} from '../../../contracts/http';
import { ApiError, errorBody } from '../../../contracts/errors';

const META = {
  request_id: 'req_01J9Z8Q4V6Y3M2K7T5R1N0B8CD',
  cache: { status: 'HIT', age_seconds: 12, fetched_at: '2025-06-01T12:00:00.000Z' },
  content_hash: `sha256:${'a'.repeat(64)}`,
  credits_charged: 1,
  credits_remaining: 99,
};

const COMPANY = {
  id: '1337',
  urn: 'urn:li:company:1337',
  slug: 'acme-robotics',
  url: 'https://www.linkedin.com/company/acme-robotics',
  name: 'Acme Robotics',
  tagline: null,
  description: null,
  website: 'https://www.acmerobotics.com',
  industry: 'Robotics',
  company_size: { min: 51, max: 200 },
  employee_count: 120,
  follower_count: 5000,
  headquarters: { city: 'Boston', region: 'MA', country: 'US' },
  founded_year: 2011,
  type: 'Privately Held',
  specialties: ['robots'],
};

describe('lookup request bodies', () => {
  it.each([
    [CompanyLookupRequest, 'url'],
    [DomainLookupRequest, 'domain'],
    [PersonLookupRequest, 'url'],
    [CompanyCacheRequest, 'url'],
  ] as const)('%#: strict, non-empty, at most 2048 characters', (schema, field) => {
    expect(schema.safeParse({ [field]: 'x' }).success).toBe(true);
    expect(schema.safeParse({ [field]: '' }).success).toBe(false);
    expect(schema.safeParse({ [field]: 'x'.repeat(2049) }).success).toBe(false);
    expect(schema.safeParse({ [field]: 'x', extra: 1 }).success).toBe(false);
    expect(schema.safeParse({}).success).toBe(false);
  });

  it('cache requests take no max_age', () => {
    expect(CompanyCacheRequest.safeParse({ url: 'x', max_age: 5 }).success).toBe(false);
  });

  it('search: query 1-256, limit 1-50 default 10', () => {
    expect(SearchRequest.parse({ query: 'q' })).toEqual({ query: 'q', limit: 10, max_age: 2592000 });
    expect(SearchRequest.safeParse({ query: 'q'.repeat(256), limit: 50 }).success).toBe(true);
    expect(SearchRequest.safeParse({ query: 'q'.repeat(257) }).success).toBe(false);
    expect(SearchRequest.safeParse({ query: 'q', limit: 51 }).success).toBe(false);
    expect(SearchRequest.safeParse({ query: 'q', limit: 2.5 }).success).toBe(false);
  });
});

describe('response envelopes', () => {
  it('a company success envelope validates, and a domain one needs meta.resolved', () => {
    expect(CompanyLookupResponse.safeParse({ data: COMPANY, meta: META }).success).toBe(true);
    expect(DomainLookupResponse.safeParse({ data: COMPANY, meta: META }).success).toBe(false);
    expect(
      DomainLookupResponse.safeParse({ data: COMPANY, meta: { ...META, resolved: { domain: 'acmerobotics.com', confirmed: true } } }).success,
    ).toBe(true);
  });

  it('refuses a cache status outside HIT, MISS, REFRESH, STALE', () => {
    expect(CompanyLookupResponse.safeParse({ data: COMPANY, meta: { ...META, cache: { ...META.cache, status: 'STALE' } } }).success).toBe(true);
    expect(CompanyLookupResponse.safeParse({ data: COMPANY, meta: { ...META, cache: { ...META.cache, status: 'EXPIRED' } } }).success).toBe(false);
  });

  it('takes on_error "stale" on the lookups and search, nothing else', () => {
    expect(CompanyLookupRequest.safeParse({ url: 'acme', on_error: 'stale' }).success).toBe(true);
    expect(SearchRequest.safeParse({ query: 'acme', on_error: 'stale' }).success).toBe(true);
    expect(CompanyLookupRequest.safeParse({ url: 'acme', on_error: 'error' }).success).toBe(false);
    expect(CompanyLookupRequest.parse({ url: 'acme' })).not.toHaveProperty('on_error');
  });

  it('the cache area answer carries nulls when nothing is cached', () => {
    const data = { cached: false, found: false, fetched_at: null, age_seconds: null, content_hash: null };
    const meta = { request_id: META.request_id, credits_charged: 0, credits_remaining: 10 };
    expect(CacheEntryResponse.safeParse({ data, meta }).success).toBe(true);
  });

  it('an error envelope allows credits_remaining null (no workspace known)', () => {
    const envelope = {
      error: errorBody(new ApiError('unauthorized'), 'http://x/docs'),
      meta: { request_id: META.request_id, credits_charged: 0, credits_remaining: null },
    };
    expect(ErrorEnvelope.safeParse(envelope).success).toBe(true);
  });
});

describe('admin bodies', () => {
  it('workspace create: name 1-200, credits >= 0 default 0, max_concurrency 1-1000 default 8', () => {
    expect(WorkspaceCreateRequest.parse({ name: 'Acme' })).toEqual({ name: 'Acme', credits: 0, max_concurrency: 8 });
    expect(WorkspaceCreateRequest.safeParse({ name: '' }).success).toBe(false);
    expect(WorkspaceCreateRequest.safeParse({ name: 'n'.repeat(201) }).success).toBe(false);
    expect(WorkspaceCreateRequest.safeParse({ name: 'a', credits: -1 }).success).toBe(false);
    expect(WorkspaceCreateRequest.safeParse({ name: 'a', max_concurrency: 0 }).success).toBe(false);
    expect(WorkspaceCreateRequest.safeParse({ name: 'a', max_concurrency: 1001 }).success).toBe(false);
    expect(WorkspaceCreateRequest.safeParse({ name: 'a', other: 1 }).success).toBe(false);
  });

  it('patch needs max_concurrency; a grant needs a positive integer amount', () => {
    expect(WorkspacePatchRequest.safeParse({}).success).toBe(false);
    expect(WorkspacePatchRequest.parse({ max_concurrency: 3 })).toEqual({ max_concurrency: 3 });
    expect(CreditsGrantRequest.safeParse({ amount: 0 }).success).toBe(false);
    expect(CreditsGrantRequest.safeParse({ amount: 1.5 }).success).toBe(false);
    expect(CreditsGrantRequest.parse({ amount: 100, reason: 'trial' })).toEqual({ amount: 100, reason: 'trial' });
  });

  it('key create: rate_limit_per_minute 1-100000 default 600, mode live by default; the created key has the lk_live_ or lk_test_ shape', () => {
    expect(KeyCreateRequest.parse({})).toEqual({ rate_limit_per_minute: 600, mode: 'live' });
    expect(KeyCreateRequest.parse({ mode: 'test' })).toEqual({ rate_limit_per_minute: 600, mode: 'test' });
    expect(KeyCreateRequest.safeParse({ mode: 'sandbox' }).success).toBe(false);
    expect(KeyCreateRequest.safeParse({ rate_limit_per_minute: 100001 }).success).toBe(false);
    const created = {
      id: 'key_1',
      key: `lk_live_${'A1'.repeat(16)}`,
      prefix: 'lk_live_A1A1',
      name: null,
      rate_limit_per_minute: 600,
      mode: 'live',
      created_at: '2025-06-01T12:00:00Z',
    };
    expect(KeyCreatedResponse.safeParse(created).success).toBe(true);
    expect(KeyCreatedResponse.safeParse({ ...created, key: `lk_test_${'A1'.repeat(16)}`, mode: 'test' }).success).toBe(true);
    expect(KeyCreatedResponse.safeParse({ ...created, key: 'lk_test_x' }).success).toBe(false);
  });

  it('ledger query: after >= 0, limit 1-1000 default 100, from query strings', () => {
    expect(LedgerQuery.parse({})).toEqual({ limit: 100, mode: 'live' });
    expect(LedgerQuery.parse({ request_id: 'req_x', after: '0', limit: '1000', mode: 'all' })).toEqual({ request_id: 'req_x', after: 0, limit: 1000, mode: 'all' });
    expect(LedgerQuery.safeParse({ mode: 'both' }).success).toBe(false);
    expect(LedgerQuery.safeParse({ limit: '0' }).success).toBe(false);
    expect(LedgerQuery.safeParse({ after: '-1' }).success).toBe(false);
  });

  it('usage query: from/to are days or instants', () => {
    expect(UsageQuery.safeParse({ from: '2025-06-01', to: '2025-06-02T00:00:00Z', key_id: 'key_1' }).success).toBe(true);
    expect(UsageQuery.safeParse({ from: 'yesterday' }).success).toBe(false);
  });

  it('audit answer', () => {
    expect(AuditResponse.safeParse({ ok: true, events: 10, workspaces: 2, mismatches: [], chains: { checked: 2, broken: [] } }).success).toBe(true);
    const broken = { workspace_id: 'ws_1', position: 7, stream: 'workspace-ws_1', version: 3, field: 'hash', expected: 'ab', actual: 'cd' };
    expect(AuditResponse.safeParse({ ok: false, events: 10, workspaces: 2, mismatches: [], chains: { checked: 2, broken: [broken] } }).success).toBe(true);
  });
});
