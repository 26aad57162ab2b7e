import { z } from 'zod';
import { DETAIL_ISSUES, ERROR_CODES, ERROR_REASON_NAMES, ERROR_TYPES } from './errors';
import { KeyMode, Operation } from './events';
import { CompanyProfile, PersonProfile } from './profiles';
import { text } from './text';

/**
 * Zod schemas of every HTTP request and response body (docs/api.md).
 * Request bodies are strict (an unknown field is an error); response schemas describe exactly
 * what the service sends and feed the OpenAPI document. Request bodies have no component id: they
 * stay inline under `requestBody`, where generators such as openapi-typescript keep a field with a
 * `default` optional (as a named component, it would come out required).
 */

// ---------- building blocks ----------

export const MAX_STRING_CHARS = 2048;
export const MAX_AGE_MIN_SECONDS = 0;
export const MAX_AGE_MAX_SECONDS = 315_360_000;
export const MAX_AGE_DEFAULT_SECONDS = 2_592_000;

/** A lookup reference: 1–2048 characters of storable, non-blank text; its parser judges the rest. */
const referenceString = () => text({ max: MAX_STRING_CHARS, kind: 'reference' });

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

/**
 * Opt-in: what a lookup answers when its live fetch fails with a refunded error. `stale`: the
 * cached copy, of any age, if there is one (docs/api.md, "A stale copy when the live fetch fails").
 */
export const ON_ERROR_VALUES = ['stale'] as const;
export const OnError = z.enum(ON_ERROR_VALUES).optional().meta({
  description:
    'Opt-in. `stale`: when the live fetch (MISS or REFRESH) fails with a refunded error (5xx, 504) and a copy of any age is cached, answer 200 with that copy (`X-Cache: STALE`, its `Age`) at the cache-hit price instead of the error. Absent: the error.',
  example: 'stale',
});
export type OnError = z.output<typeof OnError>;

const nonNegativeInt = () => z.int().nonnegative();
/** An instant as the API writes it: ISO 8601 with its offset. */
export const isoDateTime = () => z.iso.datetime({ offset: true });
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
    url: referenceString().meta({
      description: 'A company reference: page URL in any variant or case, slug, old slug, numeric id or URN.',
      example: 'https://www.linkedin.com/company/acme-robotics/',
    }),
    max_age: MaxAge,
    on_error: OnError,
  });

export const DomainLookupRequest = z
  .strictObject({
    domain: referenceString().meta({
      description: 'A website host or URL on a public domain; reduced to its registrable domain.',
      example: 'acmerobotics.com',
    }),
    max_age: MaxAge,
    on_error: OnError,
  });

export const PersonLookupRequest = z
  .strictObject({
    url: referenceString().meta({
      description: "A profile URL (`/in/<id>`) or the person's name.",
      example: 'https://www.linkedin.com/in/jane-doe-42',
    }),
    max_age: MaxAge,
    on_error: OnError,
  });

export const SEARCH_QUERY_MAX_CHARS = 256;
export const SEARCH_LIMIT_MAX = 50;
export const SEARCH_LIMIT_DEFAULT = 10;

export const SearchRequest = z
  .strictObject({
    query: text({ max: SEARCH_QUERY_MAX_CHARS, kind: 'line' }).meta({
      description: 'Free text: not blank, no control characters.',
      example: 'acme robotics',
    }),
    limit: z.int().min(1).max(SEARCH_LIMIT_MAX).default(SEARCH_LIMIT_DEFAULT).meta({ description: 'Results wanted, 1–50. Default 10.' }),
    max_age: MaxAge,
    on_error: OnError,
  });

// ---------- cache area requests ----------

export const CompanyCacheRequest = z
  .strictObject({ url: referenceString().meta({ description: 'A company reference, as for POST /v1/company.' }) });

export const DomainCacheRequest = z
  .strictObject({ domain: referenceString().meta({ description: 'A website host or URL, as for POST /v1/domain.' }) });

export const PersonCacheRequest = z
  .strictObject({ url: referenceString().meta({ description: 'A profile URL or name, as for POST /v1/person.' }) });

// ---------- success envelopes ----------

export const CACHE_STATUSES = ['HIT', 'MISS', 'REFRESH', 'STALE'] as const;
export const CacheStatus = z
  .enum(CACHE_STATUSES)
  .meta({
    id: 'CacheStatus',
    description:
      '`HIT`: a cached copy fresh enough; `MISS`: nothing cached, fetched live; `REFRESH`: the cached copy was older than `max_age`, fetched live; `STALE` (only with `on_error: "stale"`): the live fetch failed, the cached copy of any age answered instead. Equals X-Cache.',
  });

export const CacheInfo = z
  .strictObject({
    status: CacheStatus,
    age_seconds: nonNegativeInt().meta({ description: 'Seconds since the data was fetched; equals the Age header.' }),
    fetched_at: isoDateTime().meta({ description: 'When the data was fetched live (ISO 8601, UTC).' }),
  })
  .meta({ id: 'CacheInfo', description: 'Where the data came from and how old it is.' });

export const LookupMeta = z
  .strictObject({
    request_id: RequestId,
    cache: CacheInfo,
    content_hash: ContentHash,
    credits_charged: nonNegativeInt().meta({ description: 'Credits charged for the call; equals X-Credits-Charged.' }),
    credits_remaining: nonNegativeInt().meta({ description: 'The workspace balance after the call; equals X-Credits-Remaining.' }),
  })
  .meta({ id: 'LookupMeta', description: 'About the call: request id, cache outcome, content hash and billing.' });

export const ResolvedDomain = z
  .strictObject({
    domain: z.string().meta({ example: 'acmerobotics.com' }).meta({ description: 'The registrable domain that was looked up.' }),
    confirmed: z
      .boolean()
      .meta({ description: "True when the registrable domain of the company's `website` equals `domain`." }),
  })
  .meta({ id: 'ResolvedDomain', description: 'Which domain was resolved, and whether the company website confirms it.' });

export const DomainLookupMeta = LookupMeta.extend({ resolved: ResolvedDomain }).meta({ id: 'DomainLookupMeta', description: 'As for the other lookups, plus `resolved`.' });

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
    position: z.int().min(1).meta({ description: 'Rank, from 1.' }),
    title: z.string().meta({ description: 'The title of the result.' }),
    url: z.string().meta({ description: 'The address of the result.' }),
    snippet: z.string().meta({ description: 'A short extract.' }),
  })
  .meta({ id: 'SearchResult' });

export const SearchData = z
  .strictObject({
    query: z.string().meta({ description: 'The query as sent.' }),
    results: z.array(SearchResult).meta({ description: 'The results, best first.' }),
  })
  .meta({ id: 'SearchData', description: 'The search results.' });

export const SearchResponse = z.strictObject({ data: SearchData, meta: LookupMeta }).meta({ id: 'SearchResponse' });

// ---------- batch (POST /v1/batch) ----------

export const BATCH_MAX_ITEMS = 100;
export const BATCH_ID_MAX_CHARS = 256;
/** What a batch item can be: each the call of its single endpoint (contracts/endpoints.ts BATCH_ITEM_ENDPOINTS). */
export const BATCH_OPERATIONS = ['company', 'domain', 'person', 'search'] as const;
export type BatchOperation = (typeof BATCH_OPERATIONS)[number];
const BatchOperationName = z.enum(BATCH_OPERATIONS).meta({
  description: 'Which call the item is: `company` (POST /v1/company), `domain` (POST /v1/domain), `person` (POST /v1/person) or `search` (POST /v1/search).',
});
const BatchItemId = text({ max: BATCH_ID_MAX_CHARS, kind: 'line' }).meta({
  description: `Your own id for the item (1–${BATCH_ID_MAX_CHARS} characters), echoed back in its result; not checked for uniqueness.`,
  example: 'row-17',
});

export const BatchItemRequest = z.strictObject({
  operation: BatchOperationName,
  body: z.unknown().meta({
    description:
      "The single call's body, as POST /v1/company, /v1/domain, /v1/person or /v1/search take it. Checked per item: a body that call would refuse is that item's 400, the others run.",
    example: { url: 'acme-robotics' },
  }),
  id: BatchItemId.optional(),
});

export const BatchRequest = z.strictObject({
  items: z
    .array(BatchItemRequest)
    .min(1)
    .max(BATCH_MAX_ITEMS)
    .meta({ description: `1–${BATCH_MAX_ITEMS} calls, answered in this order; each is charged, refunded, cached and logged as its single call.` }),
});

const batchItemFields = {
  id: BatchItemId.optional().meta({ description: 'Your id of the item, as sent; absent when none was sent.' }),
  request_id: RequestId.meta({ description: "The item's own request id: its ledger entries and events carry it." }),
  credits_charged: nonNegativeInt().meta({ description: 'Credits this item cost, as `meta.credits_charged` of its single call (0 when refunded or refused).' }),
};

const batchSuccess = <O extends BatchOperation, D extends z.ZodType>(operation: O, data: D, id: string, more: z.ZodRawShape = {}) =>
  z
    .strictObject({
      ...batchItemFields,
      operation: z.literal(operation).meta({ description: 'The operation of the item, as sent.' }),
      status: z.literal(200).meta({ description: 'The status its single call would have had.' }),
      data,
      cache: CacheInfo,
      content_hash: ContentHash,
      ...more,
    })
    .meta({ id, description: `A \`${operation}\` item answered: \`data\` as its single call's.` });

export const BatchCompanyResult = batchSuccess('company', CompanyProfile, 'BatchCompanyResult');
export const BatchDomainResult = batchSuccess('domain', CompanyProfile, 'BatchDomainResult', { resolved: ResolvedDomain });
export const BatchPersonResult = batchSuccess('person', PersonProfile, 'BatchPersonResult');
export const BatchSearchResult = batchSuccess('search', SearchData, 'BatchSearchResult');

// ---------- cache area responses ----------

/** Meta of calls that serve no data of their own (cache area): always free. */
export const AccountMeta = z
  .strictObject({
    request_id: RequestId,
    credits_charged: nonNegativeInt().meta({ description: 'Always 0: the call is free.' }),
    credits_remaining: nonNegativeInt().meta({ description: 'The workspace balance.' }),
  })
  .meta({ id: 'AccountMeta', description: 'About the call: request id; free, with the workspace balance.' });

export const CacheEntryData = z
  .strictObject({
    cached: z.boolean().meta({ description: 'True when the cache holds an answer for this reference.' }),
    found: z
      .boolean()
      .meta({ description: 'True when the cached answer is a profile; false for a cached not-found or when nothing is cached.' }),
    fetched_at: isoDateTime().nullable().meta({ description: 'When the cached answer was fetched; null when nothing is cached.' }),
    age_seconds: nonNegativeInt().nullable().meta({ description: 'Seconds since the cached answer was fetched; null when nothing is cached.' }),
    content_hash: ContentHash.nullable().meta({ description: 'Hash of the cached profile; null unless `found`.' }),
  })
  .meta({ id: 'CacheEntryData', description: 'What the cache holds for the reference (never the profile itself).' });

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
  .meta({ id: 'CacheStatsData', description: 'Cache entry counts.' });

export const CacheStatsResponse = z
  .strictObject({ data: CacheStatsData, meta: AccountMeta })
  .meta({ id: 'CacheStatsResponse' });

// ---------- error envelope ----------

export const ErrorDetail = z
  .strictObject({
    field: z.string().meta({
      description:
        'The body field, `body` for the body as a whole, or `Idempotency-Key`. For a request that is not well-formed: ' +
        'the header at fault (`Content-Length`, `Transfer-Encoding`, `Host`, ...), `headers`, `path`, `method`, ' +
        '`request_line` or `request`; in the admin API also the path or query parameter (`id`, `request_id`, ...).',
    }),
    issue: z.enum(DETAIL_ISSUES).meta({ description: 'What is wrong with the field.' }),
    message: z.string().meta({ description: 'Human text naming the problem; it may change.' }),
  })
  .meta({ id: 'ErrorDetail' });

export const ErrorObject = z
  .strictObject({
    type: z.enum(ERROR_TYPES).meta({ description: 'The family of the error.' }),
    code: z.enum(ERROR_CODES).meta({ description: 'Stable machine code: build on it. One of the error catalogue (GET /v1/errors).' }),
    message: z.string().meta({ description: 'Human text; it may change.' }),
    retryable: z.boolean().meta({ description: 'True if the same request can succeed later.' }),
    doc_url: z.string().meta({ description: '`{docs_url}/errors#<code>`' }),
    retry_after_seconds: z.int().min(1).optional().meta({ description: 'Present when a wait is advised; equals Retry-After.' }),
    details: z.array(ErrorDetail).optional().meta({ description: 'Present for `invalid_request`.' }),
    reason: z
      .enum(ERROR_REASON_NAMES)
      .optional()
      .meta({
        description:
          'Which answer of its code it is, where a code has more than one; the reasons of each code are listed by GET /v1/errors (`reasons`) and /docs/errors.',
      }),
  })
  .meta({ id: 'ErrorObject', description: 'What went wrong. Build on `code`.' });

export const ErrorMeta = z
  .strictObject({
    request_id: RequestId,
    credits_charged: nonNegativeInt().meta({ description: 'Credits charged: the not-found price for a charged 404, else 0.' }),
    credits_remaining: nonNegativeInt()
      .nullable()
      .meta({ description: 'null where no workspace is known (401, unknown route without a key).' }),
  })
  .meta({ id: 'ErrorMeta', description: 'About the call: request id and billing.' });

export const ErrorEnvelope = z.strictObject({ error: ErrorObject, meta: ErrorMeta }).meta({ id: 'ErrorEnvelope' });

/** A batch item answered with an error (below the error envelope, whose `ErrorObject` it is). */
export const BatchErrorResult = z
  .strictObject({
    ...batchItemFields,
    operation: BatchOperationName.meta({ description: 'The operation of the item, as sent.' }),
    status: z.int().min(400).max(599).meta({ description: 'The status its single call would have had (400, 402, 404, 429, 5xx).' }),
    error: ErrorObject,
  })
  .meta({ id: 'BatchErrorResult', description: "An item not answered with data: `error` as its single call's (a 404 keeps its not-found price)." });

export const BatchItemResult = z
  .xor([BatchCompanyResult, BatchDomainResult, BatchPersonResult, BatchSearchResult, BatchErrorResult])
  .meta({ id: 'BatchItemResult', description: 'One item answered: its data (status 200) or its error, each in the shape of its single call.' });

export const BatchResponse = z
  .strictObject({
    data: z.array(BatchItemResult).meta({ description: 'One result per item, in the order of `items`.' }),
    meta: z
      .strictObject({
        request_id: RequestId.meta({ description: "The batch's request id, equal to X-Request-Id (each item has its own)." }),
        credits_charged: nonNegativeInt().meta({ description: "The sum of the items' `credits_charged`; equals X-Credits-Charged." }),
        credits_remaining: nonNegativeInt()
          .nullable()
          .meta({ description: 'The workspace balance after the batch; equals X-Credits-Remaining. null when it could not be read (every item then says what it cost).' }),
      })
      .meta({ id: 'BatchMeta', description: 'About the batch: its request id and what it cost in total.' }),
  })
  .meta({ id: 'BatchResponse' });

// ---------- Meta area ----------

export const PricedOperationEntry = z
  .strictObject({
    operation: Operation.meta({ description: 'The priced operation.' }),
    method: z.literal('POST').meta({ description: 'The HTTP method.' }),
    endpoint: z.string().meta({ description: 'The path it is called at.' }),
    description: z.string().meta({ description: 'What the operation is.' }),
    success_price: nonNegativeInt().meta({ description: 'Credits for a successful lookup, cache HIT included.' }),
    not_found_price: nonNegativeInt()
      .nullable()
      .meta({ description: 'Credits for a definitive not-found answered live; null where there is no not-found answer.' }),
    not_found_free_from_cache: z.boolean().meta({ description: 'True when a not-found answered from the cache is free.' }),
  })
  .meta({ id: 'PricedOperation' });

/** The areas `GET /v1/pricing` lists as free, in its order. */
export const FREE_AREAS = ['cache', 'webhooks', 'watches', 'meta'] as const;

export const FreeArea = z
  .strictObject({
    area: z.enum(FREE_AREAS).meta({ description: 'The free area (`watches`: creating and reading them; each refresh is charged, see `notes`).' }),
    price: z.literal(0).meta({ description: 'Always 0.' }),
    endpoints: z.array(z.string()).meta({ description: '`METHOD /path` of each endpoint of the area.' }),
  })
  .meta({ id: 'FreeArea' });

export const BatchPricing = z
  .strictObject({
    method: z.literal('POST').meta({ description: 'The HTTP method.' }),
    endpoint: z.string().meta({ description: 'The path it is called at.' }),
    max_items: z.int().min(1).meta({ description: 'Items a batch may hold.' }),
    price: z.literal('sum_of_items').meta({ description: "A batch costs the sum of its items' prices, each item charged as its single call (its operation above)." }),
  })
  .meta({ id: 'BatchPricing', description: 'How a batch call is priced.' });

export const PricingResponse = z
  .strictObject({
    unit: z.literal('credit').meta({ description: 'Prices are in credits.' }),
    operations: z.array(PricedOperationEntry).meta({ description: 'The charged operations.' }),
    batch: BatchPricing,
    free: z.array(FreeArea).meta({ description: 'The free areas.' }),
    notes: z.array(z.string()).meta({ description: 'Billing rules in words.' }),
  })
  .meta({ id: 'PricingResponse' });

export const HealthResponse = z
  .strictObject({
    status: z.enum(['ok', 'degraded']).meta({ description: '`ok`, or `degraded` (answered 503) when a dependency fails.' }),
    version: z.string().meta({ example: '1.0.0' }).meta({ description: 'The API version.' }),
    checks: z.record(z.string(), z.enum(['ok', 'fail'])).optional().meta({ description: 'Each dependency checked: `ok` or `fail`.' }),
  })
  .meta({ id: 'HealthResponse' });

/**
 * GET /v1/health/ready: whether this instance can take calls, by its own state only; 200 `ok`,
 * else 503 with the same body naming each failing check (services/health/readiness.ts).
 */
const CheckOutcome = z.enum(['ok', 'fail']);
export const ReadinessResponse = z
  .strictObject({
    status: z.enum(['ok', 'starting', 'draining']).meta({
      description: '`ok` (200): this instance takes calls. `draining` (503): it received SIGTERM and finishes what it accepted. `starting` (503): it is not fully up yet.',
    }),
    version: z.string().meta({ description: 'The API version.', example: '1.0.0' }),
    checks: z
      .strictObject({
        started: CheckOutcome.meta({ description: 'Every connection and background task of the instance is up.' }),
        migrated: CheckOutcome.meta({ description: 'The database migrations of this build are applied.' }),
        not_draining: CheckOutcome.meta({ description: '`fail` from SIGTERM on, while the instance finishes its requests.' }),
      })
      .meta({
        description:
          'The instance\'s own state only. Shared dependencies (database, Redis, the relay\'s and the usage projection\'s lag) are not checked here: they are metrics and alerts, so that their outage does not take every instance out of the balancer.',
      }),
    failures: z
      .array(z.strictObject({ check: z.string().meta({ description: 'The failing check, as named in `checks`.' }), message: z.string().meta({ description: 'Why it failed.' }) }))
      .meta({ description: 'Empty when ready.' }),
  })
  .meta({ id: 'ReadinessResponse' });

export const ErrorCatalogueEntrySchema = z
  .strictObject({
    code: z.enum(ERROR_CODES).meta({ description: 'The error code.' }),
    status: z.int().meta({ description: 'Its HTTP status.' }),
    type: z.enum(ERROR_TYPES).meta({ description: 'Its `error.type`.' }),
    retryable: z.boolean().meta({ description: 'True if the same request can succeed later.' }),
    billing: z.enum(['never_charged', 'not_found_price', 'refunded']).meta({ description: '`never_charged`, `not_found_price` (the lookup not-found price, free from the cache) or `refunded` (charged, then refunded: X-Credits-Charged shows 0).' }),
    message: z.string().meta({ description: 'The default message: what it means.' }),
    action: z.string().meta({ description: 'What the caller should do about it.' }),
    doc_url: z.string().meta({ description: 'Its entry in the error reference.' }),
    reasons: z
      .array(z.strictObject({ reason: z.enum(ERROR_REASON_NAMES).meta({ description: 'The value of `error.reason`.' }), meaning: z.string().meta({ description: 'What it tells the caller.' }) }))
      .meta({ description: 'The `error.reason` values this code may carry; empty when it carries none.' }),
  })
  .meta({ id: 'ErrorCatalogueEntry' });

export const ErrorsListResponse = z
  .strictObject({ data: z.array(ErrorCatalogueEntrySchema).meta({ description: 'Every error code, in catalogue order.' }) })
  .meta({ id: 'ErrorsListResponse' });

/** The OpenAPI document itself: any JSON object. */
export const OpenApiDocumentResponse = z.record(z.string(), z.unknown()).meta({ id: 'OpenApiDocument' });
export const AsyncApiDocumentResponse = z.record(z.string(), z.unknown()).meta({ id: 'AsyncApiDocument' });

// ---------- Admin API (docs/api.md "Admin API (operators)") ----------

export const WORKSPACE_NAME_MAX_CHARS = 200;
export const MAX_CONCURRENCY_DEFAULT = 8;
export const MAX_CONCURRENCY_MAX = 1000;
export const RATE_LIMIT_PER_MINUTE_DEFAULT = 600;
export const RATE_LIMIT_PER_MINUTE_MAX = 100_000;
/**
 * Credits are JavaScript numbers end to end (JSON, the pg and PGlite int8 parsers): exact below
 * 2^53 ≈ 9.007e15. A grant (or a workspace's initial credits) is at most 10^12 and a balance at
 * most 10^15, so every sum the ledger forms stays exact.
 */
export const CREDITS_GRANT_MAX = 1_000_000_000_000;
export const BALANCE_MAX = 1_000_000_000_000_000;
/** Ids are `ws_` / `key_` / `req_` + 26 characters; anything much longer is no id of ours. */
export const ID_MAX_CHARS = 100;

const maxConcurrency = () =>
  z.int().min(1).max(MAX_CONCURRENCY_MAX).meta({ description: `Lookups of the workspace in flight at once, 1–${MAX_CONCURRENCY_MAX}.` });
const rateLimitPerMinute = () =>
  z.int().min(1).max(RATE_LIMIT_PER_MINUTE_MAX).meta({ description: `Requests per minute of the key, 1–${RATE_LIMIT_PER_MINUTE_MAX}.` });
/** Names of workspaces and keys: one line of text. */
const nameString = () => text({ max: WORKSPACE_NAME_MAX_CHARS, kind: 'line' });
/** An id of ours as a request names it (path, query, body): one limit, ID_MAX_CHARS, everywhere. */
export const idString = () => text({ max: ID_MAX_CHARS, kind: 'id' });

/** `{id}` of the admin paths: checked like any request string; an unknown id is 404 `not_found`. */
export const AdminPathParams = z.strictObject({
  id: idString().meta({ description: 'The id the path names: a workspace (`ws_…`), a key (`key_…`) or an audit job.' }),
});

export const WorkspaceCreateRequest = z.strictObject({
  name: nameString(),
  credits: z.int().min(0).max(CREDITS_GRANT_MAX).default(0).meta({ description: `Initial credits, 0–${CREDITS_GRANT_MAX}.` }),
  max_concurrency: maxConcurrency().default(MAX_CONCURRENCY_DEFAULT),
});

export const WorkspaceCreatedResponse = z.strictObject({
  id: z.string(),
  name: z.string(),
  balance: nonNegativeInt(),
  max_concurrency: maxConcurrency(),
});

export const LowBalanceThreshold = z
  .int()
  .min(0)
  .max(BALANCE_MAX)
  .nullable()
  .meta({ description: 'Credits: a charge that takes the balance below it sends the owners one email (`BalanceLow`, once per crossing; a grant back to it or above re-arms it); null: no alert.' });

export const WorkspaceResponse = WorkspaceCreatedResponse.extend({
  created_at: isoDateTime(),
  low_balance_threshold: LowBalanceThreshold.optional().meta({ description: 'The low-balance alert threshold in credits, null when none; absent with `as_of`.' }),
});

export const WorkspacePatchRequest = z
  .strictObject({ max_concurrency: maxConcurrency().optional(), low_balance_threshold: LowBalanceThreshold.optional() })
  .refine((b) => b.max_concurrency !== undefined || b.low_balance_threshold !== undefined, { message: 'Name max_concurrency, low_balance_threshold or both.' });

export const CreditsGrantRequest = z.strictObject({
  amount: z
    .int()
    .min(1)
    .max(CREDITS_GRANT_MAX)
    .meta({ description: `Credits to add, 1–${CREDITS_GRANT_MAX}; the balance may not pass ${BALANCE_MAX}.` }),
  reason: text({ max: MAX_STRING_CHARS, kind: 'line' }).optional(),
});

export const CreditsGrantResponse = z.strictObject({ balance: nonNegativeInt() });

/** A key's mode, as the key answers and lists show it. */
const keyMode = () =>
  KeyMode.meta({
    description:
      '`live`: fetched from the data source, charged in credits. `test` (`lk_test_…`): answered from the built-in sandbox network only, never charged, never from or into the live cache, kept apart in usage, the ledger and statements (docs/api.md, "Test keys").',
  });

export const KeyCreateRequest = z.strictObject({
  name: nameString().optional(),
  rate_limit_per_minute: rateLimitPerMinute().default(RATE_LIMIT_PER_MINUTE_DEFAULT),
  mode: keyMode().default('live'),
});

export const KeyCreatedResponse = z.strictObject({
  id: z.string(),
  /** The full key, shown only in this answer. */
  key: z.string().regex(/^lk_(?:live|test)_[A-Za-z0-9]{32}$/),
  prefix: z.string(),
  name: z.string().nullable(),
  rate_limit_per_minute: rateLimitPerMinute(),
  mode: keyMode(),
  created_at: isoDateTime(),
});

export const KeySummary = z.strictObject({
  id: z.string(),
  prefix: z.string(),
  name: z.string().nullable(),
  mode: keyMode(),
  created_at: isoDateTime(),
  last_used_at: isoDateTime().nullable(),
  revoked_at: isoDateTime().nullable(),
});

export const KeyListResponse = z.strictObject({ data: z.array(KeySummary) });

export const KeyRevokeResponse = z.strictObject({
  id: z.string(),
  revoked_at: isoDateTime(),
  deleted_watches: z
    .array(z.string())
    .meta({ description: 'The watches the key created, deleted with it (oldest first; each gets `WatchDeleted` with reason `key_revoked`); `[]` when none, or when the key was revoked already.' }),
});

/** A query-string integer: digits only (query values arrive as strings). */
export const queryInt = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d{1,16}$/)
    .transform(Number)
    .pipe(z.int().min(min).max(max));

/** `from`/`to`: a day (`YYYY-MM-DD`, inclusive) or an instant. */
const queryDay = () => z.union([isoDate(), isoDateTime()]);

/** Which calls a usage, ledger or statement read shows: a test key's are left out unless asked for. */
export const ModeFilter = z
  .enum(['live', 'test', 'all'])
  .default('live')
  .meta({ description: '`live` (default): live keys\' calls and every grant; `test`: test keys\' calls only; `all`: both.' });
export type ModeFilter = z.output<typeof ModeFilter>;

export const UsageQuery = z.strictObject({
  key_id: idString().optional(),
  mode: ModeFilter,
  from: queryDay().optional(),
  to: queryDay().optional(),
});

/** The operation of usage, overview and statement rows: typed as a string there, its values named in words. */
export const OperationName = z.string().meta({ description: `The operation: ${Operation.options.map((o) => `\`${o}\``).join(', ')}.` });

/** What "errors" means wherever calls are counted or listed (usage, the console): one definition. */
export const ERRORS_MEANING =
  'An error is a call that ran and failed: the source timed out or failed, or the service did (its credits are refunded). A not-found is an answer, not an error; a call refused before it ran (400, 401, 402, 429) is neither.';

export const UsageRow = z.strictObject({
  day: isoDate().meta({ description: 'The UTC day (`YYYY-MM-DD`).' }),
  key_id: z.string().nullable().meta({ description: 'The key that made the calls.' }),
  operation: OperationName,
  calls: nonNegativeInt().meta({ description: 'Calls run that day, whatever they ended in (a call refused before running, e.g. 400 or 402, is not counted).' }),
  credits_charged: nonNegativeInt().meta({ description: 'Credits charged that day.' }),
  credits_refunded: nonNegativeInt().meta({ description: 'Credits refunded that day.' }),
  errors: nonNegativeInt().meta({ description: `Of those calls, the ones that ended in an error. ${ERRORS_MEANING}` }),
  mode: KeyMode.meta({ description: 'The mode of the key that made the calls.' }),
});

export const UsageResponse = z.strictObject({ data: z.array(UsageRow) });

export const LEDGER_LIMIT_DEFAULT = 100;
export const LEDGER_LIMIT_MAX = 1000;

/** `as_of`: an instant (UTC offset required); the answer is as the log stood then, replayed from it. */
const asOf = () =>
  isoDateTime().meta({ description: 'An instant: the answer as it stood then, replayed from the event log (events recorded at or before it).' });

export const WorkspaceQuery = z.strictObject({ as_of: asOf().optional() });

export const LedgerQuery = z.strictObject({
  request_id: idString().optional(),
  after: queryInt(0, Number.MAX_SAFE_INTEGER).optional(),
  limit: queryInt(1, LEDGER_LIMIT_MAX).default(LEDGER_LIMIT_DEFAULT),
  as_of: asOf().optional(),
  mode: ModeFilter,
});

export const LedgerEntry = z.strictObject({
  position: nonNegativeInt().meta({ description: "The event's position in the log: unique and increasing." }),
  type: z.string().meta({ description: 'The event type, e.g. CreditsGranted, LookupCharged, LookupRefunded.' }),
  request_id: z.string().nullable().meta({ description: "The call's request id for a charge or refund; null for a grant." }),
  key_id: z.string().nullable().meta({ description: 'The key that made the call; null for a grant.' }),
  credits: z.int().meta({ description: 'Signed: positive adds to the balance, negative draws on it.' }),
  balance_after: nonNegativeInt().meta({ description: 'The workspace balance right after this entry, in credits.' }),
  recorded_at: isoDateTime().meta({ description: 'When the event was recorded (ISO 8601, UTC).' }),
  mode: KeyMode.meta({ description: 'The mode of the call\'s key (`test`: a test key\'s call, always 0 credits); `live` for a grant.' }),
});

export const LedgerResponse = z.strictObject({
  data: z.array(LedgerEntry).meta({ description: 'The entries, oldest first (by log position).' }),
  next: nonNegativeInt().nullable().meta({ description: 'The `after` value of the next page; null on the last page.' }),
});

/** A half-open period `[from, to)` of recording time, as instants. */
const period = {
  from: isoDateTime().meta({ description: 'Start of the period, included (an instant, e.g. 2025-06-01T00:00:00Z).' }),
  to: isoDateTime().meta({ description: 'End of the period, excluded.' }),
};

export const StatementQuery = z.strictObject({
  ...period,
  format: z.enum(['json', 'csv']).default('json').meta({ description: '`csv`: one line per ledger entry of the period, with its event position and hash.' }),
  mode: ModeFilter,
});

export const StatementOperation = z.strictObject({
  operation: OperationName,
  calls: nonNegativeInt().meta({ description: 'Calls of the operation charged in the period.' }),
  charged: nonNegativeInt().meta({ description: 'Credits charged in the period.' }),
  refunded: nonNegativeInt().meta({ description: 'Credits refunded in the period.' }),
});

export const StatementResponse = z
  .strictObject({
    workspace_id: z.string().meta({ description: 'The workspace id (`ws_…`).' }),
    from: isoDateTime().meta({ description: 'Start of the period, included, as asked.' }),
    to: isoDateTime().meta({ description: 'End of the period, excluded, as asked.' }),
    opening_balance: nonNegativeInt().meta({ description: 'The sum of every ledger entry recorded before `from`.' }),
    credits_granted: nonNegativeInt().meta({ description: 'Credits granted in the period.' }),
    charged: nonNegativeInt().meta({ description: 'Credits charged in the period.' }),
    refunded: nonNegativeInt().meta({ description: 'Credits refunded in the period.' }),
    closing_balance: nonNegativeInt().meta({ description: 'opening_balance + credits_granted − charged + refunded; the next period\'s opening balance.' }),
    calls: nonNegativeInt().meta({ description: 'Calls charged in the period.' }),
    by_operation: z.array(StatementOperation).meta({ description: 'Calls and credits per operation with a charge or refund in the period, by name.' }),
    entries: nonNegativeInt().meta({ description: 'Ledger entries (events) in the period: the lines of `format=csv`.' }),
    first_position: nonNegativeInt().nullable().meta({ description: "The log position of the period's first entry; null when it has none." }),
    last_position: nonNegativeInt().nullable().meta({ description: "The log position of the period's last entry; null when it has none." }),
  })
  .meta({ description: 'What the ledger did over `[from, to)`.' });

/** The columns of a statement's `format=csv`, one line per ledger entry (services/finance/statement.ts writes them). */
export const STATEMENT_CSV_COLUMNS = ['position', 'recorded_at', 'type', 'operation', 'request_id', 'key_id', 'credits', 'balance_after', 'event_hash'] as const;

export const LedgerExportQuery = z.strictObject({
  ...period,
  after: queryInt(0, Number.MAX_SAFE_INTEGER).optional(),
  limit: queryInt(1, 10_000).default(1000),
});

export const LedgerExportLine = z.strictObject({
  workspace_id: z.string(),
  position: nonNegativeInt(),
  recorded_at: isoDateTime(),
  type: z.string(),
  operation: z.string().nullable(),
  request_id: z.string().nullable(),
  key_id: z.string().nullable(),
  credits: z.int(),
  balance_after: nonNegativeInt(),
  event_hash: z.string().nullable(),
});

export const LedgerExportResponse = z.strictObject({ data: z.array(LedgerExportLine), next: nonNegativeInt().nullable() });

export const UsageExportQuery = z.strictObject(period);

/** Finance exports: live keys' rows only (a test key's calls cost nothing and are no business of billing). */
export const UsageExportResponse = z.strictObject({ data: z.array(UsageRow.omit({ mode: true }).extend({ workspace_id: z.string(), key_id: z.string() })) });

export const AuditMismatch = z.strictObject({
  projection: z.string().meta({ description: 'The projection table that disagrees with the replayed log, e.g. workspaces.' }),
  key: z.string().meta({ description: 'The row: a workspace id, key id, ledger position, request id, alias…' }),
  field: z.string().meta({ description: 'The column, or `row` for a missing or extra row.' }),
  expected: z.unknown().meta({ description: 'What the replay of the log gives.' }),
  actual: z.unknown().meta({ description: 'What the projection holds.' }),
});

export const ChainBreak = z.strictObject({
  workspace_id: z.string(),
  position: nonNegativeInt().meta({ description: 'The log position of the first event of the chain that does not hold.' }),
  stream: z.string(),
  version: nonNegativeInt(),
  field: z.enum(['prev_hash', 'hash']).meta({ description: '`prev_hash`: the link to the previous ledger event is wrong; `hash`: the event is not the one that was hashed.' }),
  expected: z.string().nullable(),
  actual: z.unknown(),
});

export const AuditResponse = z.strictObject({
  ok: z.boolean(),
  events: nonNegativeInt(),
  workspaces: nonNegativeInt(),
  mismatches: z.array(AuditMismatch),
  chains: z
    .strictObject({ checked: nonNegativeInt(), broken: z.array(ChainBreak) })
    .meta({ description: "The ledger's hash chains, one per workspace, and the first broken link of each broken one." }),
});

export const AuditJobResponse = z
  .strictObject({
    id: z.string().meta({ description: 'The job id (`aud_…`), valid on the instance that runs it.' }),
    state: z.enum(['running', 'done', 'failed']),
    phase: z
      .enum(['catching_up', 'replaying', 'comparing'])
      .nullable()
      .meta({ description: 'While running: `catching_up` (the usage projection to the log\'s end), `replaying` (reading the log), `comparing` (the projection tables with the replay); null once finished.' }),
    started_at: isoDateTime(),
    finished_at: isoDateTime().nullable(),
    elapsed_ms: nonNegativeInt(),
    events_read: nonNegativeInt().meta({ description: 'Events read and replayed so far.' }),
    position: nonNegativeInt().meta({ description: 'The log position of the last event read.' }),
    head_position: nonNegativeInt().nullable().meta({ description: "The log's last position in the audit's snapshot: what it reads up to; null until the snapshot is taken." }),
    percent: z.number().min(0).max(100).nullable().meta({ description: '`position` as a share of `head_position`, one decimal; null until the head is known.' }),
    events_per_second: nonNegativeInt().meta({ description: 'Events read per second since the audit began reading the log (after `catching_up`).' }),
    report: AuditResponse.nullable().meta({ description: 'When done: the answer of `POST /admin/v1/audit`.' }),
    error: z.string().nullable().meta({ description: 'When failed: why, on one line.' }),
  })
  .meta({ description: 'An audit of the whole log, running or finished, on this instance.' });

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
/** Every operation of the event log is a priced lookup. */
export type PricedOperation = Operation;
export type PricedOperationEntry = z.infer<typeof PricedOperationEntry>;
export type FreeArea = z.infer<typeof FreeArea>;
export type PricingResponse = z.infer<typeof PricingResponse>;
export type HealthResponse = z.infer<typeof HealthResponse>;
export type ReadinessResponse = z.infer<typeof ReadinessResponse>;
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
export type StatementResponse = z.infer<typeof StatementResponse>;
export type LedgerExportResponse = z.infer<typeof LedgerExportResponse>;
export type LedgerExportLine = z.infer<typeof LedgerExportLine>;
export type UsageExportResponse = z.infer<typeof UsageExportResponse>;
export type AuditMismatch = z.infer<typeof AuditMismatch>;
export type AuditResponse = z.infer<typeof AuditResponse>;
export type AuditJobResponse = z.infer<typeof AuditJobResponse>;
