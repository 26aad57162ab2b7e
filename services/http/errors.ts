import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Admission } from '../../contracts/endpoints';
import { ApiError, errorBody, type Detail, type ErrorReason, type ReasonOf } from '../../contracts/errors';
import { BALANCE_MAX } from '../../contracts/http';
import { unsupportedContentTypeDetail } from '../../contracts/validation';
import { DatabaseUnavailableError } from '../eventstore/unavailable';
import { UnknownKeyError } from '../keys/revoke-key';
import { BalanceLimitError, UnknownWorkspaceError } from '../ledger/ledger';
import { LimiterUnavailableError } from '../limits/limiter-unavailable';
import { HashingBusyError } from '../members/hashing';
import { MembershipRefusedError, PasswordRuleError, WrongCredentialsError } from '../members/membership';
import { PasswordResetRefusedError } from '../members/password-reset';
import type { ResetRefusal } from '../members/password-reset-rules';
import { PasswordAttemptsThrottledError } from '../sign-in-throttle/password-attempts';
import { HASHING_BUSY_RETRY_AFTER_SECONDS, type PasswordProblem, type Refusal } from '../members/rules';
import { MALFORMED_REQUEST } from './client-errors';
import type { AppDeps } from './deps';
import { docsUrlFor } from './public-url';

/** The `details` of the request problems Fastify finds before a route runs, by its error code. */
const FRAMEWORK_DETAILS: Record<string, Detail> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { field: 'body', issue: 'too_big', message: 'The body is too large.' },
  // An empty or unparsable Content-Type, e.g. `application/json, text/plain`.
  FST_ERR_CTP_INVALID_MEDIA_TYPE: unsupportedContentTypeDetail(),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { field: 'Content-Length', issue: 'invalid_type', message: 'The body is not as long as Content-Length says.' },
  FST_ERR_BAD_URL: { field: 'path', issue: 'invalid_type', message: 'The path is not valid %-encoded UTF-8.' },
  FST_ERR_MAX_PARAM_LENGTH: { field: 'path', issue: 'too_big', message: 'A segment of the path is too long.' },
};

const REFUSALS: Record<Refusal, () => ApiError> = {
  not_owner: () => new ApiError('forbidden', { message: 'Only an owner of the workspace may manage its members.', reason: 'not_owner' }),
  last_owner: () => new ApiError('invalid_request', { message: 'The workspace must keep at least one owner.', reason: 'last_owner' }),
  already_member: () => new ApiError('invalid_request', { message: 'This email is already a member of the workspace.', reason: 'already_member' }),
  no_member: () => new ApiError('not_found', { message: 'No such member in this workspace.', reason: 'no_member' }),
  invitation_unknown: () => new ApiError('not_found', { message: 'This invitation link is not valid.', reason: 'no_invitation' }),
  invitation_used: () => new ApiError('invalid_request', { message: 'This invitation link has already been used.', reason: 'invitation_used' }),
  invitation_expired: () => new ApiError('invalid_request', { message: 'This invitation link has expired. Ask for a new one.', reason: 'invitation_expired' }),
  invitation_cancelled: () => new ApiError('invalid_request', { message: 'This invitation was cancelled.', reason: 'invitation_cancelled' }),
};

const RESET_REFUSALS: Record<ResetRefusal, () => ApiError> = {
  reset_unknown: () => new ApiError('not_found', { message: 'This password reset link is not valid.', reason: 'no_password_reset' }),
  reset_used: () => new ApiError('invalid_request', { message: 'This password reset link has already been used. Ask for a new one.', reason: 'password_reset_used' }),
  reset_expired: () => new ApiError('invalid_request', { message: 'This password reset link has expired. Ask for a new one.', reason: 'password_reset_expired' }),
};

const THROTTLED: Record<'sign_in' | 'password', { what: string; slowed: ReasonOf<'rate_limited'>; locked: ReasonOf<'rate_limited'> }> = {
  sign_in: { what: 'failed sign-ins', slowed: 'sign_in_slowed', locked: 'sign_in_locked' },
  password: { what: 'wrong current passwords', slowed: 'password_slowed', locked: 'password_locked' },
};

const PASSWORD_ISSUES: Record<PasswordProblem['kind'], 'too_small' | 'too_big' | 'invalid_type'> = { too_short: 'too_small', too_long: 'too_big', blank: 'too_small', common: 'invalid_type' };

/** The console's refusals: membership rules, reset links, credentials, password checks throttled or busy. */
function membershipError(error: unknown): ApiError | undefined {
  if (error instanceof MembershipRefusedError) return REFUSALS[error.refusal]();
  if (error instanceof PasswordResetRefusedError) return RESET_REFUSALS[error.refusal]();
  if (error instanceof WrongCredentialsError) {
    return new ApiError('unauthorized', { message: error.message === 'wrong email or password' ? 'The workspace, the email or the password is wrong.' : 'The current password is wrong.' });
  }
  if (error instanceof PasswordAttemptsThrottledError) {
    const t = THROTTLED[error.check];
    return new ApiError('rate_limited', {
      message: error.locked ? `Too many ${t.what}: locked for a while.` : `Too many ${t.what}: wait before the next attempt.`,
      retryAfterSeconds: error.retryAfterSeconds,
      reason: error.locked ? t.locked : t.slowed,
    });
  }
  if (error instanceof HashingBusyError) {
    const reason: ErrorReason = 'password_checks_busy';
    return new ApiError('rate_limited', { message: 'Too many password checks at once, from this address or in all. Retry after Retry-After.', retryAfterSeconds: HASHING_BUSY_RETRY_AFTER_SECONDS, reason });
  }
  if (error instanceof PasswordRuleError) {
    const reason: ErrorReason | undefined = error.problem.kind === 'common' ? 'common_password' : undefined;
    return new ApiError('invalid_request', { details: [{ field: error.field, issue: PASSWORD_ISSUES[error.problem.kind], message: error.message }], ...(reason ? { reason } : {}) });
  }
  return undefined;
}

/**
 * The admin API and the console name what they cannot find (a session's workspace sees its own
 * keys only, so another's is "no such key" too); elsewhere these would be our own bug.
 */
const NAMES_WHAT_IS_MISSING: Record<Admission, boolean> = { admin: true, session: true, public: false, apiKey: false };

/** Every error as the API answers it: by its own code, or mapped to one of the catalogue's. */
export function toApiError(error: unknown, admission?: Admission): ApiError {
  if (error instanceof ApiError) return error;
  const membership = membershipError(error);
  if (membership) return membership;
  if (admission !== undefined && NAMES_WHAT_IS_MISSING[admission]) {
    if (error instanceof UnknownKeyError) return new ApiError('not_found', { message: admission === 'session' ? 'No such key in this workspace.' : error.message, reason: 'no_key' });
    if (error instanceof UnknownWorkspaceError) return new ApiError('not_found', { message: error.message, reason: 'no_workspace' });
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
  // Throttled and turned-away password checks: a flood or a guessing run shows in the log.
  else if (error instanceof PasswordAttemptsThrottledError || error instanceof HashingBusyError) {
    req.log.warn({ reason: apiError.reason, retry_after_seconds: apiError.retryAfterSeconds }, 'console password check refused');
  }
  else if (apiError.code === 'service_unavailable') req.log.warn({ err: error }, 'dependency unavailable');
  const rendered = await renderError(deps, req, apiError);
  return reply.status(rendered.status).headers(rendered.headers).send(rendered.body);
}
