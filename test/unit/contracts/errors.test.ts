import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  ERROR_CATALOGUE,
  ERROR_CODES,
  ERROR_REASON_NAMES,
  isErrorReason,
  reasonsOf,
  errorBody,
  errorCatalogueList,
  errorDocUrl,
  inlineCodeHtml,
  isApiError,
  isErrorCode,
  renderErrorsDocHtml,
  statusCarriesRetryAfter,
  type ErrorCode,
} from '../../../contracts/errors';
import { ErrorObject, ErrorsListResponse } from '../../../contracts/http';

// The spec's table, transcribed row by row: code, HTTP, type, retryable, billing.
const SPEC_TABLE: [ErrorCode, number, string, boolean, string][] = [
  ['invalid_request', 400, 'invalid_request_error', false, 'never_charged'],
  ['invalid_person_reference', 400, 'invalid_request_error', false, 'never_charged'],
  ['invalid_domain', 400, 'invalid_request_error', false, 'never_charged'],
  ['invalid_company_reference', 400, 'invalid_request_error', false, 'never_charged'],
  ['unauthorized', 401, 'authentication_error', false, 'never_charged'],
  ['insufficient_credits', 402, 'billing_error', false, 'never_charged'],
  ['not_found', 404, 'not_found_error', false, 'not_found_price'],
  ['unresolvable_id', 404, 'not_found_error', false, 'not_found_price'],
  ['route_not_found', 404, 'invalid_request_error', false, 'never_charged'],
  ['idempotency_key_in_use', 409, 'idempotency_error', true, 'never_charged'],
  ['idempotency_key_reused', 422, 'idempotency_error', false, 'never_charged'],
  ['rate_limited', 429, 'rate_limit_error', true, 'never_charged'],
  ['concurrency_limited', 429, 'rate_limit_error', true, 'never_charged'],
  ['upstream_error', 502, 'upstream_error', true, 'refunded'],
  ['parse_error', 502, 'upstream_error', false, 'refunded'],
  ['blocked', 503, 'upstream_error', true, 'refunded'],
  ['source_rate_limited', 503, 'upstream_error', true, 'refunded'],
  ['no_capacity', 503, 'upstream_error', true, 'never_charged'],
  ['timeout', 504, 'upstream_error', true, 'refunded'],
  ['internal_error', 500, 'api_error', true, 'refunded'],
];

// Ours, beyond the spec's table: a dependency (database, Redis) out for a moment.
const EXTENSIONS: typeof SPEC_TABLE = [
  ['service_unavailable', 503, 'api_error', true, 'refunded'],
  // The workspace console: signed in, not allowed (a member managing members, a missing CSRF token).
  ['forbidden', 403, 'authentication_error', false, 'never_charged'],
];

describe('ERROR_CATALOGUE', () => {
  it('holds exactly the 20 codes of the spec table, in its order, then its own extensions', () => {
    expect(ERROR_CODES).toEqual([...SPEC_TABLE, ...EXTENSIONS].map(([code]) => code));
  });

  it.each([...SPEC_TABLE, ...EXTENSIONS])('%s: %i %s retryable=%s billing=%s', (code, status, type, retryable, billing) => {
    expect(ERROR_CATALOGUE[code]).toMatchObject({ status, type, retryable, billing });
    expect(ERROR_CATALOGUE[code].message.length).toBeGreaterThan(0);
  });

  it('gives every 429, 503 and 504 a default Retry-After, and no other status one', () => {
    for (const code of ERROR_CODES) {
      const entry = ERROR_CATALOGUE[code] as { status: number; defaultRetryAfterSeconds?: number };
      expect(entry.defaultRetryAfterSeconds !== undefined).toBe(statusCarriesRetryAfter(entry.status));
    }
    expect(ERROR_CATALOGUE.concurrency_limited.defaultRetryAfterSeconds).toBe(1);
  });

  it('recognises its own codes only', () => {
    expect(isErrorCode('timeout')).toBe(true);
    expect(isErrorCode('toString')).toBe(false);
    expect(isErrorCode('nope')).toBe(false);
  });
});

describe('ApiError', () => {
  it('takes status, type and retry flag from the catalogue, and its default message', () => {
    const err = new ApiError('insufficient_credits');
    expect(err).toBeInstanceOf(Error);
    expect(isApiError(err)).toBe(true);
    expect([err.code, err.status, err.type, err.retryable]).toEqual(['insufficient_credits', 402, 'billing_error', false]);
    expect(err.message).toBe(ERROR_CATALOGUE.insufficient_credits.message);
    expect(err.details).toBeUndefined();
    expect(err.reason).toBeUndefined();
    expect(err.retryAfterSeconds).toBeUndefined();
  });

  it('keeps a given message, details, reason and cause', () => {
    const cause = new Error('socket hang up');
    const err = new ApiError('not_found', { message: 'No company at that slug.', reason: 'no_company', cause });
    expect(err.message).toBe('No company at that slug.');
    expect(err.reason).toBe('no_company');
    expect(err.cause).toBe(cause);
  });

  it('uses the catalogue Retry-After unless told, and rounds a given one up to whole seconds, at least 1', () => {
    expect(new ApiError('concurrency_limited').retryAfterSeconds).toBe(1);
    expect(new ApiError('rate_limited', { retryAfterSeconds: 2.2 }).retryAfterSeconds).toBe(3);
    expect(new ApiError('rate_limited', { retryAfterSeconds: 0 }).retryAfterSeconds).toBe(1);
  });
});

describe('errorBody', () => {
  const DOCS = 'https://api.example.org/docs';

  it('omits absent optional keys instead of sending null', () => {
    const body = errorBody(new ApiError('unauthorized'), DOCS);
    expect(body).toEqual({
      type: 'authentication_error',
      code: 'unauthorized',
      message: ERROR_CATALOGUE.unauthorized.message,
      retryable: false,
      doc_url: 'https://api.example.org/docs/errors#unauthorized',
    });
    expect(Object.keys(body)).not.toContain('details');
    expect(ErrorObject.safeParse(body).success).toBe(true);
  });

  it('carries retry_after_seconds, details and reason when present', () => {
    const details = [{ field: 'url', issue: 'required' as const, message: '`url` is required.' }];
    expect(errorBody(new ApiError('invalid_request', { details }), DOCS).details).toEqual(details);
    expect(errorBody(new ApiError('timeout', { retryAfterSeconds: 7 }), DOCS).retry_after_seconds).toBe(7);
    expect(errorBody(new ApiError('unresolvable_id', { reason: 'no_public_page' }), DOCS).reason).toBe('no_public_page');
    for (const code of ERROR_CODES) expect(ErrorObject.safeParse(errorBody(new ApiError(code), DOCS)).success).toBe(true);
  });

  it('builds doc_url without a doubled slash when the docs URL ends in one', () => {
    expect(errorBody(new ApiError('timeout'), `${DOCS}/`).doc_url).toBe(`${DOCS}/errors#timeout`);
  });
});

describe('errors documentation', () => {
  it('GET /v1/errors lists every code with its facts, valid against its schema', () => {
    const list = errorCatalogueList('http://localhost:3000/docs');
    expect(ErrorsListResponse.safeParse(list).success).toBe(true);
    expect(list.data.map((e) => e.code)).toEqual(ERROR_CODES);
    expect(list.data.find((e) => e.code === 'no_capacity')).toMatchObject({ status: 503, billing: 'never_charged', reasons: [] });
  });

  it('GET /v1/errors gives each code the reasons it may carry, each reason under at least one code', () => {
    const list = errorCatalogueList('http://localhost:3000/docs');
    const byCode = new Map(list.data.map((e) => [e.code, e.reasons.map((r) => r.reason)]));
    expect(byCode.get('forbidden')).toEqual(['test_key', 'not_owner', 'csrf']);
    expect(byCode.get('unresolvable_id')).toEqual(['no_public_page']);
    expect(byCode.get('not_found')).toEqual(expect.arrayContaining(['no_company', 'no_profile_for_name', 'no_invitation', 'no_audit']));
    expect(byCode.get('invalid_request')).toEqual(expect.arrayContaining(['invitation_used', 'invitation_cancelled', 'common_password']));
    expect(new Set(list.data.flatMap((e) => e.reasons.map((r) => r.reason)))).toEqual(new Set(ERROR_REASON_NAMES));
    for (const entry of list.data) for (const r of entry.reasons) expect(r.meaning.length, r.reason).toBeGreaterThan(10);
  });

  it('GET /v1/errors and the HTML page say for each code what the caller should do, from the one catalogue', () => {
    const list = errorCatalogueList('http://localhost:3000/docs');
    const html = renderErrorsDocHtml('http://localhost:3000/docs', '1 credit by company reference');
    for (const code of ERROR_CODES) {
      const action = ERROR_CATALOGUE[code].action;
      expect(list.data.find((e) => e.code === code)!.action, code).toBe(action);
      const section = html.slice(html.indexOf(`<section id="${code}">`), html.indexOf('</section>', html.indexOf(`<section id="${code}">`)));
      expect(section, code).toContain(`<dt>What to do</dt><dd>${inlineCodeHtml(action)}`);
      expect(section, code).toContain(`<dt>Meaning</dt><dd>${inlineCodeHtml(ERROR_CATALOGUE[code].message)}</dd>`);
    }
  });

  it('the HTML page opens with a table of every code linking to its anchor, with its status, retry flag and refund', () => {
    const html = renderErrorsDocHtml('http://localhost:3000/docs', '1 credit by company reference');
    expect(html).toContain('<tr><td><a href="#timeout"><code>timeout</code></a></td><td>504</td><td>yes</td><td>yes, automatically</td></tr>');
    expect(html).toContain('<tr><td><a href="#no_capacity"><code>no_capacity</code></a></td><td>503</td><td>yes</td><td>nothing charged</td></tr>');
    expect(html).toContain('<tr><td><a href="#not_found"><code>not_found</code></a></td><td>404</td><td>no</td><td>no: not-found price</td></tr>');
    // Each anchor the table links to is a section the envelope's doc_url points at.
    for (const [, code] of html.matchAll(/<a href="#([a-z_]+)">/g)) expect(html, code).toContain(`<section id="${code}">`);
    expect(errorDocUrl('http://localhost:3000/docs', 'timeout')).toBe('http://localhost:3000/docs/errors#timeout');
  });

  it('the HTML page lists the reasons of each code in its section', () => {
    const html = renderErrorsDocHtml('http://localhost:3000/docs', '1 credit by company reference');
    for (const code of ERROR_CODES) {
      const section = html.slice(html.indexOf(`<section id="${code}">`), html.indexOf('</section>', html.indexOf(`<section id="${code}">`)));
      for (const { reason } of reasonsOf(code)) expect(section, `${code} ${reason}`).toContain(`<li><code>${reason}</code>: `);
      expect(section.includes('<dt>error.reason</dt>'), code).toBe(reasonsOf(code).length > 0);
    }
  });

  it('a reason that is not in the list, or not of its code, does not compile', () => {
    // @ts-expect-error: not a reason of the list
    const unknown = new ApiError('not_found', { reason: 'no_such_reason' });
    // @ts-expect-error: a reason of `forbidden`, not of `not_found`
    const otherCode = new ApiError('not_found', { reason: 'csrf' });
    expect([unknown.reason, otherCode.reason]).toEqual(['no_such_reason', 'csrf']);
    expect(new ApiError('forbidden', { reason: 'csrf' }).reason).toBe('csrf');
  });

  it('every reason the service code names is in the list (a scan of services/, beside the types)', () => {
    const root = fileURLToPath(new URL('../../../services/', import.meta.url));
    const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    const named = new Set<string>();
    // The literals after `reason:`, `notFoundReason:`, `slowed:` and `locked:`, not those compared against (=== 'x') or typed (type: 'x').
    for (const file of files) {
      for (const line of readFileSync(join(root, file), 'utf8').split('\n')) {
        for (const m of line.matchAll(/\b(?:reason|notFoundReason|slowed|locked)\??: ([^,}]+)/gi)) {
          for (const literal of m[1]!.matchAll(/(?<!(?:===|!==|type:) |<)'([a-z_]+)'/g)) named.add(literal[1]!);
        }
      }
    }
    expect(named.size).toBeGreaterThan(20);
    expect(named).toContain('no_profile_for_name');
    expect([...named].filter((r) => !isErrorReason(r))).toEqual([]);
  });

  it('the HTML page has one anchor per code, with its status', () => {
    const html = renderErrorsDocHtml('http://localhost:3000/docs', '1 credit by company reference');
    for (const [code, status] of SPEC_TABLE) {
      const section = new RegExp(`<section id="${code}">[\\s\\S]*?<dd>${status}</dd>[\\s\\S]*?</section>`);
      expect(html).toMatch(section);
    }
    expect(html.match(/<section id="/g)).toHaveLength(ERROR_CODES.length);
    expect(html).toContain('Charged at the lookup&#39;s not-found price (1 credit by company reference); free when answered from the cache.');
  });
});
