import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../contracts/errors';
import { passwordResetEmail } from '../email/messages';
import type { AppDeps } from '../http/deps';
import { publicBaseUrl } from '../http/public-url';
import { route } from '../http/route';
import type { PasswordResets } from '../members/password-reset';
import { PASSWORD_RESET_ASKS_PER_MINUTE } from '../members/password-reset-rules';
import { passwordResetLink } from './console-links';

/**
 * The console's password reset, open (no session; same origin, the console's bucket: the rows'
 * policies): ask for a link by email, then set a new password with it.
 */
export function registerPasswordResetRoutes(scope: FastifyInstance, deps: AppDeps, resets: PasswordResets) {
  route(scope, 'consoleAskPasswordReset', async ({ req, reply, body }) => {
    // Per client address, members or not: asking for many addresses finds nothing and costs a bucket.
    const decision = await deps.rateLimiter.take(`password_reset:${req.ip}`, PASSWORD_RESET_ASKS_PER_MINUTE);
    if (!decision.allowed) throw new ApiError('rate_limited', { retryAfterSeconds: decision.retryAfterSeconds, message: 'Too many password reset asks from this address: wait before the next one.' });
    const baseUrl = publicBaseUrl(deps.config, req);
    const workspaceName = (await deps.workspaces.get(body.workspace_id))?.name ?? body.workspace_id;
    await resets.request(body.workspace_id, body.email, (m) =>
      passwordResetEmail({ to: m.to, workspaceName, link: passwordResetLink(baseUrl, m.token, m.workspaceId), expiresAt: m.expiresAt.toISOString() }),
    );
    req.log.info({ workspace_id: body.workspace_id }, 'password reset asked');
    return reply.send();
  });

  route(scope, 'consoleCompletePasswordReset', async ({ req, reply, body }) => {
    const done = await resets.complete(body.token, body.new_password, req.ip);
    req.log.info({ workspace_id: done.workspaceId }, 'password reset completed; every session of the member ended');
    return reply.send();
  });
}
