// Expectations written down from docs/api.md (not imported from the service),
// and the assertions every end-to-end test shares.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { expect } from 'vitest';
import type { E2eServer, HttpResult } from './harness';

/** docs/api.md "Errors": code -> HTTP status, error.type, retryable; then our one extension. */
export const ERROR_TABLE = {
  invalid_request: [400, 'invalid_request_error', false],
  invalid_person_reference: [400, 'invalid_request_error', false],
  invalid_domain: [400, 'invalid_request_error', false],
  invalid_company_reference: [400, 'invalid_request_error', false],
  unauthorized: [401, 'authentication_error', false],
  insufficient_credits: [402, 'billing_error', false],
  not_found: [404, 'not_found_error', false],
  unresolvable_id: [404, 'not_found_error', false],
  route_not_found: [404, 'invalid_request_error', false],
  idempotency_key_in_use: [409, 'idempotency_error', true],
  idempotency_key_reused: [422, 'idempotency_error', false],
  rate_limited: [429, 'rate_limit_error', true],
  concurrency_limited: [429, 'rate_limit_error', true],
  upstream_error: [502, 'upstream_error', true],
  parse_error: [502, 'upstream_error', false],
  blocked: [503, 'upstream_error', true],
  source_rate_limited: [503, 'upstream_error', true],
  no_capacity: [503, 'upstream_error', true],
  timeout: [504, 'upstream_error', true],
  internal_error: [500, 'api_error', true],
  // Beyond the spec's table (docs/adr/0008): a dependency of the service is out for a moment.
  service_unavailable: [503, 'api_error', true],
  // The workspace console: signed in, not allowed (a member managing members, no CSRF token).
  forbidden: [403, 'authentication_error', false],
} as const satisfies Record<string, readonly [number, string, boolean]>;
export type ErrorCode = keyof typeof ERROR_TABLE;
export const ERROR_CODES = Object.keys(ERROR_TABLE) as ErrorCode[];

/** docs/api.md "Errors": the `issue` vocabulary of `error.details`. */
export const DETAIL_ISSUES = ['required', 'invalid_type', 'too_small', 'too_big', 'unknown_field', 'invalid_json', 'unsupported_content_type'];

/** `req_` + a 26-character ULID (Crockford base32). */
export const REQUEST_ID = /^req_[0-9A-HJKMNP-TV-Z]{26}$/;

/** docs/api.md "Success answer": `sha256:` + hex SHA-256 of the RFC 8785 canonical JSON of `data`. */
export function expectedContentHash(data: unknown): string {
  const canonical = canonicalize(data);
  if (canonical === undefined) throw new Error('not JSON');
  return `sha256:${createHash('sha256').update(canonical, 'utf8').digest('hex')}`;
}

export function expectRequestId(res: HttpResult): string {
  const id = res.headers.get('x-request-id');
  expect(id).toMatch(REQUEST_ID);
  return id!;
}

export interface ErrorExpectation {
  code: ErrorCode;
  /** meta.credits_remaining; null where no workspace is known. */
  remaining?: number | null;
  /** meta.credits_charged (default 0). */
  charged?: number;
  reason?: string;
}

/**
 * The whole error envelope: status, type, retryable and doc_url from the catalogue, request id
 * in header and body, billing meta, Retry-After = retry_after_seconds where a wait is advised,
 * and no success-only headers.
 */
export function expectError(res: HttpResult, server: E2eServer, want: ErrorExpectation) {
  const [status, type, retryable] = ERROR_TABLE[want.code];
  expect({ status: res.status, code: res.body?.error?.code }, res.text).toEqual({ status, code: want.code });
  const error = res.body.error;
  expect(error.type).toBe(type);
  expect(error.retryable).toBe(retryable);
  expect(typeof error.message).toBe('string');
  expect(error.message.length).toBeGreaterThan(0);
  expect(error.doc_url).toBe(`${server.url}/docs/errors#${want.code}`);
  const requestId = expectRequestId(res);
  expectRateLimitHeaders(res);
  expect(res.body.meta.request_id).toBe(requestId);
  expect(res.body.meta.credits_charged).toBe(want.charged ?? 0);
  if (want.remaining !== undefined) expect(res.body.meta.credits_remaining).toBe(want.remaining);
  if (want.reason !== undefined) expect(error.reason).toBe(want.reason);
  if (want.code === 'invalid_request') expect(Array.isArray(error.details)).toBe(true);
  else expect(error.details).toBeUndefined();

  if (status === 429 || status === 503 || status === 504) {
    expect(Number.isInteger(error.retry_after_seconds) && error.retry_after_seconds >= 1).toBe(true);
    expect(res.headers.get('retry-after')).toBe(String(error.retry_after_seconds));
  }
  if (error.retry_after_seconds === undefined) expect(res.headers.get('retry-after')).toBeNull();
  else expect(res.headers.get('retry-after')).toBe(String(error.retry_after_seconds));

  // Every answer with a workspace carries the credit headers, equal to meta: a refunded failure
  // shows X-Credits-Charged: 0 (docs/api.md "Prices"). Where no
  // workspace is known (meta.credits_remaining null), there is no balance to show.
  if (res.body.meta.credits_remaining === null) expect(res.headers.get('x-credits-remaining')).toBeNull();
  else {
    expect(res.headers.get('x-credits-charged')).toBe(String(res.body.meta.credits_charged));
    expect(res.headers.get('x-credits-remaining')).toBe(String(res.body.meta.credits_remaining));
  }
  // Success-only headers (docs/api.md "Response headers": 200 only); a replay is checked by its test.
  for (const header of ['x-cache', 'age', 'idempotent-replayed']) {
    expect(res.headers.get(header), header).toBeNull();
  }
}

/** `error.details` of an invalid_request must name `field` with `issue`. */
export function expectDetail(res: HttpResult, field: string, issue: string) {
  const details: Array<{ field: string; issue: string; message: string }> = res.body.error.details;
  for (const d of details) {
    expect(Object.keys(d).sort()).toEqual(['field', 'issue', 'message']);
    expect(DETAIL_ISSUES).toContain(d.issue);
    expect(typeof d.message).toBe('string');
  }
  expect(details, res.text).toContainEqual(expect.objectContaining({ field, issue }));
}

export interface SuccessExpectation {
  cache: 'HIT' | 'MISS' | 'REFRESH';
  charged: number;
  remaining: number;
}

/** The success envelope (docs/api.md "Success answer") with its headers. */
export function expectSuccess(res: HttpResult, want: SuccessExpectation) {
  expect(res.status, res.text).toBe(200);
  const { meta, data } = res.body;
  const requestId = expectRequestId(res);
  expectRateLimitHeaders(res);
  expect(meta.request_id).toBe(requestId);
  expect(meta.cache.status).toBe(want.cache);
  expect(res.headers.get('x-cache')).toBe(want.cache);
  expect(Number.isInteger(meta.cache.age_seconds) && meta.cache.age_seconds >= 0).toBe(true);
  expect(res.headers.get('age')).toBe(String(meta.cache.age_seconds));
  expect(new Date(meta.cache.fetched_at).toISOString()).toBe(meta.cache.fetched_at);
  if (want.cache !== 'HIT') expect(meta.cache.age_seconds).toBe(0);
  expect(meta.content_hash).toBe(expectedContentHash(data));
  expect(meta.credits_charged).toBe(want.charged);
  expect(meta.credits_remaining).toBe(want.remaining);
  expect(res.headers.get('x-credits-charged')).toBe(String(want.charged));
  expect(res.headers.get('x-credits-remaining')).toBe(String(want.remaining));
  expect(res.headers.get('idempotent-replayed')).toBeNull();
  expect(res.headers.get('retry-after')).toBeNull();
  return { data, meta, requestId };
}

/** Headers every response carries (docs/api.md "Response headers"). */
export function expectRateLimitHeaders(res: HttpResult) {
  for (const h of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) {
    expect(res.headers.get(h), h).toMatch(/^\d+$/);
  }
  // The same bucket as the draft's structured fields (docs/api.md, Standard rate-limit fields).
  expect(res.headers.get('ratelimit-policy')).toBe(`"${bucketName(res)}";q=${res.headers.get('ratelimit-limit')};w=60`);
  expect(res.headers.get('ratelimit')).toMatch(new RegExp(`^"${bucketName(res)}";r=${res.headers.get('ratelimit-remaining')};t=\\d+$`));
}

const bucketName = (res: HttpResult) => /^"(key|ip|console)"/.exec(res.headers.get('ratelimit-policy') ?? '')?.[1] ?? 'none';

/** The ledger under one request id: charge and refund (refunded failures) or just the charge. */
export async function ledgerTypes(server: E2eServer, workspaceId: string, requestId: string): Promise<Array<[string, number]>> {
  const entries = await server.admin.ledger(workspaceId, requestId);
  for (const e of entries) expect(e.request_id).toBe(requestId);
  return entries.map((e) => [e.type, e.credits]);
}
