import type { z } from 'zod';
import type { CompanyResult, PersonResult, SearchOutcome, Source, SourceFailure, SourceFailureCode } from './source';
import { SingleFlight } from './single-flight';
import { normaliseCompanyEnvelope, normalisePersonEnvelope, normaliseSearchEnvelope } from './upstream-normalisation';
import { CompanyEnvelope, NotFoundBody, PATHS, PersonEnvelope, SEARCH_LIMIT_MAX, SearchEnvelope } from './wire';

export type HttpSourceOptions = {
  /** e.g. `http://127.0.0.1:4010`; a trailing slash is ignored. */
  baseUrl: string;
  /** A fetch with no complete answer by then ends in `timeout`. */
  timeoutMs: number;
};

/** Waits advised when the upstream does not say (whole seconds). */
export const DEFAULT_RETRY_AFTER_SECONDS: Record<'blocked' | 'source_rate_limited' | 'timeout', number> = {
  blocked: 30,
  source_rate_limited: 10,
  timeout: 5,
};
const MAX_RETRY_AFTER_SECONDS = 3600;

type Reply = { status: number; retryAfter: string | null; text: string };
type Lookup = 'company' | 'company_by_id' | 'person' | 'search';

function failure(code: SourceFailureCode, message: string, retryAfterSeconds?: number): SourceFailure {
  return retryAfterSeconds === undefined ? { kind: 'failure', code, message } : { kind: 'failure', code, message, retryAfterSeconds };
}

/** Retry-After as delay-seconds or an HTTP date, as whole seconds in [1, 3600]; else the default. */
export function parseRetryAfter(header: string | null, fallback: number, now = Date.now()): number {
  let seconds = Number.NaN;
  if (header !== null && /^\s*\d+\s*$/.test(header)) seconds = Number(header);
  else if (header !== null && /[a-z]/i.test(header)) {
    const at = Date.parse(header);
    if (!Number.isNaN(at)) seconds = Math.ceil((at - now) / 1000);
  }
  if (!Number.isFinite(seconds)) seconds = fallback;
  return Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil(seconds)));
}

/** Maps an upstream reply that is not a 200 to the port's outcome. */
function outcomeOfStatus(lookup: Lookup, reply: Reply): { kind: 'not_found' } | { kind: 'unresolvable_id' } | SourceFailure {
  const { status } = reply;
  if (status === 404) {
    // Only a 404 that says what it means is definitive; a bare one (wrong base URL, a proxy) is not.
    const marker = NotFoundBody.safeParse(safeJson(reply.text));
    if (!marker.success) return failure('upstream_error', 'source answered 404 without a not-found marker');
    if (lookup === 'company_by_id' || marker.data.error === 'unresolvable_id') return { kind: 'unresolvable_id' };
    return { kind: 'not_found' };
  }
  if (status === 403 || status === 999) {
    return failure('blocked', `source refused the request (${status})`, parseRetryAfter(reply.retryAfter, DEFAULT_RETRY_AFTER_SECONDS.blocked));
  }
  if (status === 429) {
    return failure(
      'source_rate_limited',
      'source is rate limiting us (429)',
      parseRetryAfter(reply.retryAfter, DEFAULT_RETRY_AFTER_SECONDS.source_rate_limited),
    );
  }
  if (status === 408 || status === 504) {
    return failure('timeout', `source gave up waiting (${status})`, parseRetryAfter(reply.retryAfter, DEFAULT_RETRY_AFTER_SECONDS.timeout));
  }
  const advised = reply.retryAfter === null ? undefined : parseRetryAfter(reply.retryAfter, 1);
  return failure('upstream_error', `source answered ${status}`, advised);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A 200 body: JSON that matches the envelope once cleaned (upstream-normalisation.ts), or `parse_error`. */
function readBody<S extends z.ZodType>(
  schema: S,
  normalise: (json: unknown) => unknown,
  text: string,
): { ok: true; value: z.infer<S> } | { ok: false; failure: SourceFailure } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, failure: failure('parse_error', `source body is not JSON: ${(err as Error).message}`) };
  }
  const parsed = schema.safeParse(normalise(json));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'body';
    return { ok: false, failure: failure('parse_error', `source body has an unexpected shape at ${where}: ${issue?.message ?? 'invalid'}`) };
  }
  return { ok: true, value: parsed.data };
}

export function createHttpSource(opts: HttpSourceOptions): Source {
  const baseUrl = opts.baseUrl.replace(/\/+$/, '');
  if (!Number.isInteger(opts.timeoutMs) || opts.timeoutMs < 1) throw new RangeError('timeoutMs must be a positive integer');
  // Outcomes are plain JSON data, so a follower gets an independent deep copy.
  const flights = new SingleFlight<unknown>((value) => structuredClone(value));

  async function get(path: string): Promise<Reply | SourceFailure> {
    const signal = AbortSignal.timeout(opts.timeoutMs);
    try {
      const res = await fetch(baseUrl + path, { signal, headers: { accept: 'application/json' } });
      // Reading the body stays under the same deadline.
      const text = await res.text();
      return { status: res.status, retryAfter: res.headers.get('retry-after'), text };
    } catch (err) {
      if (signal.aborted) {
        return failure('timeout', `no answer from the source within ${opts.timeoutMs} ms`, DEFAULT_RETRY_AFTER_SECONDS.timeout);
      }
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      return failure('upstream_error', `source unreachable: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
    }
  }

  function shared<T>(key: string, work: () => Promise<T>): Promise<T> {
    return flights.run(key, work) as Promise<T>;
  }

  async function company(lookup: 'company' | 'company_by_id', path: string): Promise<CompanyResult> {
    const reply = await get(path);
    if ('kind' in reply) return reply;
    if (reply.status !== 200) return outcomeOfStatus(lookup, reply);
    const body = readBody(CompanyEnvelope, normaliseCompanyEnvelope, reply.text);
    if (!body.ok) return body.failure;
    return { kind: 'found', data: body.value.company, aliases: body.value.aliases };
  }

  async function person(path: string): Promise<PersonResult> {
    const reply = await get(path);
    if ('kind' in reply) return reply;
    if (reply.status !== 200) return outcomeOfStatus('person', reply);
    const body = readBody(PersonEnvelope, normalisePersonEnvelope, reply.text);
    if (!body.ok) return body.failure;
    const data = body.value.person;
    return { kind: 'found', data, aliases: { publicIdentifier: data.public_identifier } };
  }

  async function search(query: string, limit: number): Promise<SearchOutcome> {
    const reply = await get(PATHS.search(query, limit));
    if ('kind' in reply) return reply;
    if (reply.status !== 200) {
      const outcome = outcomeOfStatus('search', reply);
      // A search always has an answer, possibly empty: a 404 here is not a definitive one.
      return outcome.kind === 'failure' ? outcome : failure('upstream_error', 'source answered 404 to a search');
    }
    const body = readBody(SearchEnvelope, normaliseSearchEnvelope, reply.text);
    if (!body.ok) return body.failure;
    return { kind: 'found', data: { results: body.value.results }, aliases: null };
  }

  return {
    companyBySlug(slug) {
      const key = slug.trim().toLowerCase();
      return shared(`company-slug:${key}`, () => company('company', PATHS.companyBySlug(key)));
    },
    companyById(id) {
      const key = /^\d{1,19}$/.test(id.trim()) ? BigInt(id.trim()).toString() : id.trim();
      return shared(`company-id:${key}`, () => company('company_by_id', PATHS.companyById(key)));
    },
    companyByDomain(domain) {
      const key = domain.trim().toLowerCase().replace(/\.$/, '');
      return shared(`company-domain:${key}`, () => company('company', PATHS.companyByDomain(key)));
    },
    personById(publicIdentifier) {
      const key = publicIdentifier.trim().toLowerCase();
      return shared(`person-id:${key}`, () => person(PATHS.personById(key)));
    },
    personByName(name) {
      const key = name.normalize('NFKC').trim().replace(/\s+/g, ' ');
      return shared(`person-name:${key.toLowerCase()}`, () => person(PATHS.personByName(key)));
    },
    search(query, limit) {
      // The protocol takes 1..SEARCH_LIMIT_MAX; anything else is clamped rather than sent to fail upstream.
      limit = Math.min(SEARCH_LIMIT_MAX, Math.max(1, Math.trunc(limit) || 1));
      return shared(`search:${limit}:${query}`, () => search(query, limit));
    },
  };
}
