import type { onRequestAsyncHookHandler } from 'fastify';
import { ApiError } from '../../../contracts/errors';
import { MALFORMED_REQUEST } from '../client-errors';

/** HTTP/1.1 requires Host (RFC 9112 §3.2); HTTP/1.0 may omit it. Checked after admission, on every path. */
export const requireHost: onRequestAsyncHookHandler = async (req) => {
  const { httpVersionMajor, httpVersionMinor } = req.raw;
  if (req.headers.host === undefined && (httpVersionMajor > 1 || (httpVersionMajor === 1 && httpVersionMinor >= 1))) {
    throw new ApiError('invalid_request', { message: MALFORMED_REQUEST, details: [{ field: 'Host', issue: 'required', message: 'HTTP/1.1 requests must send Host.' }] });
  }
};
