import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { z } from 'zod';
import {
  AcceptInvitationRequest,
  ConsoleAlertSettings,
  ConsoleKeyCreateRequest,
  ConsoleKeyRenameRequest,
  ConsoleLedgerCsvQuery,
  ConsoleLedgerQuery,
  ConsoleUsageQuery,
  CSRF_HEADER,
  InvitationCreateRequest,
  InvitationLookupQuery,
  MemberPatchRequest,
  PasswordChangeRequest,
  SESSION_COOKIE,
  SignInRequest,
} from '../../contracts/console';
import { ANONYMOUS_RATE_LIMITED, ApiError, type ErrorReason, type ReasonOf } from '../../contracts/errors';
import { AdminPathParams, StatementQuery } from '../../contracts/http';
import { parseValue } from '../../contracts/validation';
import type { AppDeps } from '../api/deps';
import { setRateLimitHeaders, setUnreadableBucketHeaders } from '../api/http/rate-limit-headers';
import { readJson, validated } from '../api/http/request-body';
import { DEPS_PLUGIN } from '../api/plugins/deps';
import { publicBaseUrl } from '../api/public-url';
import { statement } from '../finance/queries';
import { forwardPeriod, statementCsv, statementCsvFileName } from '../finance/statement';
import { UnknownKeyError } from '../keys/revoke-key';
import { UnknownWorkspaceError } from '../ledger/ledger';
import { LimiterUnavailableError } from '../limits/limiter-unavailable';
import { HashingBusyError } from '../members/hashing';
import { MembershipRefusedError, PasswordRuleError, WrongCredentialsError } from '../members/membership';
import type { SessionMember } from '../sessions/sessions';
import { PasswordAttemptsThrottledError } from '../sign-in-throttle/password-attempts';
import { toCsv } from '../common/csv';
import { addDays, overviewFrom, overviewOf, utcDay } from '../members/overview';
import {
  csrfTokenMatches,
  csrfTokenOf,
  HASHING_BUSY_RETRY_AFTER_SECONDS,
  originAllowed,
  SECRET_PATTERN,
  type Actor,
  type PasswordProblem,
  type Refusal,
} from '../members/rules';
import { SESSION_MAX_MS } from '../sessions/rules';
import { consoleAccounts } from './accounts';
import { CONSOLE_PAGES, renderPage, type ConsolePage } from './pages';
import { invitationLink } from './console-links';
import { registerPasswordResetRoutes } from './password-reset-routes';
import { BalanceThresholds } from '../alerts/balance-alerts';
import { lastPaymentRefusal } from '../alerts/payment-refusals';
import type { SqlExecutor } from '../eventstore/sql';
import { enqueueEmail } from '../email/email-outbox';
import { invitationEmail } from '../email/messages';

/**
 * The workspace console: pages and assets under `/console`, its JSON API under `/console/v1`
 * (session cookie; every POST/PATCH/DELETE also needs the session's CSRF token and a same-origin
 * `Origin`), and the operator's invitation endpoint under `/admin/v1`. No API key is read here.
 */
/** Console pages and calls per client address and minute. */
export const CONSOLE_RATE_PER_MINUTE = 600;

const jsonBody = <T>(req: FastifyRequest, schema: z.ZodType<T>): T => validated(schema, readJson(req, schema));

export const consoleRoutes = fp(async (app) => registerConsole(app, app.deps), { name: 'routes-console', dependencies: [DEPS_PLUGIN] });

function registerConsole(app: FastifyInstance, deps: AppDeps) {
  const { membership, sessions, passwordResets } = consoleAccounts(deps.store);
  const { keys, readModels } = deps;
  const thresholds = new BalanceThresholds(deps.store);
  const assets = loadAssets();
  const config = { area: 'console' as const };

  app.register(async (scope) => {
    scope.addHook('onRequest', async (req, reply) => {
      // Balances, keys at creation, members: no cache along the way may keep any of it.
      reply.header('Cache-Control', 'no-store');
      reply.header('Referrer-Policy', 'no-referrer');
      if (req.routeOptions.config?.area !== 'console') return;
      // A bucket of its own per client address: a person clicking through pages (each a few
      // calls) must not drain, nor be drained by, the Meta area's 120/min. Passwords have their
      // own, much stricter, throttle.
      const decision = await deps.rateLimiter.take(`console:${req.ip}`, CONSOLE_RATE_PER_MINUTE).catch((err: unknown) => {
        // Unreadable (Redis out): 503, with the headers every console answer carries (docs/api.md).
        if (err instanceof LimiterUnavailableError) setUnreadableBucketHeaders(reply, 'console', CONSOLE_RATE_PER_MINUTE);
        throw err;
      });
      setRateLimitHeaders(reply, 'console', decision);
      if (!decision.allowed) throw new ApiError('rate_limited', { retryAfterSeconds: decision.retryAfterSeconds, message: ANONYMOUS_RATE_LIMITED });
    });
    scope.setErrorHandler((error, req) => {
      const answer = toConsoleApiError(error);
      // Throttled and turned-away password checks: a flood or a guessing run shows in the log.
      if ((error instanceof PasswordAttemptsThrottledError || error instanceof HashingBusyError) && answer instanceof ApiError) {
        req.log.warn({ reason: answer.reason, retry_after_seconds: answer.retryAfterSeconds }, 'console password check refused');
      }
      throw answer;
    });

    // ---------- pages and assets ----------

    for (const page of CONSOLE_PAGES) {
      const path = page === 'signin' ? '/console' : `/console/${page}`;
      scope.get(path, { config }, async (_req, reply) => sendPage(reply, page, assets));
    }
    scope.get('/console/', { config }, async (_req, reply) => reply.redirect('/console', 302));
    scope.get('/console/assets/:name', { config }, async (req, reply) => {
      const asset = assets.byName.get((req.params as { name: string }).name);
      if (!asset) throw new ApiError('route_not_found', { message: 'No endpoint exists at this method and path.' });
      // Versioned URLs (`?v=<content hash>`, as the pages link them) never change: cached for good.
      const versioned = (req.query as { v?: string }).v === asset.version;
      reply.header('Cache-Control', versioned ? 'public, max-age=31536000, immutable' : 'no-cache');
      return reply.type(asset.type).send(asset.body);
    });

    // ---------- sign-in, invitations, session ----------

    scope.post('/console/v1/session', { config }, async (req, reply) => {
      refuseForeignOrigin(req);
      const body = jsonBody(req, SignInRequest);
      const signedIn = await sessions.signIn(body.workspace_id, body.email, body.password, req.ip);
      return startSession(req, reply, signedIn.sessionId, signedIn.member, 200);
    });

    scope.get('/console/v1/session', { config }, async (req) => {
      const { member, sessionId } = await signedIn(req);
      return sessionAnswer(member, sessionId);
    });

    scope.delete('/console/v1/session', { config }, async (req, reply) => {
      const { member } = await changing(req);
      await sessions.signOut(member);
      clearCookie(req, reply);
      return reply.status(204).send();
    });

    scope.get('/console/v1/invitations/preview', { config }, async (req) => {
      const q = query(req, InvitationLookupQuery);
      return membership.describeInvitation(q.token);
    });

    scope.post('/console/v1/invitations/accept', { config }, async (req, reply) => {
      refuseForeignOrigin(req);
      const body = jsonBody(req, AcceptInvitationRequest);
      const accepted = await membership.acceptInvitation(body.token, body.password, req.ip);
      return startSession(req, reply, accepted.sessionId, accepted.member, 200);
    });

    scope.post('/console/v1/password', { config }, async (req, reply) => {
      const { member } = await changing(req);
      const body = jsonBody(req, PasswordChangeRequest);
      const sessionId = await membership.changePassword(member, body.current_password, body.new_password, req.ip);
      return startSession(req, reply, sessionId, member, 200);
    });

    registerPasswordResetRoutes(scope, deps, passwordResets, { config, refuseForeignOrigin, jsonBody });

    // ---------- numbers: the admin API's own queries ----------

    scope.get('/console/v1/overview', { config }, async (req) => {
      const { member } = await signedIn(req);
      const today = utcDay(new Date());
      const ws = await readModels.workspace(member.workspaceId);
      if (!ws) throw new UnknownWorkspaceError(member.workspaceId);
      const rows = await readModels.usage(member.workspaceId, { from: overviewFrom(today), to: today });
      const overview = overviewOf(rows, today);
      return {
        balance: Number(ws.balance),
        ...overview,
        recent_errors: await readModels.recentErrors(member.workspaceId),
        last_insufficient_credits: await lastPaymentRefusal(deps.store.sql, member.workspaceId),
        low_balance_threshold: await thresholds.get(member.workspaceId),
      };
    });

    scope.patch('/console/v1/alerts', { config }, async (req) => {
      const { member } = await changing(req);
      requireOwner(member);
      const body = jsonBody(req, ConsoleAlertSettings);
      await thresholds.set(member.workspaceId, body.low_balance_threshold, member.memberId);
      return { low_balance_threshold: await thresholds.get(member.workspaceId) };
    });

    scope.get('/console/v1/keys', { config }, async (req) => {
      const { member } = await signedIn(req);
      const [listed, creators] = await Promise.all([keys.list(member.workspaceId), readModels.keyCreators(member.workspaceId)]);
      return { data: listed.map((k) => ({ ...k, created_by: creators.get(k.id) ?? null })) };
    });

    scope.post('/console/v1/keys', { config }, async (req, reply) => {
      const { member } = await changing(req);
      const body = jsonBody(req, ConsoleKeyCreateRequest);
      return reply.status(201).send({ ...(await keys.create(member.workspaceId, { name: body.name, createdBy: member.memberId })), created_by: member.email });
    });

    scope.patch('/console/v1/keys/:id', { config }, async (req) => {
      const { member } = await changing(req);
      const id = pathId(req);
      const body = jsonBody(req, ConsoleKeyRenameRequest);
      await keys.rename(member.workspaceId, id, body.name, member.memberId);
      const creators = await readModels.keyCreators(member.workspaceId);
      const key = (await keys.list(member.workspaceId)).find((k) => k.id === id)!;
      return { ...key, created_by: creators.get(id) ?? null };
    });

    scope.post('/console/v1/keys/:id/revoke', { config }, async (req) => {
      const { member } = await changing(req);
      return keys.revoke(pathId(req), member.workspaceId);
    });

    scope.get('/console/v1/usage', { config }, async (req) => {
      const { member } = await signedIn(req);
      const q = query(req, ConsoleUsageQuery);
      if (q.key_id !== undefined) await keys.requireKeyOf(member.workspaceId, q.key_id);
      const rows = await readModels.usage(member.workspaceId, { keyId: q.key_id, from: q.from, to: q.to });
      return { data: q.operation === undefined ? rows : rows.filter((r) => r.operation === q.operation) };
    });

    scope.get('/console/v1/ledger', { config }, async (req) => {
      const { member } = await signedIn(req);
      const q = query(req, ConsoleLedgerQuery);
      return readModels.ledgerEntries(member.workspaceId, { requestId: q.request_id, after: q.after, limit: q.limit });
    });

    scope.get('/console/v1/ledger.csv', { config }, async (req, reply) => {
      const { member } = await signedIn(req);
      const q = query(req, ConsoleLedgerCsvQuery);
      if (q.to < q.from) throw new ApiError('invalid_request', { details: [{ field: 'to', issue: 'too_small', message: '`to` is before `from`.' }] });
      const entries = await readModels.ledgerBetween(member.workspaceId, new Date(`${q.from}T00:00:00Z`), new Date(`${addDays(q.to, 1)}T00:00:00Z`));
      const csv = toCsv(
        ['position', 'recorded_at', 'type', 'request_id', 'key_id', 'credits', 'balance_after'],
        entries.map((e) => [e.position, e.recorded_at, e.type, e.request_id, e.key_id, e.credits, e.balance_after]),
      );
      reply.header('Content-Disposition', `attachment; filename="ledger-${member.workspaceId}-${q.from}-${q.to}.csv"`);
      return reply.type('text/csv; charset=utf-8').send(csv);
    });

    // The admin API's statement (the one rule of services/finance/statement.ts), of the session's workspace only.
    scope.get('/console/v1/statement', { config }, async (req, reply) => {
      const { member } = await signedIn(req);
      const q = query(req, StatementQuery);
      const period = forwardPeriod(q);
      const { statement: totals, lines } = await statement(deps.store.sql, member.workspaceId, period.from, period.to);
      if (q.format === 'json') return totals;
      reply.header('Content-Disposition', `attachment; filename="${statementCsvFileName(member.workspaceId, period)}"`);
      return reply.type('text/csv; charset=utf-8').send(statementCsv(lines));
    });

    // ---------- members (owners) ----------

    scope.get('/console/v1/members', { config }, async (req) => {
      const { member } = await signedIn(req);
      requireOwner(member);
      return readModels.listMembers(member.workspaceId);
    });

    scope.post('/console/v1/invitations', { config }, async (req, reply) => {
      const { member } = await changing(req);
      requireOwner(member);
      const body = jsonBody(req, InvitationCreateRequest);
      const invitation = await membership.invite(member.workspaceId, actorOf(member), body, await invitationMailer(req, member.workspaceId, body.role));
      // The link went to the invited address only: the inviter never holds it.
      const { link: _sentByEmail, ...answer } = invitationAnswer(req, member.workspaceId, invitation);
      return reply.status(201).send(answer);
    });

    scope.delete('/console/v1/invitations/:id', { config }, async (req, reply) => {
      const { member } = await changing(req);
      await membership.cancelInvitation(member.workspaceId, actorOf(member), pathId(req));
      return reply.status(204).send();
    });

    scope.patch('/console/v1/members/:id', { config }, async (req, reply) => {
      const { member } = await changing(req);
      const body = jsonBody(req, MemberPatchRequest);
      await membership.changeRole(member.workspaceId, actorOf(member), pathId(req), body.role);
      return reply.status(204).send();
    });

    scope.delete('/console/v1/members/:id', { config }, async (req, reply) => {
      const { member } = await changing(req);
      await membership.remove(member.workspaceId, actorOf(member), pathId(req));
      return reply.status(204).send();
    });

    // ---------- the operator invites the first member ----------

    scope.post('/admin/v1/workspaces/:id/invitations', { config: { area: 'admin' as const } }, async (req, reply) => {
      const body = jsonBody(req, InvitationCreateRequest);
      const workspaceId = pathId(req);
      // Emailed to the invited address; the operator (who holds the admin token) gets the link too,
      // to bootstrap a workspace whatever the mail setup (docs/api.md, "Invitations").
      const invitation = await membership.invite(workspaceId, { kind: 'operator' }, body, await invitationMailer(req, workspaceId, body.role));
      return reply.status(201).send(invitationAnswer(req, workspaceId, invitation));
    });
  });

  function invitationAnswer(req: FastifyRequest, workspaceId: string, inv: { invitation_id: string; email: string; role: string; expires_at: string; token: string }) {
    const link = invitationLink(publicBaseUrl(deps.config, req), inv.token, workspaceId);
    return { invitation_id: inv.invitation_id, email: inv.email, role: inv.role, expires_at: inv.expires_at, link };
  }

  /** Queues the invitation's email in the invitation's transaction (services/email). */
  async function invitationMailer(req: FastifyRequest, workspaceId: string, role: string) {
    const workspaceName = (await deps.workspaces.get(workspaceId))?.name ?? workspaceId;
    const baseUrl = publicBaseUrl(deps.config, req);
    return async (tx: SqlExecutor, inv: { email: string; token: string; expiresAt: Date }) => {
      await enqueueEmail(tx, invitationEmail({ to: inv.email, workspaceName, role, link: invitationLink(baseUrl, inv.token, workspaceId), expiresAt: inv.expiresAt.toISOString() }));
    };
  }

  /** The signed-in member, or 401. */
  async function signedIn(req: FastifyRequest): Promise<{ member: SessionMember; sessionId: string }> {
    const sessionId = readCookie(req.headers.cookie, SESSION_COOKIE);
    const member = sessionId !== undefined && SECRET_PATTERN.test(sessionId) ? await sessions.session(sessionId) : null;
    if (!member) throw new ApiError('unauthorized', { message: 'Not signed in, or the session has ended.' });
    return { member, sessionId: sessionId! };
  }

  /** A signed-in member's state-changing call: same origin, with the session's CSRF token. */
  async function changing(req: FastifyRequest) {
    const session = await signedIn(req);
    refuseForeignOrigin(req);
    const sent = req.headers[CSRF_HEADER.toLowerCase()];
    if (!csrfTokenMatches(session.sessionId, typeof sent === 'string' ? sent : undefined)) {
      throw new ApiError('forbidden', { message: `The ${CSRF_HEADER} header is missing or not this session's.`, reason: 'csrf' });
    }
    return session;
  }

  async function sessionAnswer(member: SessionMember, sessionId: string) {
    const ws = await readModels.workspace(member.workspaceId);
    return {
      member: { id: member.memberId, email: member.email, role: member.role },
      workspace: { id: member.workspaceId, name: ws?.name ?? member.workspaceId },
      csrf_token: csrfTokenOf(sessionId),
    };
  }

  async function startSession(req: FastifyRequest, reply: FastifyReply, sessionId: string, member: SessionMember, status: number) {
    const secure = req.protocol === 'https' ? '; Secure' : '';
    reply.header('Set-Cookie', `${SESSION_COOKIE}=${sessionId}; Path=/console; HttpOnly; SameSite=Lax; Max-Age=${SESSION_MAX_MS / 1000}${secure}`);
    return reply.status(status).send(await sessionAnswer(member, sessionId));
  }
}

function clearCookie(req: FastifyRequest, reply: FastifyReply) {
  const secure = req.protocol === 'https' ? '; Secure' : '';
  reply.header('Set-Cookie', `${SESSION_COOKIE}=; Path=/console; HttpOnly; SameSite=Lax; Max-Age=0${secure}`);
}

function refuseForeignOrigin(req: FastifyRequest) {
  const origin = req.headers.origin;
  if (!originAllowed(typeof origin === 'string' ? origin : undefined, req.headers.host)) {
    throw new ApiError('forbidden', { message: 'The request comes from a page of another origin.', reason: 'csrf' });
  }
}

const requireOwner = (member: SessionMember) => {
  if (member.role !== 'owner') throw new ApiError('forbidden', { message: 'Only an owner of the workspace may manage its members.', reason: 'not_owner' });
};

const actorOf = (member: SessionMember): Actor => ({ kind: 'member', memberId: member.memberId, role: member.role });

export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function pathId(req: FastifyRequest): string {
  const parsed = parseValue(AdminPathParams, { ...(req.params as object) });
  if (!parsed.ok) throw new ApiError('invalid_request', { message: 'The id in the path is not a valid id.', details: parsed.details });
  return parsed.value.id;
}

function query<T>(req: FastifyRequest, schema: z.ZodType<T>): T {
  const parsed = parseValue(schema, { ...(req.query as object) });
  if (!parsed.ok) throw new ApiError('invalid_request', { message: 'The query string does not match the schema.', details: parsed.details });
  return parsed.value;
}

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

const THROTTLED: Record<'sign_in' | 'password', { what: string; slowed: ReasonOf<'rate_limited'>; locked: ReasonOf<'rate_limited'> }> = {
  sign_in: { what: 'failed sign-ins', slowed: 'sign_in_slowed', locked: 'sign_in_locked' },
  password: { what: 'wrong current passwords', slowed: 'password_slowed', locked: 'password_locked' },
};

const PASSWORD_ISSUES: Record<PasswordProblem['kind'], 'too_small' | 'too_big' | 'invalid_type'> = { too_short: 'too_small', too_long: 'too_big', blank: 'too_small', common: 'invalid_type' };

function toConsoleApiError(error: unknown): unknown {
  if (error instanceof MembershipRefusedError) return REFUSALS[error.refusal]();
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
  if (error instanceof UnknownKeyError) return new ApiError('not_found', { message: 'No such key in this workspace.', reason: 'no_key' });
  if (error instanceof UnknownWorkspaceError) return new ApiError('not_found', { message: error.message, reason: 'no_workspace' });
  return error;
}

// ---------- pages ----------

interface Asset {
  body: Buffer;
  type: string;
  version: string;
}

function loadAssets() {
  const byName = new Map<string, Asset>();
  for (const [name, type] of [
    ['console.js', 'text/javascript; charset=utf-8'],
    ['console.css', 'text/css; charset=utf-8'],
  ] as const) {
    const body = readFileSync(new URL(`./assets/${name}`, import.meta.url));
    byName.set(name, { body, type, version: createHash('sha256').update(body).digest('hex').slice(0, 12) });
  }
  return { byName, js: `/console/assets/console.js?v=${byName.get('console.js')!.version}`, css: `/console/assets/console.css?v=${byName.get('console.css')!.version}` };
}

/** Loads only this origin's script and style; no inline code, no framing. */
const PAGE_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

function sendPage(reply: FastifyReply, page: ConsolePage, assets: { js: string; css: string }) {
  reply.header('Content-Security-Policy', PAGE_CSP);
  reply.header('X-Frame-Options', 'DENY');
  return reply.type('text/html; charset=utf-8').send(renderPage(page, assets));
}
