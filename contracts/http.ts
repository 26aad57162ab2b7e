import { z } from 'zod';
import { DETAIL_ISSUES, ERROR_CODES, ERROR_TYPES } from './errors';
import { CompanyProfile, PersonProfile } from './profiles';

/**
 * Zod schemas of every HTTP request and response body (service-spec.md + decisions.md).
 * Request bodies are strict (an unknown field is an error); response schemas describe exactly
 * what the service sends and feed the OpenAPI document.
 */

// ---------- building blocks ----------

export const MAX_STRING_CHARS = 2048;
export const MAX_AGE_MIN_SECONDS = 0;
export const MAX_AGE_MAX_SECONDS = 315_360_000;
export const MAX_AGE_DEFAULT_SECONDS = 2_592_000;

/** Any request string: non-empty, at most 2048 characters. */
const requestString = () => z.string().min(1).max(MAX_STRING_CHARS);

export const MaxAge = z
  .int()
  .min(MAX_AGE_MIN_SECONDS)
  .max(MAX_AGE_MAX_SECONDS)
  .default(MAX_AGE_DEFAULT_SECONDS)
  .meta({
    description:
      'Seconds. A cached copy at most this old is served (HIT); 0 always fetches live. Default 2592000 (30 days).',
    example: 86400,
  });

const nonNegativeInt = () => z.int().nonnegative();
const isoDateTime = () => z.iso.datetime({ offset: true });
const isoDate = () => z.iso.date();

export const RequestId = z
  .string()
  .regex(/^req_[0-9A-HJKMNP-TV-Z]{26}$/)
  .meta({ description: 'Correlation id, equal to the X-Request-Id header.', example: 'req_01J9Z8Q4V6Y3M2K7T5R1N0B8CD' });

export const ContentHash = z
  .string()
  .regex(/^sha256:[0-9a-f]{64}$/)
  .meta({ description: '`sha256:` + hex SHA-256 of the RFC 8785 canonical JSON of `data`.' });

// ---------- lookup requests ----------

export const CompanyLookupRequest = z
  .strictObject({
    url: requestString().meta({
      description: 'A company reference: page URL in any variant or case, slug, old slug, numeric id or URN.',
      example: 'https://www.linkedin.com/company/acme-robotics/',
    }),
    max_age: MaxAge,
  })
  .meta({ id: 'CompanyLookupRequest' });

export const DomainLookupRequest = z
  .strictObject({
    domain: requestString().meta({
      description: 'A website host or URL on a public domain; reduced to its registrable domain.',
      example: 'acmerobotics.com',
    }),
    max_age: MaxAge,
  })
  .meta({ id: 'DomainLookupRequest' });

export const PersonLookupRequest = z
  .strictObject({
    url: requestString().meta({
      description: "A profile URL (`/in/<id>`) or the person's name.",
      example: 'https://www.linkedin.com/in/jane-doe-42',
    }),
    max_age: MaxAge,
  })
  .meta({ id: 'PersonLookupRequest' });

export const SEARCH_QUERY_MAX_CHARS = 256;
export const SEARCH_LIMIT_MAX = 50;
export const SEARCH_LIMIT_DEFAULT = 10;

export const SearchRequest = z
  .strictObject({
    query: z.string().min(1).max(SEARCH_QUERY_MAX_CHARS).meta({ example: 'acme robotics' }),
    limit: z.int().min(1).max(SEARCH_LIMIT_MAX).default(SEARCH_LIMIT_DEFAULT),
    max_age: MaxAge,
  })
  .meta({ id: 'SearchRequest' });

// ---------- cache area requests ----------

export const CompanyCacheRequest = z
  .strictObject({ url: requestString().meta({ description: 'A company reference, as for POST /v1/company.' }) })
  .meta({ id: 'CompanyCacheRequest' });

export const DomainCacheRequest = z
  .strictObject({ domain: requestString().meta({ description: 'A website host or URL, as for POST /v1/domain.' }) })
  .meta({ id: 'DomainCacheRequest' });

export const PersonCacheRequest = z
  .strictObject({ url: requestString().meta({ description: 'A profile URL or name, as for POST /v1/person.' }) })
  .meta({ id: 'PersonCacheRequest' });

// ---------- success envelopes ----------

export const CACHE_STATUSES = ['HIT', 'MISS', 'REFRESH'] as const;
export const CacheStatus = z.enum(CACHE_STATUSES).meta({ id: 'CacheStatus' });

export const CacheInfo = z
  .strictObject({
    status: CacheStatus,
    age_seconds: nonNegativeInt().meta({ description: 'Seconds since the data was fetched; equals the Age header.' }),
    fetched_at: isoDateTime().meta({ description: 'When the data was fetched live (ISO 8601, UTC).' }),
  })
  .meta({ id: 'CacheInfo' });

export const LookupMeta = z
  .strictObject({
    request_id: RequestId,
    cache: CacheInfo,
    content_hash: ContentHash,
    credits_charged: nonNegativeInt(),
    credits_remaining: nonNegativeInt(),
  })
  .meta({ id: 'LookupMeta' });

export const ResolvedDomain = z
  .strictObject({
    domain: z.string().meta({ example: 'acmerobotics.com' }),
    confirmed: z
      .boolean()
      .meta({ description: "True when the registrable domain of the company's `website` equals `domain`." }),
  })
  .meta({ id: 'ResolvedDomain' });

export const DomainLookupMeta = LookupMeta.extend({ resolved: ResolvedDomain }).meta({ id: 'DomainLookupMeta' });

export const CompanyLookupResponse = z
  .strictObject({ data: CompanyProfile, meta: LookupMeta })
  .meta({ id: 'CompanyLookupResponse' });

export const DomainLookupResponse = z
  .strictObject({ data: CompanyProfile, meta: DomainLookupMeta })
  .meta({ id: 'DomainLookupResponse' });

export const PersonLookupResponse = z
  .strictObject({ data: PersonProfile, meta: LookupMeta })
  .meta({ id: 'PersonLookupResponse' });

export const SearchResult = z
  .strictObject({
    position: z.int().min(1),
    title: z.string(),
    url: z.string(),
    snippet: z.string(),
  })
  .meta({ id: 'SearchResult' });

export const SearchData = z
  .strictObject({ query: z.string(), results: z.array(SearchResult) })
  .meta({ id: 'SearchData' });

export const SearchResponse = z.strictObject({ data: SearchData, meta: LookupMeta }).meta({ id: 'SearchResponse' });

// ---------- cache area responses ----------

/** Meta of calls that serve no data of their own (cache area): always free. */
export const AccountMeta = z
  .strictObject({
    request_id: RequestId,
    credits_charged: nonNegativeInt(),
    credits_remaining: nonNegativeInt(),
  })
  .meta({ id: 'AccountMeta' });

export const CacheEntryData = z
  .strictObject({
    cached: z.boolean().meta({ description: 'True when the cache holds an answer for this reference.' }),
    found: z
      .boolean()
      .meta({ description: 'True when the cached answer is a profile; false for a cached not-found or when nothing is cached.' }),
    fetched_at: isoDateTime().nullable().meta({ description: 'When the cached answer was fetched; null when nothing is cached.' }),
    age_seconds: nonNegativeInt().nullable(),
    content_hash: ContentHash.nullable().meta({ description: 'Hash of the cached profile; null unless `found`.' }),
  })
  .meta({ id: 'CacheEntryData' });

export const CacheEntryResponse = z
  .strictObject({ data: CacheEntryData, meta: AccountMeta })
  .meta({ id: 'CacheEntryResponse' });

export const CacheStatsData = z
  .strictObject({
    entries: nonNegativeInt().meta({ description: 'All cache entries.' }),
    company: nonNegativeInt().meta({ description: 'Company answers (profiles and not-founds).' }),
    domain: nonNegativeInt().meta({ description: 'Domain resolutions.' }),
    person: nonNegativeInt().meta({ description: 'Person answers (profiles and not-founds).' }),
    search: nonNegativeInt().meta({ description: 'Search result pages.' }),
  })
  .meta({ id: 'CacheStatsData' });

export const CacheStatsResponse = z
  .strictObject({ data: CacheStatsData, meta: AccountMeta })
  .meta({ id: 'CacheStatsResponse' });

// ---------- error envelope ----------

export const ErrorDetail = z
  .strictObject({
    field: z.string().meta({ description: 'The body field, `body` for the body as a whole, or `Idempotency-Key`.' }),
    issue: z.enum(DETAIL_ISSUES),
    message: z.string(),
  })
  .meta({ id: 'ErrorDetail' });

export const ErrorObject = z
  .strictObject({
    type: z.enum(ERROR_TYPES),
    code: z.enum(ERROR_CODES),
    message: z.string(),
    retryable: z.boolean(),
    doc_url: z.string().meta({ description: '`{docs_url}/errors#<code>`' }),
    retry_after_seconds: z.int().min(1).optional().meta({ description: 'Present when a wait is advised; equals Retry-After.' }),
    details: z.array(ErrorDetail).optional().meta({ description: 'Present for `invalid_request`.' }),
    reason: z
      .string()
      .optional()
      .meta({
        description:
          'On 404: `no_company`, `no_company_for_domain`, `no_profile_at_url`, `no_profile_for_name`, `no_public_page`.',
      }),
  })
  .meta({ id: 'ErrorObject' });

export const ErrorMeta = z
  .strictObject({
    request_id: RequestId,
    credits_charged: nonNegativeInt(),
    credits_remaining: nonNegativeInt()
      .nullable()
      .meta({ description: 'null where no workspace is known (401, unknown route without a key).' }),
  })
  .meta({ id: 'ErrorMeta' });

export const ErrorEnvelope = z.strictObject({ error: ErrorObject, meta: ErrorMeta }).meta({ id: 'ErrorEnvelope' });

// ---------- Meta area ----------

export const PRICED_OPERATIONS = ['company', 'domain', 'person_url', 'person_name', 'search'] as const;

export const PricedOperationEntry = z
  .strictObject({
    operation: z.enum(PRICED_OPERATIONS),
    method: z.literal('POST'),
    endpoint: z.string(),
    description: z.string(),
    success_price: nonNegativeInt().meta({ description: 'Credits for a successful lookup, cache HIT included.' }),
    not_found_price: nonNegativeInt()
      .nullable()
      .meta({ description: 'Credits for a definitive not-found answered live; null where there is no not-found answer.' }),
    not_found_free_from_cache: z.boolean(),
  })
  .meta({ id: 'PricedOperation' });

export const FreeArea = z
  .strictObject({
    area: z.enum(['cache', 'meta']),
    price: z.literal(0),
    endpoints: z.array(z.string()),
  })
  .meta({ id: 'FreeArea' });

export const PricingResponse = z
  .strictObject({
    unit: z.literal('credit'),
    operations: z.array(PricedOperationEntry),
    free: z.array(FreeArea),
    notes: z.array(z.string()),
  })
  .meta({ id: 'PricingResponse' });

export const HealthResponse = z
  .strictObject({
    status: z.enum(['ok', 'degraded']),
    version: z.string().meta({ example: '1.0.0' }),
    checks: z.record(z.string(), z.enum(['ok', 'fail'])).optional(),
  })
  .meta({ id: 'HealthResponse' });

export const ErrorCatalogueEntrySchema = z
  .strictObject({
    code: z.enum(ERROR_CODES),
    status: z.int(),
    type: z.enum(ERROR_TYPES),
    retryable: z.boolean(),
    billing: z.enum(['never_charged', 'not_found_price', 'refunded']),
    message: z.string(),
    doc_url: z.string(),
  })
  .meta({ id: 'ErrorCatalogueEntry' });

export const ErrorsListResponse = z
  .strictObject({ data: z.array(ErrorCatalogueEntrySchema) })
  .meta({ id: 'ErrorsListResponse' });

/** The OpenAPI document itself: any JSON object. */
export const OpenApiDocumentResponse = z.record(z.string(), z.unknown()).meta({ id: 'OpenApiDocument' });

// ---------- Admin API (decisions.md "Admin API") ----------

export const WORKSPACE_NAME_MAX_CHARS = 200;
export const MAX_CONCURRENCY_DEFAULT = 8;
export const RATE_LIMIT_PER_MINUTE_DEFAULT = 600;

const maxConcurrency = () => z.int().min(1).max(1000);
const rateLimitPerMinute = () => z.int().min(1).max(100_000);

export const WorkspaceCreateRequest = z.strictObject({
  name: z.string().min(1).max(WORKSPACE_NAME_MAX_CHARS),
  credits: z.int().nonnegative().default(0),
  max_concurrency: maxConcurrency().default(MAX_CONCURRENCY_DEFAULT),
});

export const WorkspaceCreatedResponse = z.strictObject({
  id: z.string(),
  name: z.string(),
  balance: nonNegativeInt(),
  max_concurrency: maxConcurrency(),
});

export const WorkspaceResponse = WorkspaceCreatedResponse.extend({ created_at: isoDateTime() });

export const WorkspacePatchRequest = z.strictObject({ max_concurrency: maxConcurrency() });

export const CreditsGrantRequest = z.strictObject({
  amount: z.int().positive(),
  reason: requestString().optional(),
});

export const CreditsGrantResponse = z.strictObject({ balance: nonNegativeInt() });

export const KeyCreateRequest = z.strictObject({
  name: z.string().min(1).max(WORKSPACE_NAME_MAX_CHARS).optional(),
  rate_limit_per_minute: rateLimitPerMinute().default(RATE_LIMIT_PER_MINUTE_DEFAULT),
});

export const KeyCreatedResponse = z.strictObject({
  id: z.string(),
  /** The full key, shown only in this answer. */
  key: z.string().regex(/^lk_live_[A-Za-z0-9]{32}$/),
  prefix: z.string(),
  name: z.string().nullable(),
  rate_limit_per_minute: rateLimitPerMinute(),
  created_at: isoDateTime(),
});

export const KeySummary = z.strictObject({
  id: z.string(),
  prefix: z.string(),
  name: z.string().nullable(),
  created_at: isoDateTime(),
  last_used_at: isoDateTime().nullable(),
  revoked_at: isoDateTime().nullable(),
});

export const KeyListResponse = z.strictObject({ data: z.array(KeySummary) });

export const KeyRevokeResponse = z.strictObject({ id: z.string(), revoked_at: isoDateTime() });

/** A query-string integer: digits only (query values arrive as strings). */
const queryInt = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d{1,16}$/)
    .transform(Number)
    .pipe(z.int().min(min).max(max));

/** `from`/`to`: a day (`YYYY-MM-DD`, inclusive) or an instant. */
const queryDay = () => z.union([isoDate(), isoDateTime()]);

export const UsageQuery = z.strictObject({
  key_id: z.string().min(1).max(MAX_STRING_CHARS).optional(),
  from: queryDay().optional(),
  to: queryDay().optional(),
});

export const UsageRow = z.strictObject({
  day: isoDate(),
  key_id: z.string().nullable(),
  operation: z.string(),
  calls: nonNegativeInt(),
  credits_charged: nonNegativeInt(),
  credits_refunded: nonNegativeInt(),
  errors: nonNegativeInt(),
});

export const UsageResponse = z.strictObject({ data: z.array(UsageRow) });

export const LEDGER_LIMIT_DEFAULT = 100;
export const LEDGER_LIMIT_MAX = 1000;

export const LedgerQuery = z.strictObject({
  request_id: z.string().min(1).max(MAX_STRING_CHARS).optional(),
  after: queryInt(0, Number.MAX_SAFE_INTEGER).optional(),
  limit: queryInt(1, LEDGER_LIMIT_MAX).default(LEDGER_LIMIT_DEFAULT),
});

export const LedgerEntry = z.strictObject({
  position: nonNegativeInt(),
  type: z.string().meta({ description: 'The event type, e.g. CreditsGranted, LookupCharged, LookupRefunded.' }),
  request_id: z.string().nullable(),
  key_id: z.string().nullable(),
  credits: z.int().meta({ description: 'Signed: positive adds to the balance, negative draws on it.' }),
  balance_after: nonNegativeInt(),
  recorded_at: isoDateTime(),
});

export const LedgerResponse = z.strictObject({
  data: z.array(LedgerEntry),
  next: nonNegativeInt().nullable().meta({ description: 'The `after` value of the next page; null on the last page.' }),
});

export const AuditMismatch = z.strictObject({
  projection: z.string().meta({ description: 'The projection table that disagrees with the replayed log, e.g. workspaces.' }),
  key: z.string().meta({ description: 'The row: a workspace id, key id, ledger position, request id, alias…' }),
  field: z.string().meta({ description: 'The column, or `row` for a missing or extra row.' }),
  expected: z.unknown().meta({ description: 'What the replay of the log gives.' }),
  actual: z.unknown().meta({ description: 'What the projection holds.' }),
});

export const AuditResponse = z.strictObject({
  ok: z.boolean(),
  events: nonNegativeInt(),
  workspaces: nonNegativeInt(),
  mismatches: z.array(AuditMismatch),
});

// ---------- TypeScript types ----------

/** Request types are the parsed output (defaults applied). */
export type CompanyLookupRequest = z.output<typeof CompanyLookupRequest>;
export type DomainLookupRequest = z.output<typeof DomainLookupRequest>;
export type PersonLookupRequest = z.output<typeof PersonLookupRequest>;
export type SearchRequest = z.output<typeof SearchRequest>;
export type CompanyCacheRequest = z.output<typeof CompanyCacheRequest>;
export type DomainCacheRequest = z.output<typeof DomainCacheRequest>;
export type PersonCacheRequest = z.output<typeof PersonCacheRequest>;

export type CacheStatus = z.infer<typeof CacheStatus>;
export type CacheInfo = z.infer<typeof CacheInfo>;
export type LookupMeta = z.infer<typeof LookupMeta>;
export type ResolvedDomain = z.infer<typeof ResolvedDomain>;
export type DomainLookupMeta = z.infer<typeof DomainLookupMeta>;
export type CompanyLookupResponse = z.infer<typeof CompanyLookupResponse>;
export type DomainLookupResponse = z.infer<typeof DomainLookupResponse>;
export type PersonLookupResponse = z.infer<typeof PersonLookupResponse>;
export type SearchResult = z.infer<typeof SearchResult>;
export type SearchData = z.infer<typeof SearchData>;
export type SearchResponse = z.infer<typeof SearchResponse>;
export type AccountMeta = z.infer<typeof AccountMeta>;
export type CacheEntryData = z.infer<typeof CacheEntryData>;
export type CacheEntryResponse = z.infer<typeof CacheEntryResponse>;
export type CacheStatsData = z.infer<typeof CacheStatsData>;
export type CacheStatsResponse = z.infer<typeof CacheStatsResponse>;
export type ErrorDetail = z.infer<typeof ErrorDetail>;
export type ErrorObject = z.infer<typeof ErrorObject>;
export type ErrorMeta = z.infer<typeof ErrorMeta>;
export type ErrorEnvelope = z.infer<typeof ErrorEnvelope>;
export type PricedOperation = (typeof PRICED_OPERATIONS)[number];
export type PricedOperationEntry = z.infer<typeof PricedOperationEntry>;
export type FreeArea = z.infer<typeof FreeArea>;
export type PricingResponse = z.infer<typeof PricingResponse>;
export type HealthResponse = z.infer<typeof HealthResponse>;
export type ErrorsListResponse = z.infer<typeof ErrorsListResponse>;

export type WorkspaceCreateRequest = z.output<typeof WorkspaceCreateRequest>;
export type WorkspaceCreatedResponse = z.infer<typeof WorkspaceCreatedResponse>;
export type WorkspaceResponse = z.infer<typeof WorkspaceResponse>;
export type WorkspacePatchRequest = z.output<typeof WorkspacePatchRequest>;
export type CreditsGrantRequest = z.output<typeof CreditsGrantRequest>;
export type CreditsGrantResponse = z.infer<typeof CreditsGrantResponse>;
export type KeyCreateRequest = z.output<typeof KeyCreateRequest>;
export type KeyCreatedResponse = z.infer<typeof KeyCreatedResponse>;
export type KeySummary = z.infer<typeof KeySummary>;
export type KeyListResponse = z.infer<typeof KeyListResponse>;
export type KeyRevokeResponse = z.infer<typeof KeyRevokeResponse>;
export type UsageQuery = z.output<typeof UsageQuery>;
export type UsageRow = z.infer<typeof UsageRow>;
export type UsageResponse = z.infer<typeof UsageResponse>;
export type LedgerQuery = z.output<typeof LedgerQuery>;
export type LedgerEntry = z.infer<typeof LedgerEntry>;
export type LedgerResponse = z.infer<typeof LedgerResponse>;
export type AuditMismatch = z.infer<typeof AuditMismatch>;
export type AuditResponse = z.infer<typeof AuditResponse>;
