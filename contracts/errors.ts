/**
 * The one error catalogue of the API (docs/api.md "Errors").
 * Every HTTP status, `error.type`, retry flag and billing rule is decided here and nowhere else.
 */

export const ERROR_TYPES = [
  'invalid_request_error',
  'authentication_error',
  'billing_error',
  'not_found_error',
  'idempotency_error',
  'rate_limit_error',
  'upstream_error',
  'api_error',
] as const;
export type ErrorType = (typeof ERROR_TYPES)[number];

/** never_charged: refused before any charge; not_found_price: the lookup's not-found price (free from cache); refunded: charged, then refunded automatically. */
export type BillingRule = 'never_charged' | 'not_found_price' | 'refunded';

export interface ErrorCatalogueEntry {
  readonly status: number;
  readonly type: ErrorType;
  readonly retryable: boolean;
  readonly billing: BillingRule;
  /** Default human message; it may change, clients build on `code`. */
  readonly message: string;
  /** What the caller should do about it: shown by GET /v1/errors, /docs/errors, the OpenAPI examples and docs/api.md. */
  readonly action: string;
  /**
   * Seconds advised before a retry when the caller has no better figure. Set exactly for the
   * statuses that always carry `Retry-After` (429, 503, 504).
   */
  readonly defaultRetryAfterSeconds?: number;
}

export const ERROR_CATALOGUE = {
  invalid_request: {
    status: 400,
    type: 'invalid_request_error',
    retryable: false,
    billing: 'never_charged',
    message: 'The body is not valid JSON or does not match the schema.',
    action: 'Fix each field `error.details` names (or the body as a whole) and send again; the same request fails the same way.',
  },
  invalid_person_reference: {
    status: 400,
    type: 'invalid_request_error',
    retryable: false,
    billing: 'never_charged',
    message: '`url` is not a profile URL or a name, or it is a member id.',
    action: "Send `url` as a profile URL (`…linkedin.com/in/<id>`) or a person's name; a member id (`ACoAA…`) cannot be looked up.",
  },
  invalid_domain: {
    status: 400,
    type: 'invalid_request_error',
    retryable: false,
    billing: 'never_charged',
    message: '`domain` is not a website on a public domain.',
    action: 'Send `domain` as a website host or URL on a public domain (`acme.com`), not an IP address, an e-mail address or a single label.',
  },
  invalid_company_reference: {
    status: 400,
    type: 'invalid_request_error',
    retryable: false,
    billing: 'never_charged',
    message: '`url` is not a company reference.',
    action: 'Send `url` as a company page URL, slug, numeric id or URN.',
  },
  unauthorized: {
    status: 401,
    type: 'authentication_error',
    retryable: false,
    billing: 'never_charged',
    message: 'The API key is missing, malformed or revoked.',
    action: 'Send a live or test key of the workspace as `Authorization: Bearer lk_…` or `X-Api-Key`; a revoked key stays refused: create a new one.',
  },
  insufficient_credits: {
    status: 402,
    type: 'billing_error',
    retryable: false,
    billing: 'never_charged',
    message: 'The workspace balance does not cover the call. Nothing was charged.',
    action: 'Add credits to the workspace (the operator grants them), then send again; `meta.credits_remaining` shows the balance.',
  },
  not_found: {
    status: 404,
    type: 'not_found_error',
    retryable: false,
    billing: 'not_found_price',
    message: 'No company behind the reference or domain, or no profile at that name.',
    action: "Do not retry: the answer is definitive, and `error.reason` says what was not found. A lookup's not-found is cached: asking again within `max_age` is answered from the cache, free.",
  },
  unresolvable_id: {
    status: 404,
    type: 'not_found_error',
    retryable: false,
    billing: 'not_found_price',
    message: 'No public company page can be found for the numeric id.',
    action: "Do not retry the numeric id: if you know the company's page URL or slug, look it up by that.",
  },
  route_not_found: {
    status: 404,
    type: 'invalid_request_error',
    retryable: false,
    billing: 'never_charged',
    message: 'No endpoint exists at this method and path.',
    action: 'Check the method and path against the API reference (`/docs/reference`, `/v1/openapi.json`).',
  },
  idempotency_key_in_use: {
    status: 409,
    type: 'idempotency_error',
    retryable: true,
    billing: 'never_charged',
    message: 'A request with this Idempotency-Key is still running.',
    action: 'Retry the same request with the same `Idempotency-Key` in a moment: once the first call has ended, its stored answer is replayed, not charged again.',
  },
  idempotency_key_reused: {
    status: 422,
    type: 'idempotency_error',
    retryable: false,
    billing: 'never_charged',
    message: 'The Idempotency-Key was used with a different endpoint or body.',
    action: 'Use a new `Idempotency-Key` for a different request: a key stays bound to its first endpoint and body for 24 hours.',
  },
  rate_limited: {
    status: 429,
    type: 'rate_limit_error',
    retryable: true,
    billing: 'never_charged',
    message: 'Too many requests for this API key. Wait for Retry-After.',
    action: 'Wait `Retry-After` seconds, then retry; pace calls by `RateLimit-Remaining` and `RateLimit-Reset`, or ask the operator for a higher `rate_limit_per_minute` for the key.',
    defaultRetryAfterSeconds: 1,
  },
  concurrency_limited: {
    status: 429,
    type: 'rate_limit_error',
    retryable: true,
    billing: 'never_charged',
    message: "Too many of the workspace's lookups are in flight. Retry after Retry-After.",
    action: 'Wait `Retry-After` seconds, then retry; run fewer lookups at once (`max_concurrency`, default 8), or send them as one `POST /v1/batch`.',
    defaultRetryAfterSeconds: 1,
  },
  upstream_error: {
    status: 502,
    type: 'upstream_error',
    retryable: true,
    billing: 'refunded',
    message: 'The data could not be fetched because of an unexpected error.',
    action: 'Retry with backoff; the charge was refunded. On a lookup or search, `on_error: "stale"` has a cached copy answer instead.',
  },
  parse_error: {
    status: 502,
    type: 'upstream_error',
    retryable: false,
    billing: 'refunded',
    message: 'The data was fetched but could not be read.',
    action: 'Do not retry at once: the same data is likely to fail again. On a lookup or search, `on_error: "stale"` has a cached copy answer instead; report the `request_id` if it persists.',
  },
  blocked: {
    status: 503,
    type: 'upstream_error',
    retryable: true,
    billing: 'refunded',
    message: 'The data cannot be fetched right now. Retry after Retry-After.',
    action: 'Wait `Retry-After` seconds, then retry; the charge was refunded. On a lookup or search, `on_error: "stale"` has a cached copy answer instead.',
    defaultRetryAfterSeconds: 30,
  },
  source_rate_limited: {
    status: 503,
    type: 'upstream_error',
    retryable: true,
    billing: 'refunded',
    message: 'Fetching is being slowed down right now. Retry after Retry-After.',
    action: 'Wait `Retry-After` seconds, then retry, sending fewer live fetches (a larger `max_age` serves more from the cache); the charge was refunded.',
    defaultRetryAfterSeconds: 10,
  },
  no_capacity: {
    status: 503,
    type: 'upstream_error',
    retryable: true,
    billing: 'never_charged',
    message: 'New lookups cannot be taken now. Nothing was charged.',
    action: 'Wait `Retry-After` seconds, then retry; nothing was charged.',
    defaultRetryAfterSeconds: 1,
  },
  timeout: {
    status: 504,
    type: 'upstream_error',
    retryable: true,
    billing: 'refunded',
    message: 'No definitive answer arrived in time.',
    action: 'Wait `Retry-After` seconds, then retry; the charge was refunded. On a lookup or search, `on_error: "stale"` has a cached copy answer instead.',
    defaultRetryAfterSeconds: 5,
  },
  internal_error: {
    status: 500,
    type: 'api_error',
    retryable: true,
    billing: 'refunded',
    message: "A failure on the service's side.",
    action: 'Retry with backoff; the charge was refunded. If it persists, report the `request_id`.',
  },
  // Beyond the contract's table: a dependency of ours (database, Redis) is unreachable for a
  // moment. The caller did nothing wrong and may retry; whatever was charged is refunded.
  service_unavailable: {
    status: 503,
    type: 'api_error',
    retryable: true,
    billing: 'refunded',
    message: 'The service cannot complete calls right now. Retry after Retry-After.',
    action: 'Wait `Retry-After` seconds, then retry; whatever was charged is refunded.',
    defaultRetryAfterSeconds: 2,
  },
  // Beyond the contract's table: for the workspace console. The caller is signed in
  // but may not do this: a `member` managing members, or a state-changing call without its
  // session's CSRF token or from another origin (`reason`: not_owner, csrf).
  forbidden: {
    status: 403,
    type: 'authentication_error',
    retryable: false,
    billing: 'never_charged',
    message: 'Signed in, but not allowed to do this.',
    action: "See `error.reason`: sign in as an owner (`not_owner`), call from the console's own pages with the session's CSRF token (`csrf`), or use a live key (`test_key`).",
  },
} as const satisfies Record<string, ErrorCatalogueEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** The message of a per-client-address bucket's 429 (no key, the console): no API key ran out. */
export const ANONYMOUS_RATE_LIMITED = 'Too many requests from this client address. Wait for Retry-After.';

interface ReasonEntry {
  /** The codes it comes with. */
  readonly codes: readonly ErrorCode[];
  /** What it tells the caller, for the catalogue and docs/api.md. */
  readonly meaning: string;
}

/**
 * Every `error.reason` the service sets, with the codes it comes with: the one list that
 * `GET /v1/errors`, `/docs/errors`, the OpenAPI document and docs/api.md show (a test holds
 * docs/api.md to it). `ApiError` takes nothing else, and a literal code only its own reasons,
 * so a reason missing here does not compile.
 */
const ERROR_REASONS = {
  // Lookups (docs/api.md, "Errors"): which not-found it is.
  no_company: { codes: ['not_found'], meaning: 'No company behind the company reference.' },
  no_company_for_domain: { codes: ['not_found'], meaning: 'No company behind the website domain.' },
  no_profile_at_url: { codes: ['not_found'], meaning: 'No profile at the profile URL.' },
  no_profile_for_name: { codes: ['not_found'], meaning: 'No profile found for the name.' },
  no_public_page: { codes: ['not_found', 'unresolvable_id'], meaning: 'No public company page for the numeric company id.' },
  no_results: { codes: ['not_found'], meaning: 'The search source answered not-found for the query.' },
  // Webhooks and watches.
  no_webhook_endpoint: { codes: ['not_found'], meaning: 'No such webhook endpoint in the workspace.' },
  no_webhook_delivery: { codes: ['not_found'], meaning: 'No such delivery of the webhook endpoint.' },
  no_watch: { codes: ['not_found'], meaning: 'No such watch in the workspace.' },
  test_key: { codes: ['forbidden'], meaning: "A test key (`lk_test_…`) may not create or run a watch: a watch's refreshes are live, charged lookups. Use a live key." },
  webhook_url_refused: { codes: ['invalid_request'], meaning: 'The webhook URL is not http(s), carries credentials, or names an address the service may not reach (private, loopback, link-local).' },
  // The admin API.
  no_audit: { codes: ['not_found'], meaning: 'No audit job with that id (the last 20 finished are kept).' },
  // The console and the admin API: which refusal it is.
  not_owner: { codes: ['forbidden'], meaning: 'Only an owner of the workspace may do this.' },
  csrf: { codes: ['forbidden'], meaning: "A state-changing call without its session's CSRF token, or from a page of another origin." },
  last_owner: { codes: ['invalid_request'], meaning: 'The workspace must keep at least one owner.' },
  already_member: { codes: ['invalid_request'], meaning: 'This email is already a member of the workspace.' },
  invitation_used: { codes: ['invalid_request'], meaning: 'The invitation link has already been used.' },
  invitation_expired: { codes: ['invalid_request'], meaning: 'The invitation link has expired.' },
  invitation_cancelled: { codes: ['invalid_request'], meaning: 'The invitation was cancelled.' },
  password_reset_used: { codes: ['invalid_request'], meaning: 'The password reset link has already been used (or a newer reset was completed).' },
  password_reset_expired: { codes: ['invalid_request'], meaning: 'The password reset link has expired (1 hour).' },
  common_password: { codes: ['invalid_request'], meaning: 'The new password is among the most common ones.' },
  no_member: { codes: ['not_found'], meaning: 'No such member in the workspace.' },
  no_invitation: { codes: ['not_found'], meaning: 'The invitation link is not valid.' },
  no_password_reset: { codes: ['not_found'], meaning: 'The password reset link is not valid.' },
  no_key: { codes: ['not_found'], meaning: 'No such API key in the workspace.' },
  no_workspace: { codes: ['not_found'], meaning: 'No such workspace.' },
  sign_in_slowed: { codes: ['rate_limited'], meaning: 'Failed sign-ins (per workspace, email and client address): from the 3rd, a wait of 1 s, 2 s...' },
  sign_in_locked: { codes: ['rate_limited'], meaning: 'Failed sign-ins: from the 5th, locked for 15 minutes.' },
  password_slowed: { codes: ['rate_limited'], meaning: "Wrong current passwords of a password change (per member): the same waits as sign-in." },
  password_locked: { codes: ['rate_limited'], meaning: 'Wrong current passwords of a password change: locked as for sign-in.' },
  password_checks_busy: { codes: ['rate_limited'], meaning: 'Too many password checks asked of the instance at once, by the client address or in all.' },
} as const satisfies Record<string, ReasonEntry>;
export type ErrorReason = keyof typeof ERROR_REASONS;
/** The reasons a code may carry (every reason when the code is not known at compile time). */
export type ReasonOf<C extends ErrorCode> = { [R in ErrorReason]: C extends (typeof ERROR_REASONS)[R]['codes'][number] ? R : never }[ErrorReason];
/** All reasons, in list order. */
export const ERROR_REASON_NAMES = Object.keys(ERROR_REASONS) as [ErrorReason, ...ErrorReason[]];

export function isErrorReason(value: string): value is ErrorReason {
  return Object.hasOwn(ERROR_REASONS, value);
}

/** The reasons of one code, in list order, with their meaning. */
export function reasonsOf(code: ErrorCode): { reason: ErrorReason; meaning: string }[] {
  return ERROR_REASON_NAMES.filter((reason) => (ERROR_REASONS[reason].codes as readonly ErrorCode[]).includes(code)).map((reason) => ({ reason, meaning: ERROR_REASONS[reason].meaning }));
}

/** All codes, in catalogue order (the spec table's order). */
export const ERROR_CODES = Object.keys(ERROR_CATALOGUE) as [ErrorCode, ...ErrorCode[]];

export function isErrorCode(value: string): value is ErrorCode {
  return  Object.hasOwn(ERROR_CATALOGUE, value);
}

/** Statuses on which `Retry-After` is always sent (docs/api.md "Limits"). */
export function statusCarriesRetryAfter(status: number): boolean {
  return status === 429 || status === 503 || status === 504;
}

export const DETAIL_ISSUES = [
  'required',
  'invalid_type',
  'too_small',
  'too_big',
  'unknown_field',
  'invalid_json',
  'unsupported_content_type',
] as const;
export type DetailIssue = (typeof DETAIL_ISSUES)[number];

/** One entry of `error.details`: `field` is a body field, `body` for the body as a whole, or `Idempotency-Key`. */
export interface Detail {
  field: string;
  issue: DetailIssue;
  message: string;
}

/** What a call cost and the workspace balance after it (null: not known here). */
export interface Billing {
  charged: number;
  balance: number | null;
}

export interface ApiErrorOptions<C extends ErrorCode = ErrorCode> {
  message?: string;
  details?: Detail[];
  reason?: ReasonOf<C>;
  retryAfterSeconds?: number;
  cause?: unknown;
  /** Set once the call reached the ledger: the envelope's meta then reports it. */
  billing?: Billing;
}

// C: the code given, so that a literal code takes only its own reasons.
export class ApiError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: ErrorType;
  readonly retryable: boolean;
  readonly details?: Detail[];
  readonly reason?: ErrorReason;
  readonly retryAfterSeconds?: number;
  readonly billing?: Billing;

  constructor(code: C, opts: ApiErrorOptions<C> = {}) {
    const entry: ErrorCatalogueEntry = ERROR_CATALOGUE[code];
    super(opts.message ?? entry.message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'ApiError';
    this.code = code;
    this.status = entry.status;
    this.type = entry.type;
    this.retryable = entry.retryable;
    if (opts.details !== undefined) this.details = opts.details;
    if (opts.reason !== undefined) this.reason = opts.reason;
    if (opts.billing !== undefined) this.billing = opts.billing;
    const retryAfter = opts.retryAfterSeconds ?? entry.defaultRetryAfterSeconds;
    // Retry-After is a whole number of seconds and never 0 (a 0 would invite a hot retry loop).
    if (retryAfter !== undefined) this.retryAfterSeconds = Math.max(1, Math.ceil(retryAfter));
  }
}

export function isApiError(value: unknown): value is ApiError {
  return value instanceof ApiError;
}

/** The `error` object of the error envelope; absent optional keys are omitted, never null. */
export interface ErrorBody {
  type: ErrorType;
  code: ErrorCode;
  message: string;
  retryable: boolean;
  doc_url: string;
  retry_after_seconds?: number;
  details?: Detail[];
  reason?: ErrorReason;
}

export function errorDocUrl(docsUrl: string, code: ErrorCode): string {
  return `${docsUrl.replace(/\/+$/, '')}/errors#${code}`;
}

export function errorBody(err: ApiError, docsUrl: string): ErrorBody {
  const body: ErrorBody = {
    type: err.type,
    code: err.code,
    message: err.message,
    retryable: err.retryable,
    doc_url: errorDocUrl(docsUrl, err.code),
  };
  if (err.retryAfterSeconds !== undefined) body.retry_after_seconds = err.retryAfterSeconds;
  if (err.details !== undefined) body.details = err.details;
  if (err.reason !== undefined) body.reason = err.reason;
  return body;
}

/** One entry of `GET /v1/errors`. */
export interface ErrorCatalogueListEntry {
  code: ErrorCode;
  status: number;
  type: ErrorType;
  retryable: boolean;
  billing: BillingRule;
  message: string;
  /** What the caller should do about it. */
  action: string;
  doc_url: string;
  /** The `error.reason` values it may carry (empty: none). */
  reasons: { reason: ErrorReason; meaning: string }[];
}

/** The catalogue as served by `GET /v1/errors`: `{ data: [...] }` in catalogue order. */
export function errorCatalogueList(docsUrl: string): { data: ErrorCatalogueListEntry[] } {
  return {
    data: ERROR_CODES.map((code) => {
      const entry: ErrorCatalogueEntry = ERROR_CATALOGUE[code];
      return {
        code,
        status: entry.status,
        type: entry.type,
        retryable: entry.retryable,
        billing: entry.billing,
        message: entry.message,
        action: entry.action,
        doc_url: errorDocUrl(docsUrl, code),
        reasons: reasonsOf(code),
      };
    }),
  };
}

/** `notFoundPrices`: the live not-found prices in words (from the price table). */
function billingText(rule: BillingRule, notFoundPrices: string): string {
  switch (rule) {
    case 'never_charged':
      return 'Never charged.';
    case 'not_found_price':
      return `Charged at the lookup's not-found price (${notFoundPrices}); free when answered from the cache.`;
    case 'refunded':
      return 'Refunded automatically: `credits_charged` and `X-Credits-Charged` show 0.';
  }
}

/** Whether the code's charge comes back, in a word or two: the summary table of /docs/errors. */
function refundedText(rule: BillingRule): string {
  switch (rule) {
    case 'never_charged':
      return 'nothing charged';
    case 'not_found_price':
      return 'no: not-found price';
    case 'refunded':
      return 'yes, automatically';
  }
}

/** Text with `code spans`, as HTML: escaped, each backtick pair a <code> element (never literal backticks). */
export function inlineCodeHtml(text: string): string {
  return escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');
}

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** The links atop every docs page (/docs, /docs/errors, /docs/reference). */
export const DOCS_NAV_HTML =
  '<nav class="docs-nav"><a href="/docs">Guide</a><a href="/docs/reference">API reference</a><a href="/docs/errors">Errors</a><a href="/v1/openapi.json">OpenAPI document</a></nav>';

/** No icon of their own: an empty one, so browsers do not ask for /favicon.ico (a 404). */
export const DOCS_ICON_LINK = '<link rel="icon" href="data:,">';

/** The viewport tag and, when given, the style sheet link of a docs page's head (/docs, /docs/errors). */
export const docsHeadHtml = (stylesheetHref?: string): string =>
  `<meta name="viewport" content="width=device-width, initial-scale=1">${DOCS_ICON_LINK}${stylesheetHref === undefined ? '' : `<link rel="stylesheet" href="${escapeHtml(stylesheetHref)}">`}`;

/**
 * The human page behind `error.doc_url`: one element with `id="<code>"` per code.
 * `notFoundPrices`: the live not-found prices in words (services/ledger/pricing.ts).
 * `stylesheetHref`: the docs' style sheet (/docs/assets).
 */
export function renderErrorsDocHtml(docsUrl: string, notFoundPrices: string, stylesheetHref?: string): string {
  const sections = ERROR_CODES.map((code) => {
    const entry: ErrorCatalogueEntry = ERROR_CATALOGUE[code];
    const reasons = reasonsOf(code);
    const reasonList = reasons.length === 0 ? '' : `<dt>error.reason</dt><dd><ul>${reasons.map((r) => `<li><code>${r.reason}</code>: ${inlineCodeHtml(r.meaning)}</li>`).join('')}</ul></dd>\n`;
    const retryAfter = statusCarriesRetryAfter(entry.status)
      ? ' Sent with a <code>Retry-After</code> header and <code>error.retry_after_seconds</code>.'
      : '';
    return `<section id="${code}">
<h2><a href="#${code}"><code>${code}</code></a></h2>
<dl>
<dt>HTTP status</dt><dd>${entry.status}</dd>
<dt>error.type</dt><dd><code>${entry.type}</code></dd>
<dt>Retryable</dt><dd>${entry.retryable ? 'yes' : 'no'}</dd>
<dt>Billing</dt><dd>${inlineCodeHtml(billingText(entry.billing, notFoundPrices))}</dd>
<dt>Meaning</dt><dd>${inlineCodeHtml(entry.message)}</dd>
<dt>What to do</dt><dd>${inlineCodeHtml(entry.action)}${retryAfter}</dd>
${reasonList}</dl>
</section>`;
  }).join('\n');
  const summary = ERROR_CODES.map((code) => {
    const entry: ErrorCatalogueEntry = ERROR_CATALOGUE[code];
    return `<tr><td><a href="#${code}"><code>${code}</code></a></td><td>${entry.status}</td><td>${entry.retryable ? 'yes' : 'no'}</td><td>${refundedText(entry.billing)}</td></tr>`;
  }).join('\n');
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8">${docsHeadHtml(stylesheetHref)}<title>Errors: Company and Person Lookup API</title></head>
<body>
${DOCS_NAV_HTML}
<h1>Errors</h1>
<p>Every error has the envelope <code>{"error": {type, code, message, retryable, doc_url, retry_after_seconds?, details?, reason?}, "meta": {request_id, credits_charged, credits_remaining}}</code>.
Build on <code>error.code</code>; the message may change. <code>error.doc_url</code> links to the code's entry on this page (<code>/docs/errors#&lt;code&gt;</code>).
The same catalogue is served as JSON by <a href="/v1/errors"><code>GET /v1/errors</code></a>.</p>
<p>For <code>invalid_request</code>, <code>error.details</code> lists <code>{field, issue, message}</code> with <code>issue</code> one of
${DETAIL_ISSUES.map((issue) => `<code>${issue}</code>`).join(', ')}.</p>
<p>Back to the <a href="${escapeHtml(docsUrl.replace(/\/+$/, ''))}">documentation</a>.</p>
<table>
<thead><tr><th>Code</th><th>HTTP</th><th>Retryable</th><th>Refunded</th></tr></thead>
<tbody>
${summary}
</tbody>
</table>
${sections}
</body>
</html>
`;
}
