import { z } from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiResponsesObject } from 'zod-openapi';
import { ApiError, ERROR_CATALOGUE, errorBody, escapeHtml, statusCarriesRetryAfter, type ErrorCode } from './errors';
import {
  CacheEntryResponse,
  CacheStatsResponse,
  CompanyCacheRequest,
  CompanyLookupRequest,
  CompanyLookupResponse,
  DomainCacheRequest,
  DomainLookupRequest,
  DomainLookupResponse,
  ErrorEnvelope,
  ErrorsListResponse,
  HealthResponse,
  OpenApiDocumentResponse,
  PersonCacheRequest,
  PersonLookupRequest,
  PersonLookupResponse,
  PricingResponse,
  SearchRequest,
  SearchResponse,
} from './http';
import { IDEMPOTENCY_KEY_MAX_CHARS } from './validation';

/**
 * The OpenAPI 3.1 description of the public API, generated from the zod schemas of
 * `contracts/http.ts` and the error catalogue; no schema here is written by hand.
 */

export const API_VERSION = '1.0.0';

// ---------- headers ----------

const header = (id: string, schema: z.ZodType, description: string) => schema.meta({ description, header: { id } });

const H = {
  requestId: header('X-Request-Id', z.string(), 'Correlation id of this response; equals `meta.request_id`.'),
  rateLimitLimit: header('RateLimit-Limit', z.int(), 'Requests per minute allowed for this API key (the bucket size).'),
  rateLimitRemaining: header('RateLimit-Remaining', z.int(), 'Whole requests left in the bucket after this one.'),
  rateLimitReset: header('RateLimit-Reset', z.int(), 'Seconds until the bucket is full again.'),
  retryAfter: header('Retry-After', z.int(), 'Seconds to wait before retrying; equals `error.retry_after_seconds`.'),
  creditsCharged: header('X-Credits-Charged', z.int(), 'Credits charged for the call (0 when refunded or not billable).'),
  creditsRemaining: header('X-Credits-Remaining', z.int(), 'Workspace balance after the call.'),
  cache: header('X-Cache', z.enum(['HIT', 'MISS', 'REFRESH']), 'Cache outcome; equals `meta.cache.status`.'),
  age: header('Age', z.int(), 'Seconds since the data was fetched; equals `meta.cache.age_seconds`.'),
  replayed: header(
    'Idempotent-Replayed',
    z.literal('true'),
    'Sent as `true` when the response is a stored replay for the same Idempotency-Key.',
  ),
};

const commonHeaders = {
  'X-Request-Id': H.requestId,
  'RateLimit-Limit': H.rateLimitLimit,
  'RateLimit-Remaining': H.rateLimitRemaining,
  'RateLimit-Reset': H.rateLimitReset,
};

const lookupSuccessHeaders = z.object({
  ...commonHeaders,
  'X-Credits-Charged': H.creditsCharged,
  'X-Credits-Remaining': H.creditsRemaining,
  'X-Cache': H.cache,
  Age: H.age,
  'Idempotent-Replayed': H.replayed.optional(),
});

const accountSuccessHeaders = z.object({
  ...commonHeaders,
  'X-Credits-Charged': H.creditsCharged,
  'X-Credits-Remaining': H.creditsRemaining,
});

const metaSuccessHeaders = z.object(commonHeaders);
const errorHeaders = z.object(commonHeaders);
const retryErrorHeaders = z.object({ ...commonHeaders, 'Retry-After': H.retryAfter });
/** A stored 404 may come back as a replay of the same Idempotency-Key. */
const replayableErrorHeaders = z.object({ ...commonHeaders, 'Idempotent-Replayed': H.replayed.optional() });

const IdempotencyKeyHeader = z
  .string()
  .min(1)
  .max(IDEMPOTENCY_KEY_MAX_CHARS)
  .regex(/^[\x20-\x7E]+$/)
  .optional()
  .meta({
    description:
      'Any unique string per logical request (1–255 printable ASCII characters). A retry with the same key within 24 hours replays the stored response without running or charging again.',
    param: { id: 'Idempotency-Key', in: 'header', name: 'Idempotency-Key' },
  });

// ---------- error responses, from the catalogue ----------

const EXAMPLE_REQUEST_ID = 'req_01J9Z8Q4V6Y3M2K7T5R1N0B8CD';

function errorResponses(codes: readonly ErrorCode[], docsUrl: string, replayable: boolean): ZodOpenApiResponsesObject {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_CATALOGUE[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: ZodOpenApiResponsesObject = {};
  for (const [status, statusCodes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const examples = Object.fromEntries(
      statusCodes.map((code) => {
        const noWorkspace = code === 'unauthorized' || code === 'route_not_found';
        const charged = ERROR_CATALOGUE[code].billing === 'not_found_price' ? 1 : 0;
        return [
          code,
          {
            summary: ERROR_CATALOGUE[code].message,
            value: {
              error: errorBody(new ApiError(code), docsUrl),
              meta: { request_id: EXAMPLE_REQUEST_ID, credits_charged: charged, credits_remaining: noWorkspace ? null : 99 },
            },
          },
        ];
      }),
    );
    const isReplayable = replayable && status === 404;
    responses[`${status}` as `4${string}`] = {
      description: `Error: ${statusCodes.map((code) => `\`${code}\``).join(', ')}.`,
      headers: statusCarriesRetryAfter(status) ? retryErrorHeaders : isReplayable ? replayableErrorHeaders : errorHeaders,
      content: { 'application/json': { schema: ErrorEnvelope, examples } },
    };
  }
  return responses;
}

const LOOKUP_ERROR_CODES_COMMON: ErrorCode[] = [
  'invalid_request',
  'unauthorized',
  'insufficient_credits',
  'not_found',
  'idempotency_key_in_use',
  'idempotency_key_reused',
  'rate_limited',
  'concurrency_limited',
  'internal_error',
  'upstream_error',
  'parse_error',
  'blocked',
  'source_rate_limited',
  'no_capacity',
  'timeout',
];

/** Search answers like a lookup (Idempotency-Key included) but has no not-found. */
const SEARCH_ERROR_CODES: ErrorCode[] = LOOKUP_ERROR_CODES_COMMON.filter((code) => code !== 'not_found');

const CACHE_ERROR_CODES: ErrorCode[] = ['invalid_request', 'unauthorized', 'rate_limited', 'internal_error'];
const META_ERROR_CODES: ErrorCode[] = ['rate_limited', 'internal_error'];

// ---------- operations ----------

interface LookupSpec {
  operationId: string;
  summary: string;
  description: string;
  request: z.ZodType;
  response: z.ZodType;
  extraCodes: ErrorCode[];
}

function jsonBody(schema: z.ZodType) {
  return { required: true, content: { 'application/json': { schema } } };
}

function lookupOperation(spec: LookupSpec, docsUrl: string): ZodOpenApiOperationObject {
  return {
    operationId: spec.operationId,
    tags: ['Lookups'],
    summary: spec.summary,
    description: spec.description,
    parameters: [IdempotencyKeyHeader],
    requestBody: jsonBody(spec.request),
    responses: {
      '200': {
        description: 'The profile, from the cache or fetched live.',
        headers: lookupSuccessHeaders,
        content: { 'application/json': { schema: spec.response } },
      },
      ...errorResponses([...LOOKUP_ERROR_CODES_COMMON, ...spec.extraCodes], docsUrl, true),
    },
  };
}

function cacheOperation(
  operationId: string,
  summary: string,
  request: z.ZodType,
  referenceCode: ErrorCode,
  docsUrl: string,
): ZodOpenApiOperationObject {
  return {
    operationId,
    tags: ['Cache'],
    summary,
    description: 'Free of charge. Says what the cache holds for the reference; never returns the profile itself.',
    requestBody: jsonBody(request),
    responses: {
      '200': {
        description: 'What the cache holds.',
        headers: accountSuccessHeaders,
        content: { 'application/json': { schema: CacheEntryResponse } },
      },
      ...errorResponses([...CACHE_ERROR_CODES, referenceCode], docsUrl, false),
    },
  };
}

function metaOperation(
  operationId: string,
  summary: string,
  schema: z.ZodType,
  docsUrl: string,
  description?: string,
): ZodOpenApiOperationObject {
  return {
    operationId,
    tags: ['Meta'],
    summary,
    ...(description === undefined ? {} : { description }),
    security: [],
    responses: {
      '200': { description: summary, headers: metaSuccessHeaders, content: { 'application/json': { schema } } },
      ...errorResponses(META_ERROR_CODES, docsUrl, false),
    },
  };
}

export interface OpenApiOptions {
  /** Base address of the API, listed under `servers`. */
  serverUrl?: string;
  /** The `{docs_url}` of `error.doc_url`; defaults to `{serverUrl}/docs`. */
  docsUrl?: string;
}

export function buildOpenApiDocument(opts: OpenApiOptions = {}): Record<string, unknown> {
  const serverUrl = opts.serverUrl?.replace(/\/+$/, '');
  const docsUrl = opts.docsUrl ?? `${serverUrl ?? ''}/docs`;

  const document = createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Company and Person Lookup API',
      version: API_VERSION,
      description: [
        'Company profiles (by company reference or website domain) and person mini profiles, served from a cache when fresh enough (`max_age`) and fetched live otherwise.',
        'Every lookup draws credits from the workspace balance (see GET /v1/pricing); failures not caused by the input are refunded automatically.',
        'Any method and path that is not an endpoint answers 404 `route_not_found`, never charged.',
        `Error codes: ${docsUrl}/errors.`,
      ].join('\n\n'),
    },
    ...(serverUrl === undefined ? {} : { servers: [{ url: serverUrl }] }),
    tags: [
      { name: 'Lookups', description: 'Company and person lookups (charged).' },
      { name: 'Search', description: 'Web search results as JSON (charged).' },
      { name: 'Cache', description: 'What the cache holds (free).' },
      { name: 'Meta', description: 'Public, unauthenticated endpoints.' },
    ],
    security: [{ bearerAuth: [] }, { apiKeyHeader: [] }],
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: '`Authorization: Bearer lk_live_<32 characters>`',
        },
        apiKeyHeader: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Api-Key',
          description: '`X-Api-Key: lk_live_<32 characters>`',
        },
      },
    },
    paths: {
      '/v1/company': {
        post: lookupOperation(
          {
            operationId: 'lookupCompany',
            summary: 'Look up a company by any company reference',
            description:
              'Accepts a company page URL in any variant or case, a slug, an old slug, a numeric id or a URN. A definitive not-found costs 1 credit (free from the cache).',
            request: CompanyLookupRequest,
            response: CompanyLookupResponse,
            extraCodes: ['invalid_company_reference', 'unresolvable_id'],
          },
          docsUrl,
        ),
      },
      '/v1/domain': {
        post: lookupOperation(
          {
            operationId: 'lookupDomain',
            summary: 'Look up a company by website domain',
            description:
              'Any page or subdomain of a site is the same lookup (its registrable domain). `meta.resolved` says which domain was resolved and whether the company website confirms it. A definitive not-found costs 4 credits (free from the cache).',
            request: DomainLookupRequest,
            response: DomainLookupResponse,
            extraCodes: ['invalid_domain'],
          },
          docsUrl,
        ),
      },
      '/v1/person': {
        post: lookupOperation(
          {
            operationId: 'lookupPerson',
            summary: 'Look up a person by profile URL or name',
            description:
              'A profile URL (`/in/<id>`) or the person\'s name. Member ids (prefix `ACoAA`) are rejected. `meta.content_hash` covers `data`: an unchanged profile keeps its hash.',
            request: PersonLookupRequest,
            response: PersonLookupResponse,
            extraCodes: ['invalid_person_reference'],
          },
          docsUrl,
        ),
      },
      '/v1/search': {
        post: {
          operationId: 'search',
          tags: ['Search'],
          summary: 'Web search results as JSON',
          parameters: [IdempotencyKeyHeader],
          requestBody: jsonBody(SearchRequest),
          responses: {
            '200': {
              description: 'The search results.',
              headers: lookupSuccessHeaders,
              content: { 'application/json': { schema: SearchResponse } },
            },
            ...errorResponses(SEARCH_ERROR_CODES, docsUrl, true),
          },
        },
      },
      '/v1/cache/company': {
        post: cacheOperation('cacheCompany', 'What the cache holds for a company reference', CompanyCacheRequest, 'invalid_company_reference', docsUrl),
      },
      '/v1/cache/domain': {
        post: cacheOperation('cacheDomain', 'What the cache holds for a website domain', DomainCacheRequest, 'invalid_domain', docsUrl),
      },
      '/v1/cache/person': {
        post: cacheOperation('cachePerson', 'What the cache holds for a person reference', PersonCacheRequest, 'invalid_person_reference', docsUrl),
      },
      '/v1/cache/stats': {
        get: {
          operationId: 'cacheStats',
          tags: ['Cache'],
          summary: 'Cache entry counts',
          description: 'Free of charge.',
          responses: {
            '200': {
              description: 'Entry counts.',
              headers: accountSuccessHeaders,
              content: { 'application/json': { schema: CacheStatsResponse } },
            },
            ...errorResponses(['unauthorized', 'rate_limited', 'internal_error'], docsUrl, false),
          },
        },
      },
      '/v1/health': { get: metaOperation('health', 'Service health', HealthResponse, docsUrl) },
      '/v1/pricing': {
        get: metaOperation('pricing', 'Prices per operation, in credits', PricingResponse, docsUrl),
      },
      '/v1/openapi.json': {
        get: metaOperation('openapi', 'This OpenAPI document', OpenApiDocumentResponse, docsUrl),
      },
      '/v1/errors': {
        get: metaOperation(
          'errors',
          'The error catalogue',
          ErrorsListResponse,
          docsUrl,
          'Every error code with its HTTP status, type, retry flag and billing rule.',
        ),
      },
    },
  });
  return document as unknown as Record<string, unknown>;
}

/** The human documentation index served at `/docs`. */
export function renderDocsIndexHtml(): string {
  const row = (method: string, path: string, text: string) =>
    `<tr><td><code>${method}</code></td><td><code>${escapeHtml(path)}</code></td><td>${escapeHtml(text)}</td></tr>`;
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Company and Person Lookup API</title></head>
<body>
<h1>Company and Person Lookup API <small>v${API_VERSION}</small></h1>
<p>Company profiles by company reference or website domain, and a person's public mini profile by profile URL or name.
Lookups are served from the cache when a copy is fresh enough (<code>max_age</code>, seconds, default 2592000) and fetched live otherwise.</p>

<h2 id="authentication">Authentication</h2>
<p>Send your API key as <code>Authorization: Bearer lk_live_…</code> or as <code>X-Api-Key: lk_live_…</code>.
Keys are for server-side use only: anyone holding one can spend the workspace's credits. The Meta endpoints need no key.</p>

<h2 id="endpoints">Endpoints</h2>
<table>
<thead><tr><th>Method</th><th>Path</th><th>Purpose</th></tr></thead>
<tbody>
${row('POST', '/v1/company', 'Company by URL, slug, old slug, numeric id or URN: {"url": …, "max_age"?: …}')}
${row('POST', '/v1/domain', 'Company by website domain: {"domain": …, "max_age"?: …}')}
${row('POST', '/v1/person', 'Person by profile URL or name: {"url": …, "max_age"?: …}')}
${row('POST', '/v1/search', 'Web search results: {"query": …, "limit"?: 1–50, "max_age"?: …}')}
${row('POST', '/v1/cache/company', 'What the cache holds for a company (free)')}
${row('POST', '/v1/cache/domain', 'What the cache holds for a domain (free)')}
${row('POST', '/v1/cache/person', 'What the cache holds for a person (free)')}
${row('GET', '/v1/cache/stats', 'Cache entry counts (free)')}
${row('GET', '/v1/health', 'Service health (public)')}
${row('GET', '/v1/pricing', 'Prices per operation (public)')}
${row('GET', '/v1/openapi.json', 'OpenAPI 3.1 description (public)')}
${row('GET', '/v1/errors', 'Error catalogue as JSON (public)')}
</tbody>
</table>
<p>The three lookups accept an <code>Idempotency-Key</code> header (1–255 printable ASCII characters):
a retry with the same key within 24 hours replays the stored response with <code>Idempotent-Replayed: true</code> and is not charged again.</p>

<h2 id="pricing">Pricing</h2>
<p>Prices in credits are listed at <a href="/v1/pricing">/v1/pricing</a>. A definitive not-found is charged at the not-found price,
free when answered from the cache; failures on our side are refunded automatically.</p>

<h2 id="errors">Errors</h2>
<p>Every error has the envelope <code>{"error": {type, code, message, retryable, doc_url, …}, "meta": {…}}</code>. Build on <code>error.code</code>.
See <a href="/docs/errors">the error reference</a> or <a href="/v1/errors">/v1/errors</a>.</p>

<h2 id="reference">Reference</h2>
<p>The machine-readable description is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</p>
</body>
</html>
`;
}
