import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { CSRF_HEADER, SESSION_COOKIE } from '../../../contracts/console';
import { ApiError } from '../../../contracts/errors';
import type { SessionMember } from '../../sessions/sessions';
import { csrfTokenMatches, originAllowed, SECRET_PATTERN } from '../../members/rules';

/** Where a session id is looked up: the member it is signed in as, or null once it has ended. */
export interface SessionLookup {
  session(sessionId: string): Promise<SessionMember | null>;
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** `session`: the signed-in member (`req.signedIn`), or 401. */
export function signedIn(sessions: SessionLookup): onRequestAsyncHookHandler {
  return async (req) => {
    const sessionId = readCookie(req.headers.cookie, SESSION_COOKIE);
    const member = sessionId !== undefined && SECRET_PATTERN.test(sessionId) ? await sessions.session(sessionId) : null;
    if (!member || sessionId === undefined) throw new ApiError('unauthorized', { message: 'Not signed in, or the session has ended.' });
    req.signedIn = { member, sessionId };
  };
}

/** A POST, PATCH or DELETE from a page of another origin is refused: the browser sent it, not our page. */
export const sameOrigin: onRequestAsyncHookHandler = async (req: FastifyRequest) => {
  const origin = req.headers.origin;
  if (!originAllowed(typeof origin === 'string' ? origin : undefined, req.headers.host)) {
    throw new ApiError('forbidden', { message: 'The request comes from a page of another origin.', reason: 'csrf' });
  }
};

/** A signed-in member's change carries the session's CSRF token (after `signedIn`). */
export const csrfToken: onRequestAsyncHookHandler = async (req: FastifyRequest) => {
  const sent = req.headers[CSRF_HEADER.toLowerCase()];
  if (!req.signedIn || !csrfTokenMatches(req.signedIn.sessionId, typeof sent === 'string' ? sent : undefined)) {
    throw new ApiError('forbidden', { message: `The ${CSRF_HEADER} header is missing or not this session's.`, reason: 'csrf' });
  }
};
