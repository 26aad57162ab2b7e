import { z } from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiResponsesObject } from 'zod-openapi';
import { ApiError, DOCS_NAV_HTML, docsHeadHtml, ERROR_CATALOGUE, errorBody, errorDocUrl, escapeHtml, inlineCodeHtml, statusCarriesRetryAfter, type ErrorCode } from './errors';
import { documentRows, errorsOf, publicJsonEndpoints, rateLimitPolicy, type Admission, type Area, type Endpoint, type EndpointId, type RateLimitPolicy } from './endpoints';
import { operationExamples, type OperationExample } from './examples';
import { BATCH_MAX_ITEMS, CACHE_STATUSES, ErrorEnvelope } from './http';
import { priceSentence } from './prices';
import { IDEMPOTENCY_KEY_MAX_CHARS } from './validation';
import { CONSOLE_SECURITY_SCHEME, CONSOLE_TAG, CSRF_HEADER, SESSION_COOKIE } from './console';

/**
 * The OpenAPI 3.1 descriptions of the public API (the console's calls included, tag `Console`)
 * and of the admin API, generated from the rows of the endpoint table (endpoints.ts), their zod
 * schemas and the error catalogue; no schema here is written by hand.
 */

export const API_VERSION = '1.0.0';

// ---------- headers ----------

const header = (id: string, schema: z.ZodType, description: string) => schema.meta({ description, header: { id } });

const count = () => z.int().min(0);

/** The draft whose fields RateLimit-Policy and RateLimit follow (docs/api.md, Limits). */
const RATE_LIMIT_DRAFT = 'draft-ietf-httpapi-ratelimit-headers-10';
const RATE_LIMIT_POLICY_FIELD = /^"(key|ip|console)";q=\d+;w=60$/;
const RATE_LIMIT_FIELD = /^"(key|ip|console)";r=\d+;t=\d+$/;

const H = {
  requestId: header('X-Request-Id', z.string(), 'Correlation id of this response; equals `meta.request_id`.'),
  rateLimitLimit: header('RateLimit-Limit', count(), 'Requests per minute allowed for this API key (the bucket size); 120 per client address without a key.'),
  rateLimitRemaining: header('RateLimit-Remaining', count(), 'Whole requests left in the bucket after this one.'),
  rateLimitReset: header('RateLimit-Reset', count(), 'Seconds until the bucket is full again.'),
  rateLimitPolicy: header(
    'RateLimit-Policy',
    z.string().regex(RATE_LIMIT_POLICY_FIELD),
    `The same bucket as a structured field (${RATE_LIMIT_DRAFT}): \`"key";q=600;w=60\` — the bucket (\`key\`, \`ip\` without a valid key, \`console\`), its size \`q\` and its window \`w\` in seconds.`,
  ),
  rateLimit: header(
    'RateLimit',
    z.string().regex(RATE_LIMIT_FIELD),
    `The same bucket now, as a structured field (${RATE_LIMIT_DRAFT}): \`"key";r=599;t=1\` — requests left \`r\` (\`RateLimit-Remaining\`) and seconds \`t\` (\`RateLimit-Reset\`; with none left, until the next request goes through: on a refusal, \`Retry-After\`).`,
  ),
  retryAfter: header('Retry-After', z.int().min(1), 'Seconds to wait before retrying; equals `error.retry_after_seconds`.'),
  creditsCharged: header('X-Credits-Charged', count(), 'Credits charged for the call; equals `meta.credits_charged` (0 when refunded or not billable).'),
  creditsRemaining: header('X-Credits-Remaining', count(), 'Workspace balance after the call; equals `meta.credits_remaining`.'),
  cache: header('X-Cache', z.enum(CACHE_STATUSES), 'Cache outcome; equals `meta.cache.status`. `STALE` only with `on_error: "stale"`.'),
  age: header('Age', count(), 'Seconds since the data was fetched; equals `meta.cache.age_seconds`.'),
  replayed: header(
    'Idempotent-Replayed',
    z.literal('true'),
    'Sent as `true` when the response is a stored replay for the same Idempotency-Key.',
  ),
};

const rateLimitHeaders = {
  'RateLimit-Limit': H.rateLimitLimit,
  'RateLimit-Remaining': H.rateLimitRemaining,
  'RateLimit-Reset': H.rateLimitReset,
  'RateLimit-Policy': H.rateLimitPolicy,
  RateLimit: H.rateLimit,
};

/** The headers of a success answer beyond X-Request-Id and the RateLimit ones, by area. */
const SUCCESS_HEADERS: Record<Area, z.ZodRawShape> = {
  lookup: {
    'X-Credits-Charged': H.creditsCharged,
    'X-Credits-Remaining': H.creditsRemaining,
    'X-Cache': H.cache,
    Age: H.age,
    'Idempotent-Replayed': H.replayed.optional(),
  },
  cache: { 'X-Credits-Charged': H.creditsCharged, 'X-Credits-Remaining': H.creditsRemaining },
  webhooks: {},
  watches: {},
  meta: {},
  console: {},
  admin: {},
};

/** A batch's credit headers are its items' sums; no one cache outcome describes it. */
const BATCH_SUCCESS_HEADERS: z.ZodRawShape = {
  'X-Credits-Charged': count().meta({ description: "Credits charged for the whole batch: the sum of its items' `credits_charged`; equals `meta.credits_charged`." }),
  'X-Credits-Remaining': H.creditsRemaining.optional(),
  'Idempotent-Replayed': H.replayed.optional(),
};

/** Errors carry the credit headers whenever a workspace is known (every answer to a valid key). */
const errorCreditHeaders = {
  'X-Credits-Charged': H.creditsCharged.optional(),
  'X-Credits-Remaining': H.creditsRemaining.optional(),
};


/**
 * Whether an answer carries the RateLimit headers, as admission sends them: a bucket read or
 * refused because unreadable (Redis out) sets them before anything else can fail; but a key is
 * checked first, so a failure of ours there (500, or 503 with the database away) goes without.
 * A probe answered without its unreadable bucket has none, and the readiness probe never has.
 */
function rateLimitHeadersOf(policy: RateLimitPolicy, status: number): z.ZodRawShape {
  if (policy === 'none') return {};
  const required = policy === 'console' || (policy === 'bucket' && status !== 500 && status !== 503);
  return required ? rateLimitHeaders : Object.fromEntries(Object.entries(rateLimitHeaders).map(([name, schema]) => [name, schema.optional()]));
}

/** The headers of an answer of a route on `policy`: X-Request-Id, the RateLimit ones, then `more`. */
function answerHeaders(policy: RateLimitPolicy, status: number, more: z.ZodRawShape = {}): z.ZodObject {
  return z.object({ 'X-Request-Id': H.requestId, ...rateLimitHeadersOf(policy, status), ...more });
}

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

interface ErrorAnswers {
  /** Idempotent: a stored 404 may come back as a replay of the same Idempotency-Key. */
  replayable: boolean;
  policy: RateLimitPolicy;
}

function errorResponses(codes: readonly ErrorCode[], docsUrl: string, { replayable, policy }: ErrorAnswers): ZodOpenApiResponsesObject {
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
            description: `What to do: ${ERROR_CATALOGUE[code].action} ([${code}](${errorDocUrl(docsUrl, code)}))`,
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
      headers: answerHeaders(policy, status, {
        ...errorCreditHeaders,
        ...(statusCarriesRetryAfter(status) ? { 'Retry-After': H.retryAfter } : {}),
        ...(isReplayable ? { 'Idempotent-Replayed': H.replayed.optional() } : {}),
      }),
      content: { 'application/json': { schema: ErrorEnvelope, examples } },
    };
  }
  return responses;
}

// ---------- operations, from the route table ----------

/**
 * The row's description; a priced row's prices stated from the price table, never restated by
 * hand; a console call says what its admission asks.
 */
function descriptionOf(row: Endpoint): string | undefined {
  const price = row.priced === undefined ? undefined : priceSentence(row.priced);
  const console = row.area !== 'console' ? undefined : `${row.summary}. ${row.admission === 'session' ? `Needs the console session cookie; a POST, PATCH or DELETE also needs \`${CSRF_HEADER}\`.` : 'Open: no session needed.'}`;
  return [row.description, price, console].filter((part) => part !== undefined).join(' ') || undefined;
}

/** How the row's admission is declared: the document's default (an API key), none, or its own scheme. */
const SECURITY: Record<Admission, { security?: Record<string, string[]>[] }> = {
  apiKey: {},
  public: { security: [] },
  session: { security: [{ consoleSession: [] }] },
  admin: {},
};

/** The content of the success answer, by the row's kind of answer. */
function successContent(row: Endpoint, example: OperationExample | undefined): Record<string, { schema: z.ZodType; example?: unknown }> | undefined {
  if (row.answer === 'empty') return undefined;
  const csv = { 'text/csv': { schema: z.string(), ...(example?.csv === undefined ? {} : { example: example.csv }) } };
  if (row.answer === 'csv') return csv;
  if (row.answer === 'html' || row.answer === 'raw') throw new Error(`${row.id} is not in an OpenAPI document`);
  return {
    'application/json': { schema: row.answer, ...(example?.answer === undefined ? {} : { example: example.answer }) },
    ...(row.csv ? csv : {}),
  };
}

/**
 * The credential a curl example carries, by admission: the console's session is its cookie (from
 * sign-in's `Set-Cookie`) and, on a change, the CSRF token of `GET /console/v1/session`.
 */
function curlAuth(row: Endpoint): string[] {
  switch (row.admission) {
    case 'apiKey':
      return ['-H "Authorization: Bearer $API_KEY"'];
    case 'public':
      return [];
    case 'admin':
      return ['-H "Authorization: Bearer $ADMIN_TOKEN"'];
    case 'session':
      return [`-b "${SESSION_COOKIE}=$SESSION"`, ...(row.method === 'GET' ? [] : [`-H "${CSRF_HEADER}: $CSRF_TOKEN"`])];
  }
}

/** The operation's address with the example's path values and query string. */
function exampleUrl(row: Endpoint, example: OperationExample | undefined): string {
  const path = row.path.replace(/\{(\w+)\}/g, (whole, name: string) => (example?.params?.[name] === undefined ? whole : encodeURIComponent(example.params[name])));
  // Colons of instants stay as they are: allowed in a query, easier to read.
  const query = example?.query === undefined ? '' : `?${new URLSearchParams(example.query).toString().replaceAll('%3A', ':')}`;
  return `$API_URL${path}${query}`;
}

/** A curl call of the operation (Redoc's request sample), with its example's path, query and body. */
function curlSample(row: Endpoint, example: OperationExample | undefined): { 'x-codeSamples': { lang: string; label: string; source: string }[] } {
  const lines = [`curl -X ${row.method} "${exampleUrl(row, example)}"`, ...curlAuth(row)];
  if (row.body !== undefined) {
    lines.push('-H "Content-Type: application/json"');
    if (example?.request !== undefined) lines.push(`-d '${JSON.stringify(example.request).replaceAll("'", "'\\''")}'`);
  }
  return { 'x-codeSamples': [{ lang: 'Shell', label: 'curl', source: lines.join(' \\\n  ') }] };
}

function operation(row: Endpoint, docsUrl: string): ZodOpenApiOperationObject {
  const example = operationExamples(docsUrl)[row.id as EndpointId];
  const content = successContent(row, example);
  const requestParams = {
    ...(row.query === undefined ? {} : { query: row.query as z.ZodObject }),
    ...(row.params === undefined ? {} : { path: row.params as z.ZodObject }),
  };
  return {
    operationId: row.id,
    tags: [row.tag],
    summary: row.summary,
    ...(descriptionOf(row) === undefined ? {} : { description: descriptionOf(row) }),
    ...SECURITY[row.admission],
    ...(row.idempotent ? { parameters: [IdempotencyKeyHeader] } : {}),
    ...(Object.keys(requestParams).length === 0 ? {} : { requestParams }),
    ...(row.body === undefined
      ? {}
      : { requestBody: { required: true, content: { 'application/json': { schema: row.body, ...(example?.request === undefined ? {} : { example: example.request }) } } } }),
    ...curlSample(row, example),
    responses: {
      [String(row.status)]: {
        description: row.answerDescription ?? row.summary,
        headers: answerHeaders(rateLimitPolicy(row), row.status, row.batch ? BATCH_SUCCESS_HEADERS : SUCCESS_HEADERS[row.area]),
        ...(content === undefined ? {} : { content }),
      },
      ...otherAnswers(row, example),
      // Its handler's errors and those its admission adds (admission, rate-limit policy).
      ...errorResponses(errorsOf(row), docsUrl, { replayable: row.idempotent, policy: rateLimitPolicy(row) }),
    },
  };
}

/** The row's other statuses answered with its success body (the probes' 503), with their example. */
function otherAnswers(row: Endpoint, example: OperationExample | undefined): ZodOpenApiResponsesObject {
  const responses: ZodOpenApiResponsesObject = {};
  for (const other of row.otherAnswers ?? []) {
    if (errorsOf(row).some((code) => ERROR_CATALOGUE[code].status === other.status)) throw new Error(`${row.id}: ${other.status} is both an error and another answer`);
    const value = example?.otherAnswers?.[other.status];
    responses[`${other.status}` as `${2 | 5}${string}`] = {
      description: other.description,
      headers: answerHeaders(rateLimitPolicy(row), other.status),
      content: { 'application/json': { schema: row.answer as z.ZodType, ...(value === undefined ? {} : { example: value }) } },
    };
  }
  return responses;
}

function paths(document: 'public' | 'admin', docsUrl: string): Record<string, Record<string, ZodOpenApiOperationObject>> {
  const byPath: Record<string, Record<string, ZodOpenApiOperationObject>> = {};
  for (const row of documentRows(document)) {
    byPath[row.path] = { ...byPath[row.path], [row.method.toLowerCase()]: operation(row, docsUrl) };
  }
  return byPath;
}

export interface OpenApiOptions {
  /** Base address of the API, listed under `servers`. */
  serverUrl?: string;
  /** The `{docs_url}` of `error.doc_url`; defaults to `{serverUrl}/docs`. */
  docsUrl?: string;
}

/** The base addresses of a document, and its `info` but for the description. */
function documentBase(opts: OpenApiOptions, title: string) {
  const serverUrl = opts.serverUrl?.replace(/\/+$/, '');
  return {
    docsUrl: opts.docsUrl ?? `${serverUrl ?? ''}/docs`,
    servers: serverUrl === undefined ? {} : { servers: [{ url: serverUrl }] },
    // The service is not open source (package.json: private); callers use it under their agreement.
    info: { title, version: API_VERSION, license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' } },
  };
}

export function buildOpenApiDocument(opts: OpenApiOptions = {}): Record<string, unknown> {
  const { docsUrl, servers, info } = documentBase(opts, 'Company and Person Lookup API');
  const document = createDocument({
    openapi: '3.1.0',
    info: {
      ...info,
      description: [
        'Company profiles (by company reference or website domain) and person mini profiles, served from a cache when fresh enough (`max_age`) and fetched live otherwise.',
        'Every lookup draws credits from the workspace balance (see GET /v1/pricing); failures not caused by the input are refunded automatically.',
        'Any method and path that is not an endpoint answers 404 `route_not_found`, never charged.',
        `Error codes: ${docsUrl}/errors.`,
      ].join('\n\n'),
    },
    ...servers,
    tags: [
      { name: 'Lookups', description: 'Company and person lookups (charged).' },
      { name: 'Search', description: 'Web search results as JSON (charged).' },
      { name: 'Cache', description: 'What the cache holds (free).' },
      { name: 'Webhooks', description: 'Webhook endpoints, signed by the Standard Webhooks specification, their deliveries and re-sends (free).' },
      { name: 'Watches', description: 'Profiles refreshed on schedule, `profile.changed` webhooks on change (each refresh charged).' },
      { name: 'Meta', description: 'Public, unauthenticated endpoints.' },
      CONSOLE_TAG,
    ],
    security: [{ bearerAuth: [] }, { apiKeyHeader: [] }],
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: '`Authorization: Bearer lk_live_<32 characters>`, or a test key `lk_test_<32 characters>` (sandbox answers, never charged)',
        },
        apiKeyHeader: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Api-Key',
          description: '`X-Api-Key: lk_live_<32 characters>`, or a test key `lk_test_<32 characters>` (sandbox answers, never charged)',
        },
        consoleSession: CONSOLE_SECURITY_SCHEME,
      },
    },
    paths: paths('public', docsUrl),
  });
  return document as unknown as Record<string, unknown>;
}

/** The admin API's own document, served behind the admin token (`GET /admin/v1/openapi.json`). */
export function buildAdminOpenApiDocument(opts: OpenApiOptions = {}): Record<string, unknown> {
  const { docsUrl, servers, info } = documentBase(opts, 'Company and Person Lookup API: admin API');
  const document = createDocument({
    openapi: '3.1.0',
    info: {
      ...info,
      description: [
        "The operator's API: workspaces, credits, keys, usage, ledger, statements, exports, audits, the console's first invitation.",
        'Every call needs `Authorization: Bearer <ADMIN_TOKEN>`; without it any path under /admin answers 401, known or not. No rate-limit bucket; answers are never cached.',
        `Error codes: ${docsUrl}/errors.`,
      ].join('\n\n'),
    },
    ...servers,
    tags: [{ name: 'Admin', description: 'Operators: bearer ADMIN_TOKEN.' }],
    security: [{ adminToken: [] }],
    components: {
      securitySchemes: { adminToken: { type: 'http', scheme: 'bearer', description: '`Authorization: Bearer <ADMIN_TOKEN>`' } },
    },
    paths: paths('admin', docsUrl),
  });
  return document as unknown as Record<string, unknown>;
}

const BATCH_EXAMPLE = `POST /v1/batch
{"items": [
  {"operation": "company", "body": {"url": "acme-robotics"}, "id": "row-1"},
  {"operation": "search", "body": {"query": "acme robotics", "limit": 2}, "id": "row-2"}
]}

200
{"data": [
  {"id": "row-1", "operation": "company", "status": 200, "request_id": "req_…", "data": {…}, "cache": {"status": "HIT", …}, "content_hash": "sha256:…", "credits_charged": 1},
  {"id": "row-2", "operation": "search", "status": 504, "request_id": "req_…", "error": {"code": "timeout", …}, "credits_charged": 0}
 ],
 "meta": {"request_id": "req_…", "credits_charged": 1, "credits_remaining": 98}}`;

/** What `/docs` links and lists that lives outside the contracts: its style sheet, the sandbox's failure triggers. */
export type DocsPageOptions = {
  stylesheetHref?: string;
  sandboxTriggers?: readonly { trigger: string; code: ErrorCode | null }[];
};

/** The table of sandbox triggers: what a lookup or search answers for each (docs/api.md, the sandbox). */
function sandboxTriggersHtml(triggers: DocsPageOptions['sandboxTriggers']): string {
  if (!triggers?.length) return '';
  const rows = triggers.map(({ trigger, code }) => {
    const answer = code === null
      ? '200, found, after a delay of a few seconds'
      : `${ERROR_CATALOGUE[code].status} <a href="/docs/errors#${code}"><code>${code}</code></a>, refunded`;
    return `<tr><td><code>${escapeHtml(trigger)}</code></td><td>${answer}</td></tr>`;
  });
  return `
<h2 id="sandbox">Sandbox failure triggers</h2>
<p>Against the sandbox source, use a trigger as a company slug, a domain's first label (<code>sandbox-timeout.com</code>),
a person id, a person name or a search query to see how the API answers an upstream failure:</p>
<table>
<thead><tr><th>Trigger</th><th>The API answers</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>
`;
}

/** The human documentation index served at `/docs`. */
export function renderDocsIndexHtml(options: DocsPageOptions = {}): string {
  const idempotent = publicJsonEndpoints().filter((row) => row.idempotent).map((row) => `<code>${row.method} ${row.path}</code>`);
  const idempotentList = `${idempotent.slice(0, -1).join(', ')} and ${idempotent.at(-1)}`;
  const row = (method: string, path: string, text: string) =>
    `<tr><td><code>${method}</code></td><td><code>${escapeHtml(path)}</code></td><td>${escapeHtml(text)}</td></tr>`;
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8">${docsHeadHtml(options.stylesheetHref)}<title>Company and Person Lookup API</title></head>
<body>
${DOCS_NAV_HTML}
<h1>Company and Person Lookup API <small>v${API_VERSION}</small></h1>
<p>Company profiles by company reference or website domain, and a person's public mini profile by profile URL or name.
Lookups are served from the cache when a copy is fresh enough (<code>max_age</code>, seconds, default 2592000) and fetched live otherwise.</p>

<h2 id="authentication">Authentication</h2>
<p>Send your API key as <code>Authorization: Bearer lk_live_…</code> or as <code>X-Api-Key: lk_live_…</code>.
Keys are for server-side use only: anyone holding one can spend the workspace's credits. The Meta endpoints need no key.</p>

<h2 id="test-keys">Test keys</h2>
<p>A test key (<code>lk_test_…</code>, created like a live key with <code>"mode": "test"</code>) answers every endpoint the way a live key does,
from the built-in sandbox network only, never from or into the cache, and never charged: <code>X-Credits-Charged: 0</code>, even on a workspace with 0 credits.
Its own rate limit, its own <code>Idempotency-Key</code> scope, and the sandbox's failure triggers let a client test errors, refunds, idempotency and limits without spending.
For example, <code>POST /v1/company</code> with <code>{"url": "sandbox-upstream-error"}</code> answers 502 <code>upstream_error</code> with <code>credits_charged: 0</code>.
The usage, ledger and statement reads leave test calls out unless asked (<code>?mode=test</code> or <code>?mode=all</code>).</p>

<h2 id="endpoints">Endpoints</h2>
<table>
<thead><tr><th>Method</th><th>Path</th><th>Purpose</th></tr></thead>
<tbody>
${publicJsonEndpoints()
  .flatMap((endpoint) => (endpoint.docs === undefined ? [] : [row(endpoint.method, endpoint.path, endpoint.docs)]))
  .join('\n')}
</tbody>
</table>
<p>${idempotentList} accept an <code>Idempotency-Key</code> header (1–255 printable ASCII characters, scoped to the workspace):
a retry with the same key within 24 hours replays the stored 200 or 404 with <code>Idempotent-Replayed: true</code> and is not charged again;
the same key with another endpoint or body is 422 <code>idempotency_key_reused</code>, and while the first call runs, 409 <code>idempotency_key_in_use</code>.</p>

<h2 id="batch">Batch</h2>
<p><code>POST /v1/batch</code> makes up to ${BATCH_MAX_ITEMS} lookups and searches in one call. Each item is its single call
(<code>company</code>, <code>domain</code>, <code>person</code> or <code>search</code> with that call's <code>body</code>): charged, refunded, cached and logged
as that call would be, under a request id of its own. The answer is 200 with one result per item, in order: its <code>status</code>,
<code>request_id</code>, <code>credits_charged</code>, and <code>data</code> with <code>cache</code> and <code>content_hash</code>, or <code>error</code>. One item's failure never fails the others.</p>
<pre>${escapeHtml(BATCH_EXAMPLE)}</pre>
<ul>
<li>Price: the sum of its items' prices. Items are charged in order; one the balance no longer covers is 402 <code>insufficient_credits</code>, uncharged.</li>
<li>Rate limit: one token per item; items past the bucket are 429 <code>rate_limited</code>, uncharged. Concurrency: one slot per item fetched live;
a batch runs its live fetches through the slots it holds, and an item is 429 <code>concurrency_limited</code> only when other calls hold every slot.</li>
<li>An item whose body its call would refuse is that item's 400; a wrong envelope (no <code>items</code> array, 0 or more than ${BATCH_MAX_ITEMS} items,
an unknown <code>operation</code>) is a 400 for the whole batch. <code>Idempotency-Key</code> replays the whole answer.</li>
</ul>

<h2 id="headers">Response headers</h2>
<table>
<thead><tr><th>Header</th><th>Meaning</th></tr></thead>
<tbody>
${Object.values(H)
  .map((schema) => {
    const meta = schema.meta() as { description: string; header: { id: string } };
    return `<tr><td><code>${meta.header.id}</code></td><td>${inlineCodeHtml(meta.description)}</td></tr>`;
  })
  .join('\n')}
</tbody>
</table>
<p><code>X-Credits-Charged</code> and <code>X-Credits-Remaining</code> are on every answer that has a workspace (any call made with a valid key,
errors included); a refunded failure shows <code>X-Credits-Charged: 0</code>. A 401 carries <code>WWW-Authenticate: Bearer</code>.</p>

<h2 id="stale">A stale copy when the live fetch fails</h2>
<p>Opt-in, per call: with <code>"on_error": "stale"</code> in the body of a lookup or a search, a live fetch (<code>MISS</code> or <code>REFRESH</code>)
that fails with a refunded error (<code>upstream_error</code>, <code>parse_error</code>, <code>blocked</code>, <code>source_rate_limited</code>, <code>timeout</code>)
is answered 200 with the cached copy, whatever its age, if there is one: <code>X-Cache: STALE</code>, its <code>Age</code>,
<code>meta.cache.status: "STALE"</code>, at the cache-hit price. Without a copy, or without the flag, the failure is answered and refunded as always.</p>
<pre>POST /v1/company  {"url": "acme-robotics", "max_age": 3600, "on_error": "stale"}
200  X-Cache: STALE  Age: 172800  X-Credits-Charged: 1
{"data": {…the cached profile…}, "meta": {"cache": {"status": "STALE", "age_seconds": 172800, …}, "credits_charged": 1, …}}</pre>

<h2 id="limits">Limits</h2>
<p>Each key has a token bucket of <code>rate_limit_per_minute</code> requests (default 600), replays included; past it, 429 <code>rate_limited</code>.
Calls without a valid key (401s, the Meta area) share a bucket of 120 a minute per client address. At most <code>max_concurrency</code> (default 8)
lookups and searches of a workspace run at once; past it, 429 <code>concurrency_limited</code>. A batch takes one token per item and one slot per item fetched live (see <a href="#batch">Batch</a>). Every 429, 503 and 504 carries <code>Retry-After</code>.</p>
<p>Every answer with <code>RateLimit-Limit</code> also describes the same bucket in the structured fields of ${RATE_LIMIT_DRAFT},
for generic HTTP clients: <code>RateLimit-Policy: "key";q=600;w=60</code> (the bucket: <code>key</code>, <code>ip</code> without a valid key, or <code>console</code>; its size; its window in seconds)
and <code>RateLimit: "key";r=599;t=1</code> (requests left; seconds until the bucket is full or, with none left, until the next request goes through: on a refusal, <code>Retry-After</code>).</p>
<p>A key's <code>last_used_at</code> is the time of its last authenticated request of any kind: lookups, cache calls, replays and refusals made with it (400, 402, 409, 422, 429).</p>

<h2 id="pricing">Pricing</h2>
<p>Prices in credits are listed at <a href="/v1/pricing">/v1/pricing</a>. A definitive not-found is charged at the not-found price,
free when answered from the cache; failures on our side are refunded automatically.</p>

<h2 id="errors">Errors</h2>
<p>Every error has the envelope <code>{"error": {type, code, message, retryable, doc_url, …}, "meta": {…}}</code>. Build on <code>error.code</code>.
See <a href="/docs/errors">the error reference</a> or <a href="/v1/errors">/v1/errors</a>.</p>

${sandboxTriggersHtml(options.sandboxTriggers)}
<h2 id="reference">Reference</h2>
<p>The <a href="/docs/reference">API reference</a> shows every operation with its fields, a request example and example answers.
The machine-readable description is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</p>
</body>
</html>
`;
}
