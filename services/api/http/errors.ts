import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, errorBody, type Detail } from '../../../contracts/errors';
import { BALANCE_MAX } from '../../../contracts/http';
import { unsupportedContentTypeDetail } from '../../../contracts/validation';
import { DatabaseUnavailableError } from '../../eventstore/unavailable';
import { UnknownKeyError } from '../../keys/revoke-key';
import { BalanceLimitError, UnknownWorkspaceError } from '../../ledger/ledger';
import { LimiterUnavailableError } from '../../limits/limiter-unavailable';
import { MALFORMED_REQUEST } from '../client-errors';
import type { AppDeps, RequestArea } from '../deps';
import { docsUrlFor } from '../public-url';

/** The `details` of the request problems Fastify finds before a route runs, by its error code. */
const FRAMEWORK_DETAILS: Record<string, Detail> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { field: 'body', issue: 'too_big', message: 'The body is too large.' },
  // An empty or unparsable Content-Type, e.g. `application/json, text/plain`.
  FST_ERR_CTP_INVALID_MEDIA_TYPE: unsupportedContentTypeDetail(),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { field: 'Content-Length', issue: 'invalid_type', message: 'The body is not as long as Content-Length says.' },
  FST_ERR_BAD_URL: { field: 'path', issue: 'invalid_type', message: 'The path is not valid %-encoded UTF-8.' },
  FST_ERR_MAX_PARAM_LENGTH: { field: 'path', issue: 'too_big', message: 'A segment of the path is too long.' },
};

/** Every error as the API answers it: by its own code, or mapped to one of the catalogue's. */
export function toApiError(error: unknown, area: RequestArea = 'unknown'): ApiError {
  if (error instanceof ApiError) return error;
  // The admin API names what it cannot find; elsewhere these would be our own bug.
  if (area === 'admin') {
    if (error instanceof UnknownWorkspaceError || error instanceof UnknownKeyError) {
      return new ApiError('not_found', { message: error.message, reason: error instanceof UnknownKeyError ? 'no_key' : 'no_workspace' });
    }
    if (error instanceof BalanceLimitError) {
      const message = `\`amount\` would take the balance from ${error.balance} past the most a balance may hold, ${BALANCE_MAX}.`;
      return new ApiError('invalid_request', { details: [{ field: 'amount', issue: 'too_big', message }] });
    }
  }
  // Shared limits and revocation marks out of reach: no in-process fallback (it would let every
  // instance grant a key's full rate, and could serve a revoked key), so a fast retryable 503.
  if (error instanceof LimiterUnavailableError) return new ApiError('service_unavailable', { cause: error });
  const e = error as { statusCode?: number; code?: string };
  const detail = e.code === undefined ? undefined : FRAMEWORK_DETAILS[e.code];
  if (detail !== undefined) return new ApiError('invalid_request', { message: detail.field === 'body' ? undefined : MALFORMED_REQUEST, details: [detail] });
  // Any other problem of the request itself (a body stream cut by a framing error...): the
  // framework's wording is not ours to pass on.
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new ApiError('invalid_request', {
      message: MALFORMED_REQUEST,
      details: [{ field: 'request', issue: 'invalid_type', message: 'The request could not be read.' }],
      cause: error,
    });
  }
  // The caller did nothing wrong: retry later (the catalogue's Retry-After); nothing stays charged.
  if (error instanceof DatabaseUnavailableError) return new ApiError('service_unavailable', { cause: error });
  return new ApiError('internal_error', { cause: error });
}

export interface RenderedError {
  status: number;
  headers: Record<string, string>;
  body: { error: ReturnType<typeof errorBody>; meta: { request_id: string; credits_charged: number; credits_remaining: number | null } };
}

/**
 * The one rendering of every error: status, `Retry-After`, the credit headers, envelope with billing meta. The
 * billing is the error's own when the call reached the ledger; otherwise nothing was charged,
 * and the balance of the caller's workspace is read when a key names one (docs/api.md
 * "Errors": `credits_remaining` is null only where no workspace is known).
 */
export async function renderError(deps: Pick<AppDeps, 'config' | 'readModels'>, req: FastifyRequest, apiError: ApiError): Promise<RenderedError> {
  req.errorAnswer = { code: apiError.code, creditsCharged: apiError.billing?.charged ?? 0 };
  const headers: Record<string, string> = {};
  if (apiError.retryAfterSeconds !== undefined) headers['retry-after'] = String(apiError.retryAfterSeconds);
  let remaining: number | null = apiError.billing?.balance ?? null;
  if (remaining === null && req.apiKey) {
    // The answer goes out without the balance rather than not at all (the database may be away).
    remaining = await deps.readModels.balance(req.apiKey.workspaceId).catch((err: unknown) => {
      req.log.warn({ err }, 'balance unreadable for the error answer');
      return null;
    });
  }
  const charged = apiError.billing?.charged ?? 0;
  // The credit headers say what meta says, on every answer that has a workspace (Billing rule 3:
  // a refunded failure shows X-Credits-Charged: 0).
  if (apiError.billing !== undefined || req.apiKey) {
    headers['x-credits-charged'] = String(charged);
    if (remaining !== null) headers['x-credits-remaining'] = String(remaining);
  }
  return {
    status: apiError.status,
    headers,
    body: {
      error: errorBody(apiError, docsUrlFor(deps.config, req)),
      meta: { request_id: req.id, credits_charged: charged, credits_remaining: remaining },
    },
  };
}

/** Logs what is ours to look at, then answers in the envelope. */
export async function sendError(deps: Pick<AppDeps, 'config' | 'readModels'>, req: FastifyRequest, reply: FastifyReply, error: unknown, apiError: ApiError) {
  if (apiError.code === 'internal_error') req.log.error({ err: error }, 'internal error');
  else if (apiError.code === 'service_unavailable') req.log.warn({ err: error }, 'dependency unavailable');
  const rendered = await renderError(deps, req, apiError);
  return reply.status(rendered.status).headers(rendered.headers).send(rendered.body);
}
