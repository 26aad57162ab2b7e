import { z } from 'zod';
import {
  AcceptInvitationRequest,
  AdminInvitationCreatedResponse,
  ConsoleAlertSettings,
  ConsoleKey,
  ConsoleKeyCreated,
  ConsoleKeyCreateRequest,
  ConsoleKeyList,
  ConsoleKeyRenameRequest,
  ConsoleKeyRevoked,
  ConsoleLedgerCsvQuery,
  ConsoleLedgerQuery,
  ConsoleLedgerResponse,
  ConsoleRequestStory,
  ConsoleUsageQuery,
  ConsoleUsageResponse,
  InvitationCreatedResponse,
  InvitationCreateRequest,
  InvitationLookupQuery,
  InvitationPathParams,
  InvitationPreview,
  KeyPathParams,
  RequestPathParams,
  MemberPathParams,
  MemberPatchRequest,
  MembersResponse,
  OverviewResponse,
  PasswordChangeRequest,
  PasswordResetAskRequest,
  PasswordResetCompleteRequest,
  SessionResponse,
  SignInRequest,
} from './console';
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
import {
  WatchCreateRequest,
  WatchDeletedResponse,
  WatchListResponse,
  WatchPathParams,
  WatchResponse,
  WatchRunResponse,
  WebhookDeliveryListQuery,
  WebhookDeliveryListResponse,
  WebhookDeliveryPathParams,
  WebhookDeliveryResponse,
  WebhookEndpointCreateRequest,
  WebhookEndpointDeletedResponse,
  WebhookEndpointListResponse,
  WebhookEndpointPatchRequest,
  WebhookEndpointPathParams,
  WebhookEndpointResponse,
  WebhookEndpointWithSecretResponse,
} from './webhooks';

/**
 * The one route table: every route the service answers is a row, the public API, the admin API,
 * the console (pages, assets and its JSON API), the docs pages and `/metrics`. Route registration
 * (services/http/route.ts), admission (services/http/admission), the OpenAPI documents
 * (openapi.ts: the public one, the console's rows included, and the admin API's), the endpoint
 * table of `/docs` and the endpoint lists of `GET /v1/pricing` are all derived from it: adding an
 * endpoint is one row here plus its handler.
 */

/** Which part of the service a route belongs to: decides its success headers and how it is counted. */
export type Area = 'lookup' | 'cache' | 'webhooks' | 'watches' | 'meta' | 'admin' | 'console';
export type Tag = 'Lookups' | 'Search' | 'Cache' | 'Webhooks' | 'Watches' | 'Meta' | 'Admin' | 'Console';

/**
 * Who may call a route (services/http/admission):
 * - `public`: anyone; no key is read.
 * - `apiKey`: a workspace's API key (`Authorization: Bearer` or `X-Api-Key`); 401 without a valid one.
 * - `admin`: the operator's ADMIN_TOKEN; answers never cached.
 * - `session`: a console member's session cookie; a POST, PATCH or DELETE also needs the session's
 *   CSRF token and a same-origin `Origin` (403 `forbidden`, reason `csrf`).
 */
export type Admission = 'public' | 'apiKey' | 'admin' | 'session';

export interface Endpoint {
  /** The OpenAPI operationId, and the name a handler is registered under. */
  id: string;
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** OpenAPI style: `{id}` for a path parameter. */
  path: string;
  area: Area;
  tag: Tag;
  /** Who may call it; default by area (ADMISSION_BY_AREA). */
  admission?: Admission;
  summary: string;
  description?: string;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  /**
   * The body of the success answer: a schema (JSON); `html` for pages; `csv` for a CSV download;
   * `empty` for no body (204); `raw` for what no document describes (assets, a redirect, metrics).
   */
  answer: z.ZodType | 'html' | 'csv' | 'empty' | 'raw';
  /** The JSON answer may also come as CSV (`format=csv`). */
  csv?: true;
  /** What the success answer is, in the OpenAPI document (default: the summary). */
  answerDescription?: string;
  status: 200 | 201 | 202 | 204 | 302;
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
  /** How the route draws on a rate-limit bucket; default by admission (rateLimitPolicy). */
  rateLimit?: RateLimitPolicy;
  /** A POST, PATCH or DELETE from a page of another origin is refused (403, reason `csrf`); always so for `session`. */
  sameOrigin?: true;
  /** Kept out of every OpenAPI document (pages, assets, metrics); default: in its admission's document. */
  internal?: true;
  /** Statuses answered with the success body (`answer`), not the error envelope: the probes' 503, a job already running. */
  otherAnswers?: readonly { status: 200 | 503; description: string }[];
  /**
   * Answers several priced calls at once (POST /v1/batch): each item is billed as its single call,
   * its price the sum of theirs; the answer's credit headers are the sums, no X-Cache or Age.
   */
  batch?: true;
}

/**
 * - `bucket`: a token of the key's (or, without one, the client address's) bucket, RateLimit
 *   headers, 503 while the bucket cannot be read.
 * - `none`: no bucket, no RateLimit headers. For the readiness probe: a load balancer probing often
 *   from one address must not be throttled into "not ready", nor be refused by the Redis whose
 *   absence it is there to report. The admin API, behind its token, is on none either.
 * - `bucket_when_reachable`: a bucket as usual, but while it cannot be read (Redis out of reach)
 *   answered anyway, without RateLimit headers. For the liveness probe: an orchestrator must not
 *   restart healthy instances because the limiter is away.
 * - `console`: the console's own bucket per client address (CONSOLE_RATE_PER_MINUTE), taken before
 *   anything else: a person clicking through pages (each a few calls) must not drain, nor be
 *   drained by, the Meta area's bucket. RateLimit headers on every answer; 503 while unreadable.
 */
export type RateLimitPolicy = 'bucket' | 'none' | 'bucket_when_reachable' | 'console';

/**
 * A single lookup or search holds one of its workspace's `max_concurrency` slots while it runs,
 * cache hits included (docs/api.md "Limits"); a batch takes one per item fetched live, by itself.
 */
export const takesConcurrencySlot = (row: Endpoint): boolean => row.area === 'lookup' && !row.batch;

/** Per-IP bucket for calls without a valid key (401s, the Meta area, unknown paths). */
export const ANONYMOUS_RATE_PER_MINUTE = 120;
/** Console pages and calls per client address and minute. */
export const CONSOLE_RATE_PER_MINUTE = 600;

const ADMISSION_BY_AREA: Record<Area, Admission> = { lookup: 'apiKey', cache: 'apiKey', webhooks: 'apiKey', watches: 'apiKey', meta: 'public', admin: 'admin', console: 'session' };
const RATE_LIMIT_BY_ADMISSION: Record<Admission, RateLimitPolicy> = { public: 'bucket', apiKey: 'bucket', admin: 'none', session: 'console' };

export function admissionOf(row: Endpoint): Admission {
  return row.admission ?? ADMISSION_BY_AREA[row.area];
}

export function rateLimitPolicy(row: Endpoint): RateLimitPolicy {
  return row.rateLimit ?? RATE_LIMIT_BY_ADMISSION[admissionOf(row)];
}

/** Whether a POST, PATCH or DELETE of the row must come from the same origin (session rows, sign-in). */
export function refusesForeignOrigin(row: Endpoint): boolean {
  return admissionOf(row) === 'session' || row.sameOrigin === true;
}

/** The OpenAPI document a row is described in: the public one (console rows too), the admin one, or none. */
export function documentOf(row: Endpoint): 'public' | 'admin' | 'internal' {
  if (row.internal || row.answer === 'html' || row.answer === 'raw') return 'internal';
  return admissionOf(row) === 'admin' ? 'admin' : 'public';
}

/**
 * The errors any row may answer before (or whatever) its handler runs, from its admission and its
 * rate-limit policy (services/http/admission): a request the server cannot read (a Host missing, a
 * malformed header) on any path; no key, token or session where one is needed; a change from
 * another origin or without the CSRF token; the bucket empty; the bucket unreadable (Redis out)
 * where the policy does not answer without it; a bug.
 */
export function admissionErrors(row: Endpoint): ErrorCode[] {
  const policy = rateLimitPolicy(row);
  return [
    'invalid_request',
    ...(admissionOf(row) === 'public' ? [] : (['unauthorized'] as const)),
    ...(refusesForeignOrigin(row) && row.method !== 'GET' ? (['forbidden'] as const) : []),
    ...(policy === 'none' ? [] : (['rate_limited'] as const)),
    'internal_error',
    ...(policy === 'bucket' || policy === 'console' ? (['service_unavailable'] as const) : []),
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

/** Webhook endpoints and watches are rows of the database: 404 for another workspace's or none. */
const WEBHOOK_ERRORS = ['invalid_request', 'service_unavailable'] as const satisfies readonly ErrorCode[];
const WEBHOOK_ID_ERRORS = [...WEBHOOK_ERRORS, 'not_found'] as const satisfies readonly ErrorCode[];
/** Running a watch now is a lookup: its errors, the watch's not-found. */
const WATCH_RUN_ERRORS = LOOKUP_ERRORS.filter((code) => !code.startsWith('idempotency_'));

const CACHE_DESCRIPTION = 'Free of charge. Says what the cache holds for the reference; never returns the profile itself.';
const html = 'html' as const;

/** A console page: HTML on the console's bucket, no session needed to load it (its script asks). */
function consolePage<const Id extends string>(id: Id, path: string, summary: string) {
  return {
    id,
    method: 'GET',
    path,
    area: 'console',
    tag: 'Console',
    admission: 'public',
    rateLimit: 'console',
    summary,
    answer: html,
    status: 200,
    errors: [],
    idempotent: false,
  } as const;
}

export const ENDPOINTS = [
  // ---------- Lookups (charged) ----------
  {
    id: 'lookupCompany',
    method: 'POST',
    path: '/v1/company',
    area: 'lookup',
    admission: 'apiKey',
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
    admission: 'apiKey',
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
    admission: 'apiKey',
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
    admission: 'apiKey',
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
    admission: 'apiKey',
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
    admission: 'apiKey',
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
    admission: 'apiKey',
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
    admission: 'apiKey',
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
  // ---------- Webhooks (free) ----------
  {
    id: 'createWebhookEndpoint',
    method: 'POST',
    path: '/v1/webhook-endpoints',
    area: 'webhooks',
    tag: 'Webhooks',
    summary: 'Register a webhook endpoint (its signing secret is shown only in this answer)',
    description:
      'Free. Deliveries follow the Standard Webhooks specification: `webhook-id`, `webhook-timestamp` and `webhook-signature` (`v1,` + base64 HMAC-SHA256 over `id.timestamp.body`, with the `whsec_` secret). The URL must resolve to public addresses only, unless the operator allows more (WEBHOOK_ALLOWED_HOSTS).',
    body: WebhookEndpointCreateRequest,
    answer: WebhookEndpointWithSecretResponse,
    answerDescription: 'The endpoint, with its signing secret (shown only here and on rotation).',
    status: 201,
    errors: WEBHOOK_ERRORS,
    idempotent: false,
    docs: 'Register a webhook endpoint: {"url": …, "event_types": […]} (free)',
  },
  {
    id: 'listWebhookEndpoints',
    method: 'GET',
    path: '/v1/webhook-endpoints',
    area: 'webhooks',
    tag: 'Webhooks',
    summary: "The workspace's webhook endpoints",
    description: 'Free. `state` says whether an endpoint is `failing` (a delivery was given up after 24 h of retries).',
    answer: WebhookEndpointListResponse,
    status: 200,
    errors: WEBHOOK_ERRORS,
    idempotent: false,
    docs: "The workspace's webhook endpoints (free)",
  },
  {
    id: 'getWebhookEndpoint',
    method: 'GET',
    path: '/v1/webhook-endpoints/{id}',
    area: 'webhooks',
    tag: 'Webhooks',
    summary: 'A webhook endpoint',
    description: 'Free.',
    params: WebhookEndpointPathParams,
    answer: WebhookEndpointResponse,
    status: 200,
    errors: WEBHOOK_ID_ERRORS,
    idempotent: false,
    docs: 'A webhook endpoint (free)',
  },
  {
    id: 'updateWebhookEndpoint',
    method: 'PATCH',
    path: '/v1/webhook-endpoints/{id}',
    area: 'webhooks',
    tag: 'Webhooks',
    summary: "Change a webhook endpoint's URL, event types, description, or pause it",
    description: 'Free.',
    params: WebhookEndpointPathParams,
    body: WebhookEndpointPatchRequest,
    answer: WebhookEndpointResponse,
    status: 200,
    errors: WEBHOOK_ID_ERRORS,
    idempotent: false,
    docs: 'Change a webhook endpoint (free)',
  },
  {
    id: 'deleteWebhookEndpoint',
    method: 'DELETE',
    path: '/v1/webhook-endpoints/{id}',
    area: 'webhooks',
    tag: 'Webhooks',
    summary: 'Delete a webhook endpoint (its pending deliveries are dropped)',
    description: 'Free.',
    params: WebhookEndpointPathParams,
    answer: WebhookEndpointDeletedResponse,
    status: 200,
    errors: WEBHOOK_ID_ERRORS,
    idempotent: false,
    docs: 'Delete a webhook endpoint (free)',
  },
  {
    id: 'rotateWebhookSecret',
    method: 'POST',
    path: '/v1/webhook-endpoints/{id}/rotate-secret',
    area: 'webhooks',
    tag: 'Webhooks',
    summary: 'Rotate the signing secret (the previous one still signs during the overlap)',
    description:
      'Free. A new secret, shown only in this answer. Until `previous_secret_expires_at` (WEBHOOK_SECRET_OVERLAP_MS, default 24 h) every delivery carries two signatures in `webhook-signature`, one per secret, so a receiver can switch at its own pace.',
    params: WebhookEndpointPathParams,
    answer: WebhookEndpointWithSecretResponse,
    status: 200,
    errors: WEBHOOK_ID_ERRORS,
    idempotent: false,
    docs: 'Rotate the signing secret, with overlap (free)',
  },
  {
    id: 'listWebhookDeliveries',
    method: 'GET',
    path: '/v1/webhook-endpoints/{id}/deliveries',
    area: 'webhooks',
    tag: 'Webhooks',
    summary: "An endpoint's deliveries, newest first, each with its attempts",
    description: 'Free. Each attempt: its status, latency and the response code.',
    params: WebhookEndpointPathParams,
    query: WebhookDeliveryListQuery,
    answer: WebhookDeliveryListResponse,
    status: 200,
    errors: WEBHOOK_ID_ERRORS,
    idempotent: false,
    docs: "An endpoint's deliveries and their attempts (free)",
  },
  {
    id: 'resendWebhookDelivery',
    method: 'POST',
    path: '/v1/webhook-endpoints/{id}/deliveries/{delivery_id}/resend',
    area: 'webhooks',
    tag: 'Webhooks',
    summary: 'Send a delivery again (same `webhook-id`)',
    description: 'Free. The delivery is due at once, whatever its state, with the same `webhook-id` (receivers de-duplicate by it) and a new retry horizon.',
    params: WebhookDeliveryPathParams,
    answer: WebhookDeliveryResponse,
    status: 202,
    errors: WEBHOOK_ID_ERRORS,
    idempotent: false,
    docs: 'Re-send a delivery (free)',
  },
  // ---------- Watches (each refresh charged) ----------
  {
    id: 'createWatch',
    method: 'POST',
    path: '/v1/watches',
    area: 'watches',
    tag: 'Watches',
    summary: 'Watch a company or person: refreshed on schedule, `profile.changed` sent on change',
    description:
      'Free to create. Every refresh (scheduled, or POST /v1/watches/{id}/run) is charged like a lookup of `operation` (a REFRESH), refunded on failure, under its own request id. When the content_hash changes, `ProfileChanged` is appended and a `profile.changed` webhook sent to `webhook_endpoint_id`. A workspace whose balance is below the price pauses its watches until it is not.',
    body: WatchCreateRequest,
    answer: WatchResponse,
    status: 201,
    errors: [...WEBHOOK_ID_ERRORS, 'invalid_company_reference', 'invalid_domain', 'invalid_person_reference', 'forbidden'],
    idempotent: false,
    docs: 'Watch a profile: {"operation": "company"|"domain"|"person", "body": {…}, "every": "1d"|"7d"|"30d", "webhook_endpoint_id": …} (each refresh charged)',
  },
  {
    id: 'listWatches',
    method: 'GET',
    path: '/v1/watches',
    area: 'watches',
    tag: 'Watches',
    summary: "The workspace's watches",
    description: 'Free.',
    answer: WatchListResponse,
    status: 200,
    errors: WEBHOOK_ERRORS,
    idempotent: false,
    docs: "The workspace's watches (free)",
  },
  {
    id: 'getWatch',
    method: 'GET',
    path: '/v1/watches/{id}',
    area: 'watches',
    tag: 'Watches',
    summary: 'A watch',
    description: 'Free.',
    params: WatchPathParams,
    answer: WatchResponse,
    status: 200,
    errors: WEBHOOK_ID_ERRORS,
    idempotent: false,
    docs: 'A watch (free)',
  },
  {
    id: 'deleteWatch',
    method: 'DELETE',
    path: '/v1/watches/{id}',
    area: 'watches',
    tag: 'Watches',
    summary: 'Stop watching',
    description: 'Free.',
    params: WatchPathParams,
    answer: WatchDeletedResponse,
    status: 200,
    errors: WEBHOOK_ID_ERRORS,
    idempotent: false,
    docs: 'Delete a watch (free)',
  },
  {
    id: 'runWatch',
    method: 'POST',
    path: '/v1/watches/{id}/run',
    area: 'watches',
    tag: 'Watches',
    summary: 'Refresh a watch now instead of waiting for its schedule',
    description: 'Charged like a lookup of the watched operation that fetches live (a REFRESH), refunded on failure. The next scheduled refresh is one interval from now.',
    params: WatchPathParams,
    answer: WatchRunResponse,
    status: 200,
    errors: [...WATCH_RUN_ERRORS, 'unresolvable_id', 'forbidden'],
    idempotent: false,
    docs: 'Refresh a watch now (charged like its lookup)',
  },
  // ---------- Meta (public) ----------
  {
    id: 'health',
    method: 'GET',
    path: '/v1/health',
    area: 'meta',
    admission: 'public',
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
    admission: 'public',
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
    admission: 'public',
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
    admission: 'public',
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
    admission: 'public',
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
    admission: 'public',
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
    admission: 'public',
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
    admission: 'public',
    tag: 'Meta',
    summary: 'The error reference, one anchor per code',
    answer: html,
    status: 200,
    errors: META_ERRORS,
    idempotent: false,
    pricingListed: false,
  },
  {
    id: 'docsReference',
    method: 'GET',
    path: '/docs/reference',
    area: 'meta',
    admission: 'public',
    tag: 'Meta',
    summary: 'The API reference, rendered in the browser from /v1/openapi.json',
    answer: html,
    status: 200,
    errors: META_ERRORS,
    idempotent: false,
    pricingListed: false,
  },
  {
    id: 'docsAsset',
    method: 'GET',
    path: '/docs/assets/{name}',
    area: 'meta',
    admission: 'public',
    tag: 'Meta',
    summary: "The docs pages' script and style sheet (cached for good at their versioned URL)",
    answer: 'raw',
    status: 200,
    errors: ['route_not_found'],
    idempotent: false,
    pricingListed: false,
  },
  // ---------- Console pages and assets (on the console's bucket; no document) ----------
  consolePage('consoleSignInPage', '/console', 'The sign-in page'),
  consolePage('consoleAcceptPage', '/console/accept', 'The page that accepts an invitation'),
  consolePage('consoleForgotPage', '/console/forgot', 'The page that asks for a password reset link'),
  consolePage('consoleResetPage', '/console/reset', "The page that sets a new password with a reset link's token"),
  consolePage('consoleOverviewPage', '/console/overview', 'The overview page'),
  consolePage('consoleKeysPage', '/console/keys', 'The API keys page'),
  consolePage('consoleUsagePage', '/console/usage', 'The usage page'),
  consolePage('consoleLedgerPage', '/console/ledger', 'The ledger page'),
  consolePage('consoleRequestPage', '/console/request', "The page of one request's whole story"),
  consolePage('consoleStatementPage', '/console/statement', 'The statement page'),
  consolePage('consoleMembersPage', '/console/members', 'The members page'),
  consolePage('consoleAccountPage', '/console/account', 'The account page'),
  {
    id: 'consoleSlash',
    method: 'GET',
    path: '/console/',
    area: 'console',
    tag: 'Console',
    admission: 'public',
    rateLimit: 'console',
    summary: 'Redirects to the sign-in page',
    answer: 'raw',
    status: 302,
    errors: [],
    idempotent: false,
  },
  {
    id: 'consoleAsset',
    method: 'GET',
    path: '/console/assets/{name}',
    area: 'console',
    tag: 'Console',
    admission: 'public',
    rateLimit: 'console',
    summary: "The console's script and style sheet (cached for good at their versioned URL)",
    answer: 'raw',
    status: 200,
    errors: ['route_not_found'],
    idempotent: false,
  },
  // ---------- Console JSON API (session cookie; tag Console of the public document) ----------
  {
    id: 'consoleSession',
    method: 'GET',
    path: '/console/v1/session',
    area: 'console',
    tag: 'Console',
    admission: 'session',
    summary: 'The signed-in member, the workspace and the CSRF token',
    answer: SessionResponse,
    status: 200,
    errors: [],
    idempotent: false,
  },
  {
    id: 'consoleSignIn',
    method: 'POST',
    path: '/console/v1/session',
    area: 'console',
    tag: 'Console',
    admission: 'public',
    rateLimit: 'console',
    sameOrigin: true,
    summary: 'Sign in to a workspace (sets the session cookie); slowed, then locked (429), after repeated failures',
    body: SignInRequest,
    answer: SessionResponse,
    status: 200,
    errors: ['unauthorized'],
    idempotent: false,
  },
  {
    id: 'consoleSignOut',
    method: 'DELETE',
    path: '/console/v1/session',
    area: 'console',
    tag: 'Console',
    admission: 'session',
    summary: 'Sign out: every session of the member ends',
    answer: 'empty',
    answerDescription: 'Done.',
    status: 204,
    errors: [],
    idempotent: false,
  },
  {
    id: 'consoleInvitationPreview',
    method: 'GET',
    path: '/console/v1/invitations/preview',
    area: 'console',
    tag: 'Console',
    admission: 'public',
    rateLimit: 'console',
    summary: 'What an invitation link offers',
    query: InvitationLookupQuery,
    answer: InvitationPreview,
    status: 200,
    errors: ['not_found'],
    idempotent: false,
  },
  {
    id: 'consoleAcceptInvitation',
    method: 'POST',
    path: '/console/v1/invitations/accept',
    area: 'console',
    tag: 'Console',
    admission: 'public',
    rateLimit: 'console',
    sameOrigin: true,
    summary: 'Set a password with a one-time link (signs in)',
    body: AcceptInvitationRequest,
    answer: SessionResponse,
    status: 200,
    errors: ['not_found'],
    idempotent: false,
  },
  {
    id: 'consoleChangePassword',
    method: 'POST',
    path: '/console/v1/password',
    area: 'console',
    tag: 'Console',
    admission: 'session',
    summary: 'Change the password (the current one is throttled per member): every other session ends',
    body: PasswordChangeRequest,
    answer: SessionResponse,
    status: 200,
    errors: [],
    idempotent: false,
  },
  {
    id: 'consoleAskPasswordReset',
    method: 'POST',
    path: '/console/v1/password-reset',
    area: 'console',
    tag: 'Console',
    admission: 'public',
    rateLimit: 'console',
    sameOrigin: true,
    summary:
      'Ask for a password reset link by email (1 hour, works once): the same 202 whether or not the email is a member; at most 3 emails per member and hour, 10 asks per client address and minute',
    body: PasswordResetAskRequest,
    answer: 'empty',
    answerDescription: 'Asked: a member of the workspace with this email gets the link.',
    status: 202,
    errors: [],
    idempotent: false,
  },
  {
    id: 'consoleCompletePasswordReset',
    method: 'POST',
    path: '/console/v1/password-reset/complete',
    area: 'console',
    tag: 'Console',
    admission: 'public',
    rateLimit: 'console',
    sameOrigin: true,
    summary: "Set a new password with a reset link's token: every session of the member ends",
    body: PasswordResetCompleteRequest,
    answer: 'empty',
    answerDescription: 'Done.',
    status: 204,
    errors: ['not_found'],
    idempotent: false,
  },
  {
    id: 'consoleOverview',
    method: 'GET',
    path: '/console/v1/overview',
    area: 'console',
    tag: 'Console',
    admission: 'session',
    summary: 'Balance, credits spent today and this month, 30 days of usage, the last 10 errors',
    answer: OverviewResponse,
    status: 200,
    errors: [],
    idempotent: false,
  },
  {
    id: 'consoleSetAlerts',
    method: 'PATCH',
    path: '/console/v1/alerts',
    area: 'console',
    tag: 'Console',
    admission: 'session',
    summary: "Set or remove the workspace's low-balance alert threshold (owners only)",
    body: ConsoleAlertSettings,
    answer: ConsoleAlertSettings,
    status: 200,
    errors: [],
    idempotent: false,
  },
  {
    id: 'consoleListKeys',
    method: 'GET',
    path: '/console/v1/keys',
    area: 'console',
    tag: 'Console',
    admission: 'session',
    summary: 'Every key of the workspace (never the key itself)',
    answer: ConsoleKeyList,
    status: 200,
    errors: [],
    idempotent: false,
  },
  {
    id: 'consoleCreateKey',
    method: 'POST',
    path: '/console/v1/keys',
    area: 'console',
    tag: 'Console',
    admission: 'session',
    summary: 'Create a key: the full key is in this answer only',
    body: ConsoleKeyCreateRequest,
    answer: ConsoleKeyCreated,
    status: 201,
    errors: [],
    idempotent: false,
  },
  {
    id: 'consoleRenameKey',
    method: 'PATCH',
    path: '/console/v1/keys/{id}',
    area: 'console',
    tag: 'Console',
    admission: 'session',
    summary: 'Rename a key',
    params: KeyPathParams,
    body: ConsoleKeyRenameRequest,
    answer: ConsoleKey,
    status: 200,
    errors: ['not_found'],
    idempotent: false,
  },
  {
    id: 'consoleRevokeKey',
    method: 'POST',
    path: '/console/v1/keys/{id}/revoke',
    area: 'console',
    tag: 'Console',
    admission: 'session',
    summary: 'Revoke a key: its next call gets 401 on every instance',
    params: KeyPathParams,
    answer: ConsoleKeyRevoked,
    status: 200,
    errors: ['not_found'],
    idempotent: false,
  },
  {
    id: 'consoleUsage',
    method: 'GET',
    path: '/console/v1/usage',
    area: 'console',
    tag: 'Console',
    admission: 'session',
    summary: "Usage per day, key and operation (the admin API's rows)",
    query: ConsoleUsageQuery,
    answer: ConsoleUsageResponse,
    status: 200,
    errors: ['not_found'],
    idempotent: false,
  },
  {
    id: 'consoleLedger',
    method: 'GET',
    path: '/console/v1/ledger',
    area: 'console',
    tag: 'Console',
    admission: 'session',
    summary: 'Ledger entries with balance_after and the operation charged, paged, by request id',
    query: ConsoleLedgerQuery,
    answer: ConsoleLedgerResponse,
    status: 200,
    errors: [],
    idempotent: false,
  },
  {
    id: 'consoleRequestStory',
    method: 'GET',
    path: '/console/v1/requests/{id}',
    area: 'console',
    tag: 'Console',
    admission: 'session',
    summary: "One call's whole story: the call, its ledger entries, its refund, the profile's content_hash and the events it appended",
    params: RequestPathParams,
    answer: ConsoleRequestStory,
    status: 200,
    errors: ['not_found'],
    idempotent: false,
  },
  {
    id: 'consoleLedgerCsv',
    method: 'GET',
    path: '/console/v1/ledger.csv',
    area: 'console',
    tag: 'Console',
    admission: 'session',
    summary: 'Ledger entries of a period [from, to) of UTC days as CSV',
    query: ConsoleLedgerCsvQuery,
    answer: 'csv',
    answerDescription: 'CSV with a header line.',
    status: 200,
    errors: [],
    idempotent: false,
  },
  {
    id: 'consoleStatement',
    method: 'GET',
    path: '/console/v1/statement',
    area: 'console',
    tag: 'Console',
    admission: 'session',
    summary:
      "The workspace's statement of a period [from, to) (the admin API's): opening and closing balance, credits granted, charged and refunded by operation; `format=csv`: its ledger entries",
    query: StatementQuery,
    answer: StatementResponse,
    csv: true,
    answerDescription: 'The statement; with `format=csv`, one CSV line per ledger entry of the period.',
    status: 200,
    errors: [],
    idempotent: false,
  },
  {
    id: 'consoleMembers',
    method: 'GET',
    path: '/console/v1/members',
    area: 'console',
    tag: 'Console',
    admission: 'session',
    summary: 'Members and pending invitations',
    answer: MembersResponse,
    status: 200,
    errors: ['forbidden'],
    idempotent: false,
  },
  {
    id: 'consoleChangeRole',
    method: 'PATCH',
    path: '/console/v1/members/{id}',
    area: 'console',
    tag: 'Console',
    admission: 'session',
    summary: "Change a member's role (owners only; one owner always stays)",
    params: MemberPathParams,
    body: MemberPatchRequest,
    answer: 'empty',
    answerDescription: 'Done.',
    status: 204,
    errors: ['not_found'],
    idempotent: false,
  },
  {
    id: 'consoleRemoveMember',
    method: 'DELETE',
    path: '/console/v1/members/{id}',
    area: 'console',
    tag: 'Console',
    admission: 'session',
    summary: 'Remove a member: their sessions end at once (owners only)',
    params: MemberPathParams,
    answer: 'empty',
    answerDescription: 'Done.',
    status: 204,
    errors: ['not_found'],
    idempotent: false,
  },
  {
    id: 'consoleInvite',
    method: 'POST',
    path: '/console/v1/invitations',
    area: 'console',
    tag: 'Console',
    admission: 'session',
    summary: 'Invite someone (owners only): the one-time link is emailed to the invited address',
    body: InvitationCreateRequest,
    answer: InvitationCreatedResponse,
    status: 201,
    errors: [],
    idempotent: false,
  },
  {
    id: 'consoleCancelInvitation',
    method: 'DELETE',
    path: '/console/v1/invitations/{id}',
    area: 'console',
    tag: 'Console',
    admission: 'session',
    summary: 'Cancel a pending invitation (owners only)',
    params: InvitationPathParams,
    answer: 'empty',
    answerDescription: 'Done.',
    status: 204,
    errors: ['not_found'],
    idempotent: false,
  },
  // ---------- Admin API (ADMIN_TOKEN; its own document behind the token) ----------
  {
    id: 'adminCreateWorkspace',
    method: 'POST',
    path: '/admin/v1/workspaces',
    area: 'admin',
    admission: 'admin',
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
    admission: 'admin',
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
    admission: 'admin',
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
    admission: 'admin',
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
    admission: 'admin',
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
    admission: 'admin',
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
    admission: 'admin',
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
    admission: 'admin',
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
    admission: 'admin',
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
    admission: 'admin',
    tag: 'Admin',
    summary: "A workspace's statement of a period [from, to); `format=csv`: its ledger entries",
    params: AdminPathParams,
    query: StatementQuery,
    answer: StatementResponse,
    csv: true,
    status: 200,
    errors: ADMIN_ID_ERRORS,
    idempotent: false,
  },
  {
    id: 'adminLedgerExport',
    method: 'GET',
    path: '/admin/v1/ledger',
    area: 'admin',
    admission: 'admin',
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
    admission: 'admin',
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
    admission: 'admin',
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
    admission: 'admin',
    tag: 'Admin',
    summary: 'Start an audit of the whole log as a job to follow (at most one runs across instances)',
    description:
      '202 with the new job and `Location: /admin/v1/audits/{id}`; while an audit job already runs on any instance, 200 with that one (same `Location`). Jobs live in PostgreSQL; while it is away, 503 `service_unavailable`.',
    answer: AuditJobResponse,
    status: 202,
    otherAnswers: [{ status: 200, description: 'An audit job already runs on some instance: that one, with the same `Location`.' }],
    errors: ADMIN_ERRORS,
    idempotent: false,
  },
  {
    id: 'adminGetAudit',
    method: 'GET',
    path: '/admin/v1/audits/{id}',
    area: 'admin',
    admission: 'admin',
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
    admission: 'admin',
    tag: 'Admin',
    summary: 'Kafka relay lag, when the relay runs in this process',
    answer: z.record(z.string(), z.unknown()),
    status: 200,
    errors: ADMIN_ERRORS,
    idempotent: false,
  },
  {
    id: 'adminInviteMember',
    method: 'POST',
    path: '/admin/v1/workspaces/{id}/invitations',
    area: 'admin',
    tag: 'Admin',
    admission: 'admin',
    summary: 'Invite a member to a workspace (the operator invites its first owner): the one-time console link is emailed to the invited address and in the answer',
    params: AdminPathParams,
    body: InvitationCreateRequest,
    answer: AdminInvitationCreatedResponse,
    status: 201,
    errors: ADMIN_ID_ERRORS,
    idempotent: false,
  },
  {
    id: 'adminOpenApi',
    method: 'GET',
    path: '/admin/v1/openapi.json',
    area: 'admin',
    tag: 'Admin',
    admission: 'admin',
    summary: 'The OpenAPI document of the admin API',
    description: 'The OpenAPI 3.1 description of every admin operation. Behind the admin token like the rest of the admin API.',
    answer: OpenApiDocumentResponse,
    status: 200,
    errors: [],
    idempotent: false,
  },
  {
    id: 'metrics',
    method: 'GET',
    path: '/metrics',
    area: 'admin',
    tag: 'Admin',
    admission: 'admin',
    summary: 'Prometheus metrics (on the main port when METRICS_PORT is unset)',
    answer: 'raw',
    status: 200,
    errors: [],
    idempotent: false,
    internal: true,
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

/** The endpoints of the public API (`/docs`, docs/api.md, the examples): its rows of the public OpenAPI document, the console's aside. */
export function publicJsonEndpoints(): Endpoint[] {
  return documentRows('public').filter((row) => row.area !== 'console');
}

/** The rows an OpenAPI document describes, in the table's order. */
export function documentRows(document: 'public' | 'admin'): Endpoint[] {
  return ENDPOINTS.filter((row: Endpoint) => documentOf(row) === document);
}

/** `METHOD /path` of each endpoint of a free area, as `GET /v1/pricing` lists them. */
export function freeAreaEndpoints(area: 'cache' | 'webhooks' | 'watches' | 'meta'): string[] {
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
