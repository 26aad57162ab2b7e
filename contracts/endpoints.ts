import { z } from 'zod';
import type { ErrorCode } from './errors';
import {
  AdminPathParams,
  AsyncApiDocumentResponse,
  AuditJobResponse,
  AuditResponse,
  BATCH_MAX_ITEMS,
  BatchRequest,
  BatchResponse,
  type BatchOperation,
  CacheEntryResponse,
  CacheStatsResponse,
  CompanyCacheRequest,
  CompanyLookupRequest,
  CompanyLookupResponse,
  CreditsGrantRequest,
  CreditsGrantResponse,
  DomainCacheRequest,
  DomainLookupRequest,
  DomainLookupResponse,
  ErrorsListResponse,
  HealthResponse,
  KeyCreatedResponse,
  KeyCreateRequest,
  KeyListResponse,
  KeyRevokeResponse,
  LedgerExportQuery,
  LedgerExportResponse,
  LedgerQuery,
  LedgerResponse,
  OpenApiDocumentResponse,
  PersonCacheRequest,
  PersonLookupRequest,
  PersonLookupResponse,
  PricingResponse,
  ReadinessResponse,
  SEARCH_LIMIT_MAX,
  SearchRequest,
  SearchResponse,
  StatementQuery,
  StatementResponse,
  UsageExportQuery,
  UsageExportResponse,
  UsageQuery,
  UsageResponse,
  WorkspaceCreatedResponse,
  WorkspaceCreateRequest,
  WorkspacePatchRequest,
  WorkspaceQuery,
  WorkspaceResponse,
  type PricedOperation,
} from './http';

/**
 * The one route table. Route registration (services/api/routes/*), the OpenAPI document
 * (openapi.ts), the endpoint table of `/docs` and the endpoint lists of `GET /v1/pricing` are all
 * derived from it: adding an endpoint is one row here plus its handler.
 */

/** Which part of the API a route belongs to: decides auth, buckets and counting. */
export type Area = 'lookup' | 'cache' | 'meta' | 'admin';
export type Tag = 'Lookups' | 'Search' | 'Cache' | 'Meta' | 'Admin';

export interface Endpoint {
  /** The OpenAPI operationId, and the name a handler is registered under. */
  id: string;
  method: 'GET' | 'POST' | 'PATCH';
  /** OpenAPI style: `{id}` for a path parameter. */
  path: string;
  area: Area;
  tag: Tag;
  summary: string;
  description?: string;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  /** The body of the success answer; `html` for the human documentation pages. */
  answer: z.ZodType | 'html';
  /** What the success answer is, in the OpenAPI document (default: the summary). */
  answerDescription?: string;
  status: 200 | 201 | 202;
  /**
   * The error codes its handler may answer, in the order the OpenAPI examples list them. Those its
   * admission adds (admissionErrors: a key, the rate-limit bucket) are not listed here.
   */
  errors: readonly ErrorCode[];
  /** The operations it is billed as (by the reference it is given); none: free. */
  priced?: readonly PricedOperation[];
  /** Takes an Idempotency-Key: its 200 and 404 answers are stored and replayed. */
  idempotent: boolean;
  /** Its line in the endpoint table of `/docs`; absent: not listed there. */
  docs?: string;
  /** False for a page reached from `/docs`, which pricing lists once as `GET /docs`. */
  pricingListed?: false;
  /** How the route draws on its rate-limit bucket; default `'bucket'` (RateLimitPolicy). */
  rateLimit?: RateLimitPolicy;
  /** Statuses answered with the success body (`answer`), not the error envelope: the probes' 503. */
  otherAnswers?: readonly { status: 503; description: string }[];
  /**
   * Answers several priced calls at once (POST /v1/batch): each item is billed as its single call,
   * its price the sum of theirs; the answer's credit headers are the sums, no X-Cache or Age.
   */
  batch?: true;
}

/**
 * - `bucket`: a token of the key's (or the client address's) bucket, RateLimit headers, 503 while
 *   the bucket cannot be read.
 * - `none`: no bucket, no RateLimit headers. For the readiness probe: a load balancer probing often
 *   from one address must not be throttled into "not ready", nor be refused by the Redis whose
 *   absence it is there to report.
 * - `bucket_when_reachable`: a bucket as usual, but while it cannot be read (Redis out of reach)
 *   answered anyway, without RateLimit headers. For the liveness probe: an orchestrator must not
 *   restart healthy instances because the limiter is away.
 */
export type RateLimitPolicy = 'bucket' | 'none' | 'bucket_when_reachable';

export function rateLimitPolicy(row: Endpoint): RateLimitPolicy {
  return row.rateLimit ?? 'bucket';
}

/**
 * The errors any row may answer before (or whatever) its handler runs, from its area and its
 * rate-limit policy, as services/api/app.ts admits a request: a request the server cannot read
 * (a Host missing, a malformed header) on any path; no key where one is needed; the bucket
 * empty; the bucket unreadable (Redis out) where the policy does not answer without it; a bug.
 */
export function admissionErrors(row: Endpoint): ErrorCode[] {
  // The admin API (ADMIN_TOKEN) is on no bucket.
  const policy = row.area === 'admin' ? 'none' : rateLimitPolicy(row);
  return [
    'invalid_request',
    ...(row.area === 'meta' ? [] : (['unauthorized'] as const)),
    ...(policy === 'none' ? [] : (['rate_limited'] as const)),
    ...(policy === 'bucket' ? (['service_unavailable'] as const) : []),
    'internal_error',
  ];
}

/** Every error code a row may answer: its handler's, then its admission's. */
export function errorsOf(row: Endpoint): ErrorCode[] {
  return [...new Set([...row.errors, ...admissionErrors(row)])];
}

const LOOKUP_ERRORS = [
  'invalid_request',
  'insufficient_credits',
  'not_found',
  'idempotency_key_in_use',
  'idempotency_key_reused',
  'concurrency_limited',
  'upstream_error',
  'parse_error',
  'blocked',
  'source_rate_limited',
  'no_capacity',
  'timeout',
  'service_unavailable',
] as const satisfies readonly ErrorCode[];

/**
 * What fails a batch as a whole, uncharged: its envelope (400), its Idempotency-Key (409, 422),
 * load shedding (503 no_capacity), the idempotency store away (503). Anything else is an item's.
 */
const BATCH_ERRORS = [
  'invalid_request',
  'idempotency_key_in_use',
  'idempotency_key_reused',
  'no_capacity',
  'service_unavailable',
] as const satisfies readonly ErrorCode[];

/** Search answers like a lookup (Idempotency-Key included) but has no not-found. */
const SEARCH_ERRORS = LOOKUP_ERRORS.filter((code) => code !== 'not_found');
/** Their handlers read the database: 503 while it is away. */
const CACHE_ERRORS = ['invalid_request', 'service_unavailable'] as const satisfies readonly ErrorCode[];
/** Answered from memory: nothing beyond admission's. */
const META_ERRORS = [] as const satisfies readonly ErrorCode[];
const ADMIN_ERRORS = ['invalid_request', 'unauthorized', 'internal_error', 'service_unavailable'] as const satisfies readonly ErrorCode[];
const ADMIN_ID_ERRORS = [...ADMIN_ERRORS, 'not_found'] as const satisfies readonly ErrorCode[];

const CACHE_DESCRIPTION = 'Free of charge. Says what the cache holds for the reference; never returns the profile itself.';
const html = 'html' as const;

export const ENDPOINTS = [
  // ---------- Lookups (charged) ----------
  {
    id: 'lookupCompany',
    method: 'POST',
    path: '/v1/company',
    area: 'lookup',
    tag: 'Lookups',
    summary: 'Look up a company by any company reference',
    description:
      'Accepts a company page URL in any variant or case, a slug, an old slug, a numeric id or a URN.',
    body: CompanyLookupRequest,
    answer: CompanyLookupResponse,
    answerDescription: 'The profile, from the cache or fetched live.',
    status: 200,
    errors: [...LOOKUP_ERRORS, 'invalid_company_reference', 'unresolvable_id'],
    priced: ['company'],
    idempotent: true,
    docs: 'Company by URL, slug, old slug, numeric id or URN: {"url": …, "max_age"?: …, "on_error"?: "stale"}',
  },
  {
    id: 'lookupDomain',
    method: 'POST',
    path: '/v1/domain',
    area: 'lookup',
    tag: 'Lookups',
    summary: 'Look up a company by website domain',
    description:
      'Any page or subdomain of a site is the same lookup (its registrable domain). `meta.resolved` says which domain was resolved and whether the company website confirms it.',
    body: DomainLookupRequest,
    answer: DomainLookupResponse,
    answerDescription: 'The profile, from the cache or fetched live.',
    status: 200,
    errors: [...LOOKUP_ERRORS, 'invalid_domain'],
    priced: ['domain'],
    idempotent: true,
    docs: 'Company by website domain: {"domain": …, "max_age"?: …, "on_error"?: "stale"}',
  },
  {
    id: 'lookupPerson',
    method: 'POST',
    path: '/v1/person',
    area: 'lookup',
    tag: 'Lookups',
    summary: 'Look up a person by profile URL or name',
    description:
      "A profile URL (`/in/<id>`) or the person's name. Member ids (prefix `ACoAA`) are rejected. `meta.content_hash` covers `data`: an unchanged profile keeps its hash.",
    body: PersonLookupRequest,
    answer: PersonLookupResponse,
    answerDescription: 'The profile, from the cache or fetched live.',
    status: 200,
    errors: [...LOOKUP_ERRORS, 'invalid_person_reference'],
    priced: ['person_url', 'person_name'],
    idempotent: true,
    docs: 'Person by profile URL or name: {"url": …, "max_age"?: …, "on_error"?: "stale"}',
  },
  {
    id: 'search',
    method: 'POST',
    path: '/v1/search',
    area: 'lookup',
    tag: 'Search',
    summary: 'Web search results as JSON',
    description:
      'Web search results for `query`, at most `limit` (default 10), served from the cache when fresh enough (`max_age`). Accepts `Idempotency-Key` like the lookups.',
    body: SearchRequest,
    answer: SearchResponse,
    answerDescription: 'The search results.',
    status: 200,
    errors: SEARCH_ERRORS,
    priced: ['search'],
    idempotent: true,
    docs: `Web search results: {"query": …, "limit"?: 1–${SEARCH_LIMIT_MAX}, "max_age"?: …, "on_error"?: "stale"}`,
  },
  {
    id: 'batch',
    method: 'POST',
    path: '/v1/batch',
    area: 'lookup',
    tag: 'Lookups',
    summary: `Up to ${BATCH_MAX_ITEMS} lookups and searches in one call`,
    description: [
      `1–${BATCH_MAX_ITEMS} items, each \`{"operation": "company" | "domain" | "person" | "search", "body": <that call's body>, "id"?: <yours>}\`,`,
      'answered 200 with one result per item, in order: its own `request_id`, the `status` its single call would have had, `data` (with `cache` and `content_hash`) or `error` in that call\'s shapes, and `credits_charged`.',
      'Each item is charged, refunded, cached and logged exactly as its single call; one item\'s failure never fails the others.',
      'Items are charged in order: one whose price the balance no longer covers is 402 `insufficient_credits`, uncharged (a later, cheaper one may still be charged); the balance never goes below zero.',
      'Rate limit: one token of the key\'s bucket per item; items past the bucket are 429 `rate_limited`, uncharged. Concurrency: one slot of `max_concurrency` per item fetched live (cache hits take none); items past it are 429 `concurrency_limited`, uncharged.',
      'An invalid envelope (no `items` array, 0 or more than 100 items, an unknown `operation`) is a 400 for the whole batch, uncharged; an item whose `body` its call would refuse is that item\'s 400.',
      'With `Idempotency-Key`, a retry replays the whole answer. Price: the sum of its items\' prices, each as its single call (GET /v1/pricing).',
    ].join(' '),
    body: BatchRequest,
    answer: BatchResponse,
    answerDescription: 'One result per item, in order (items that failed included); credit headers and `meta` are the sums.',
    status: 200,
    errors: BATCH_ERRORS,
    idempotent: true,
    batch: true,
    docs: `Up to ${BATCH_MAX_ITEMS} lookups and searches at once: {"items": [{"operation": …, "body": …, "id"?: …}]}; each item billed as its single call`,
  },
  // ---------- Cache (free) ----------
  {
    id: 'cacheCompany',
    method: 'POST',
    path: '/v1/cache/company',
    area: 'cache',
    tag: 'Cache',
    summary: 'What the cache holds for a company reference',
    description: CACHE_DESCRIPTION,
    body: CompanyCacheRequest,
    answer: CacheEntryResponse,
    answerDescription: 'What the cache holds.',
    status: 200,
    errors: [...CACHE_ERRORS, 'invalid_company_reference'],
    idempotent: false,
    docs: 'What the cache holds for a company (free)',
  },
  {
    id: 'cacheDomain',
    method: 'POST',
    path: '/v1/cache/domain',
    area: 'cache',
    tag: 'Cache',
    summary: 'What the cache holds for a website domain',
    description: CACHE_DESCRIPTION,
    body: DomainCacheRequest,
    answer: CacheEntryResponse,
    answerDescription: 'What the cache holds.',
    status: 200,
    errors: [...CACHE_ERRORS, 'invalid_domain'],
    idempotent: false,
    docs: 'What the cache holds for a domain (free)',
  },
  {
    id: 'cachePerson',
    method: 'POST',
    path: '/v1/cache/person',
    area: 'cache',
    tag: 'Cache',
    summary: 'What the cache holds for a person reference',
    description: CACHE_DESCRIPTION,
    body: PersonCacheRequest,
    answer: CacheEntryResponse,
    answerDescription: 'What the cache holds.',
    status: 200,
    errors: [...CACHE_ERRORS, 'invalid_person_reference'],
    idempotent: false,
    docs: 'What the cache holds for a person (free)',
  },
  {
    id: 'cacheStats',
    method: 'GET',
    path: '/v1/cache/stats',
    area: 'cache',
    tag: 'Cache',
    summary: 'Cache entry counts',
    description: 'Free of charge.',
    answer: CacheStatsResponse,
    answerDescription: 'Entry counts.',
    status: 200,
    errors: ['service_unavailable'],
    idempotent: false,
    docs: 'Cache entry counts (free)',
  },
  // ---------- Meta (public) ----------
  {
    id: 'health',
    method: 'GET',
    path: '/v1/health',
    area: 'meta',
    tag: 'Meta',
    summary: 'Service health',
    description:
      '`ok`, or 503 `degraded` when the database does not answer. Public, on the per-IP bucket; answered even while that bucket cannot be read (Redis out of reach), then without RateLimit headers.',
    answer: HealthResponse,
    answerDescription: 'Healthy: `ok`.',
    otherAnswers: [{ status: 503, description: 'Degraded (`status: degraded`): the same body, the failing dependency `fail` in `checks`.' }],
    status: 200,
    // Its 503 is the `degraded` body of `otherAnswers`; the unreadable bucket is no 503 here (its policy).
    errors: META_ERRORS,
    rateLimit: 'bucket_when_reachable',
    idempotent: false,
    docs: 'Service health (public)',
  },
  {
    id: 'ready',
    method: 'GET',
    path: '/v1/health/ready',
    area: 'meta',
    tag: 'Meta',
    summary: 'Readiness: whether this instance can take calls now',
    description:
      'By the instance\'s own state only: started, migrated, not draining. From SIGTERM on it answers 503 `draining` while it finishes the requests it accepted (for `DRAIN_DELAY_MS` before its listener closes). A shared dependency that is down or behind (the database, Redis, the relay\'s or the usage projection\'s lag) does not make it unready: that is a metric and an alert, and the API answers such an outage itself (503 `service_unavailable` with Retry-After). Answered from memory, on no rate-limit bucket.',
    answer: ReadinessResponse,
    answerDescription: 'Ready: started, migrated, not draining.',
    otherAnswers: [{ status: 503, description: 'Not ready (`status: draining` or `starting`): the same body, each failing check named in `failures`.' }],
    status: 200,
    // Unmetered, so never rate_limited (its policy); not being ready is the 503 of `otherAnswers`, not an error.
    errors: META_ERRORS,
    idempotent: false,
    docs: 'Readiness of this instance: started, migrated, not draining (public)',
    rateLimit: 'none',
  },
  {
    id: 'pricing',
    method: 'GET',
    path: '/v1/pricing',
    area: 'meta',
    tag: 'Meta',
    summary: 'Prices per operation, in credits',
    description:
      'The price of each charged operation (success and definitive not-found), the free areas and the billing rules. Public.',
    answer: PricingResponse,
    status: 200,
    errors: META_ERRORS,
    idempotent: false,
    docs: 'Prices per operation (public)',
  },
  {
    id: 'openapi',
    method: 'GET',
    path: '/v1/openapi.json',
    area: 'meta',
    tag: 'Meta',
    summary: 'This OpenAPI document',
    description:
      'The OpenAPI 3.1 description of every public operation, its fields, headers, examples and errors. Public.',
    answer: OpenApiDocumentResponse,
    status: 200,
    errors: META_ERRORS,
    idempotent: false,
    docs: 'OpenAPI 3.1 description (public)',
  },
  {
    id: 'errors',
    method: 'GET',
    path: '/v1/errors',
    area: 'meta',
    tag: 'Meta',
    summary: 'The error catalogue',
    description: 'Every error code with its HTTP status, type, retry flag and billing rule.',
    answer: ErrorsListResponse,
    status: 200,
    errors: META_ERRORS,
    idempotent: false,
    docs: 'Error catalogue as JSON (public)',
  },
  {
    id: 'asyncapi',
    method: 'GET',
    path: '/v1/asyncapi.json',
    area: 'meta',
    tag: 'Meta',
    summary: 'The AsyncAPI 3.0 description of the Kafka event topics',
    description: 'Every topic of the event stream (docs/events.md): channels, keys, CloudEvents headers and message schemas.',
    answer: AsyncApiDocumentResponse,
    status: 200,
    errors: META_ERRORS,
    idempotent: false,
    docs: 'AsyncAPI 3.0 description of the Kafka event topics (public)',
  },
  {
    id: 'docs',
    method: 'GET',
    path: '/docs',
    area: 'meta',
    tag: 'Meta',
    summary: 'The human documentation',
    answer: html,
    status: 200,
    errors: META_ERRORS,
    idempotent: false,
  },
  {
    id: 'docsErrors',
    method: 'GET',
    path: '/docs/errors',
    area: 'meta',
    tag: 'Meta',
    summary: 'The error reference, one anchor per code',
    answer: html,
    status: 200,
    errors: META_ERRORS,
    idempotent: false,
    pricingListed: false,
  },
  // ---------- Admin API (ADMIN_TOKEN; not in the public documents) ----------
  {
    id: 'adminCreateWorkspace',
    method: 'POST',
    path: '/admin/v1/workspaces',
    area: 'admin',
    tag: 'Admin',
    summary: 'Create a workspace',
    body: WorkspaceCreateRequest,
    answer: WorkspaceCreatedResponse,
    status: 201,
    errors: ADMIN_ERRORS,
    idempotent: false,
  },
  {
    id: 'adminGetWorkspace',
    method: 'GET',
    path: '/admin/v1/workspaces/{id}',
    area: 'admin',
    tag: 'Admin',
    summary: 'A workspace (as it stood at `as_of`, when given)',
    params: AdminPathParams,
    query: WorkspaceQuery,
    answer: WorkspaceResponse,
    status: 200,
    errors: ADMIN_ID_ERRORS,
    idempotent: false,
  },
  {
    id: 'adminPatchWorkspace',
    method: 'PATCH',
    path: '/admin/v1/workspaces/{id}',
    area: 'admin',
    tag: 'Admin',
    summary: "Change a workspace's limits",
    params: AdminPathParams,
    body: WorkspacePatchRequest,
    answer: WorkspaceResponse,
    status: 200,
    errors: ADMIN_ID_ERRORS,
    idempotent: false,
  },
  {
    id: 'adminGrantCredits',
    method: 'POST',
    path: '/admin/v1/workspaces/{id}/credits',
    area: 'admin',
    tag: 'Admin',
    summary: 'Grant credits',
    params: AdminPathParams,
    body: CreditsGrantRequest,
    answer: CreditsGrantResponse,
    status: 201,
    errors: ADMIN_ID_ERRORS,
    idempotent: false,
  },
  {
    id: 'adminCreateKey',
    method: 'POST',
    path: '/admin/v1/workspaces/{id}/keys',
    area: 'admin',
    tag: 'Admin',
    summary: 'Create an API key (the key is shown only in this answer)',
    params: AdminPathParams,
    body: KeyCreateRequest,
    answer: KeyCreatedResponse,
    status: 201,
    errors: ADMIN_ID_ERRORS,
    idempotent: false,
  },
  {
    id: 'adminListKeys',
    method: 'GET',
    path: '/admin/v1/workspaces/{id}/keys',
    area: 'admin',
    tag: 'Admin',
    summary: "A workspace's API keys",
    params: AdminPathParams,
    answer: KeyListResponse,
    status: 200,
    errors: ADMIN_ID_ERRORS,
    idempotent: false,
  },
  {
    id: 'adminRevokeKey',
    method: 'POST',
    path: '/admin/v1/keys/{id}/revoke',
    area: 'admin',
    tag: 'Admin',
    summary: 'Revoke an API key',
    params: AdminPathParams,
    answer: KeyRevokeResponse,
    status: 200,
    errors: ADMIN_ID_ERRORS,
    idempotent: false,
  },
  {
    id: 'adminUsage',
    method: 'GET',
    path: '/admin/v1/workspaces/{id}/usage',
    area: 'admin',
    tag: 'Admin',
    summary: 'Usage per day, key and operation',
    params: AdminPathParams,
    query: UsageQuery,
    answer: UsageResponse,
    status: 200,
    errors: ADMIN_ID_ERRORS,
    idempotent: false,
  },
  {
    id: 'adminLedger',
    method: 'GET',
    path: '/admin/v1/workspaces/{id}/ledger',
    area: 'admin',
    tag: 'Admin',
    summary: "A workspace's ledger, paged (as it stood at `as_of`, when given)",
    params: AdminPathParams,
    query: LedgerQuery,
    answer: LedgerResponse,
    status: 200,
    errors: ADMIN_ID_ERRORS,
    idempotent: false,
  },
  {
    id: 'adminStatement',
    method: 'GET',
    path: '/admin/v1/workspaces/{id}/statement',
    area: 'admin',
    tag: 'Admin',
    summary: "A workspace's statement of a period [from, to); `format=csv`: its ledger entries",
    params: AdminPathParams,
    query: StatementQuery,
    answer: StatementResponse,
    status: 200,
    errors: ADMIN_ID_ERRORS,
    idempotent: false,
  },
  {
    id: 'adminLedgerExport',
    method: 'GET',
    path: '/admin/v1/ledger',
    area: 'admin',
    tag: 'Admin',
    summary: 'Every workspace\'s ledger entries recorded in [from, to), paged (exports)',
    query: LedgerExportQuery,
    answer: LedgerExportResponse,
    status: 200,
    errors: ADMIN_ERRORS,
    idempotent: false,
  },
  {
    id: 'adminUsageExport',
    method: 'GET',
    path: '/admin/v1/usage',
    area: 'admin',
    tag: 'Admin',
    summary: 'Every workspace\'s usage rows of the UTC days in [from, to) (exports)',
    query: UsageExportQuery,
    answer: UsageExportResponse,
    status: 200,
    errors: ADMIN_ERRORS,
    idempotent: false,
  },
  {
    id: 'adminAudit',
    method: 'POST',
    path: '/admin/v1/audit',
    area: 'admin',
    tag: 'Admin',
    summary: 'Replay the whole log against the projections',
    answer: AuditResponse,
    status: 200,
    errors: ADMIN_ERRORS,
    idempotent: false,
  },
  {
    id: 'adminStartAudit',
    method: 'POST',
    path: '/admin/v1/audits',
    area: 'admin',
    tag: 'Admin',
    summary: 'Start an audit of the whole log as a job to follow (at most one runs across instances)',
    description:
      '202 with the new job and `Location: /admin/v1/audits/{id}`; while an audit job already runs on any instance, 200 with that one (same `Location`). Jobs live in PostgreSQL; while it is away, 503 `service_unavailable`.',
    answer: AuditJobResponse,
    status: 202,
    errors: ADMIN_ERRORS,
    idempotent: false,
  },
  {
    id: 'adminGetAudit',
    method: 'GET',
    path: '/admin/v1/audits/{id}',
    area: 'admin',
    tag: 'Admin',
    summary: 'An audit job: running (events read, head position, elapsed) or finished (its report)',
    description:
      'Any instance answers for any job. A running job whose instance wrote no heartbeat for AUDIT_HEARTBEAT_TIMEOUT_MS is answered `failed` (its instance died). 404 `not_found` (reason `no_audit`) for no such job (the last 20 finished are kept); 503 `service_unavailable` while PostgreSQL is away.',
    params: AdminPathParams,
    answer: AuditJobResponse,
    status: 200,
    errors: ADMIN_ID_ERRORS,
    idempotent: false,
  },
  {
    id: 'adminRelay',
    method: 'GET',
    path: '/admin/v1/relay',
    area: 'admin',
    tag: 'Admin',
    summary: 'Kafka relay lag, when the relay runs in this process',
    answer: z.record(z.string(), z.unknown()),
    status: 200,
    errors: ADMIN_ERRORS,
    idempotent: false,
  },
] as const satisfies readonly Endpoint[];

export type EndpointRow = (typeof ENDPOINTS)[number];
export type EndpointId = EndpointRow['id'];
export type EndpointById<Id extends EndpointId> = Extract<EndpointRow, { id: Id }>;

export function endpoint<Id extends EndpointId>(id: Id): EndpointById<Id> {
  const found = ENDPOINTS.find((row) => row.id === id);
  if (!found) throw new Error(`no endpoint ${id}`);
  return found as EndpointById<Id>;
}

/** The endpoints of the public documents (OpenAPI, `/docs`): every JSON endpoint outside the admin API. */
export function publicJsonEndpoints(): Endpoint[] {
  return ENDPOINTS.filter((row: Endpoint) => row.area !== 'admin' && row.answer !== 'html');
}

/** `METHOD /path` of each endpoint of a free area, as `GET /v1/pricing` lists them. */
export function freeAreaEndpoints(area: 'cache' | 'meta'): string[] {
  return ENDPOINTS.filter((row: Endpoint) => row.area === area && row.pricingListed !== false).map((row) => `${row.method} ${row.path}`);
}

/** The single endpoint each batch operation calls: a batch item is that call. */
export const BATCH_ITEM_ENDPOINTS = {
  company: 'lookupCompany',
  domain: 'lookupDomain',
  person: 'lookupPerson',
  search: 'search',
} as const satisfies Record<BatchOperation, EndpointId>;

/** The row that answers several priced calls at once (POST /v1/batch). */
export function batchEndpoint(): Endpoint {
  const found = ENDPOINTS.find((row: Endpoint) => row.batch === true);
  if (!found) throw new Error('no batch endpoint');
  return found;
}

/** The endpoint a priced operation is called at. */
export function pricedEndpoint(operation: PricedOperation): Endpoint {
  const found = ENDPOINTS.find((row: Endpoint) => row.priced?.includes(operation));
  if (!found) throw new Error(`no endpoint is priced as ${operation}`);
  return found;
}
