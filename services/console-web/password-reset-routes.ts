import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodType } from 'zod';
import { PasswordResetAskRequest, PasswordResetCompleteRequest } from '../../contracts/console';
import { ApiError } from '../../contracts/errors';
import type { AppDeps } from '../api/deps';
import { publicBaseUrl } from '../api/public-url';
import { passwordResetEmail } from '../email/messages';
import { PasswordResetRefusedError, type PasswordResets } from '../members/password-reset';
import { PASSWORD_RESET_ASKS_PER_MINUTE, type ResetRefusal } from '../members/password-reset-rules';
import { passwordResetLink } from './console-links';

const REFUSALS: Record<ResetRefusal, () => ApiError> = {
  reset_unknown: () => new ApiError('not_found', { message: 'This password reset link is not valid.', reason: 'no_password_reset' }),
  reset_used: () => new ApiError('invalid_request', { message: 'This password reset link has already been used. Ask for a new one.', reason: 'password_reset_used' }),
  reset_expired: () => new ApiError('invalid_request', { message: 'This password reset link has expired. Ask for a new one.', reason: 'password_reset_expired' }),
};

/**
 * The console's password reset, open (no session): ask for a link by email, then set a new
 * password with it. Registered inside the console's scope (its bucket and error handler).
 */
export function registerPasswordResetRoutes(
  scope: FastifyInstance,
  deps: AppDeps,
  resets: PasswordResets,
  helpers: { config: { area: 'console' }; refuseForeignOrigin(req: FastifyRequest): void; jsonBody<T>(req: FastifyRequest, schema: ZodType<T>): T },
) {
  const { config } = helpers;

  scope.post('/console/v1/password-reset', { config }, async (req, reply) => {
    helpers.refuseForeignOrigin(req);
    const body = helpers.jsonBody(req, PasswordResetAskRequest);
    // Per client address, members or not: asking for many addresses finds nothing and costs a bucket.
    const decision = await deps.rateLimiter.take(`password_reset:${req.ip}`, PASSWORD_RESET_ASKS_PER_MINUTE);
    if (!decision.allowed) throw new ApiError('rate_limited', { retryAfterSeconds: decision.retryAfterSeconds, message: 'Too many password reset asks from this address: wait before the next one.' });
    const baseUrl = publicBaseUrl(deps.config, req);
    const workspaceName = (await deps.workspaces.get(body.workspace_id))?.name ?? body.workspace_id;
    await resets.request(body.workspace_id, body.email, (m) =>
      passwordResetEmail({ to: m.to, workspaceName, link: passwordResetLink(baseUrl, m.token, m.workspaceId), expiresAt: m.expiresAt.toISOString() }),
    );
    req.log.info({ workspace_id: body.workspace_id }, 'password reset asked');
    return reply.status(202).send();
  });

  scope.post('/console/v1/password-reset/complete', { config }, async (req, reply) => {
    helpers.refuseForeignOrigin(req);
    const body = helpers.jsonBody(req, PasswordResetCompleteRequest);
    try {
      const done = await resets.complete(body.token, body.new_password, req.ip);
      req.log.info({ workspace_id: done.workspaceId }, 'password reset completed; every session of the member ended');
    } catch (err) {
      if (err instanceof PasswordResetRefusedError) throw REFUSALS[err.refusal]();
      throw err;
    }
    return reply.status(204).send();
  });
}
