import type { onRequestAsyncHookHandler } from 'fastify';
import { ApiError } from '../../../contracts/errors';
import { isAdminAuthorization } from './credentials';

/**
 * `admin`: every Authorization header must be `Bearer <ADMIN_TOKEN>`. Its answers carry keys and
 * balances, so none may be kept by a cache along the way, refusals included.
 */
export function adminToken(token: string): onRequestAsyncHookHandler {
  return async (req, reply) => {
    reply.header('Cache-Control', 'no-store');
    if (!isAdminAuthorization(req.raw.rawHeaders, token)) {
      // RFC 9110 §11.6.1: a 401 names the scheme it wants.
      reply.header('WWW-Authenticate', 'Bearer');
      throw new ApiError('unauthorized', { message: 'The admin token is missing or wrong.' });
    }
  };
}
