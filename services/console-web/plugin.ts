import { existsSync, readFileSync } from 'node:fs';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { CONSOLE_LEDGER_CSV_COLUMNS, SESSION_COOKIE } from '../../contracts/console';
import type { EndpointId } from '../../contracts/endpoints';
import { ApiError } from '../../contracts/errors';
import { toCsv } from '../common/csv';
import { modesShown } from '../common/key-mode';
import { statement } from '../finance/queries';
import { forwardPeriod, statementCsv, statementCsvFileName } from '../finance/statement';
import { DEPS_PLUGIN } from '../http/deps-plugin';
import { publicBaseUrl } from '../http/public-url';
import { route } from '../http/route';
import { sendStaticAsset, staticAsset, type StaticAsset } from '../http/static-assets';
import { UnknownWorkspaceError } from '../ledger/ledger';
import { addDays, overviewFrom, overviewOf, utcDay } from '../members/overview';
import { csrfTokenOf, type Actor } from '../members/rules';
import { SESSION_MAX_MS } from '../sessions/rules';
import type { SessionMember } from '../sessions/sessions';
import type { consoleAccounts } from './accounts';
import { cachedConsoleScript, CONSOLE_SCRIPT } from './bundle';
import { CONSOLE_PAGES, renderPage, type ConsolePage } from './pages';
import { invitationLink } from './console-links';
import { registerPasswordResetRoutes } from './password-reset-routes';
import { BalanceThresholds } from '../alerts/balance-alerts';
import { lastPaymentRefusal } from '../alerts/payment-refusals';
import type { SqlExecutor } from '../eventstore/sql';
import { enqueueEmail } from '../email/email-outbox';
import { deleteWebhookEndpoint, WatchService } from '../watches/watch-service';
import { WebhookStore } from '../webhooks/webhook-store';
import { WorkspaceWebhooks } from '../webhooks/workspace-webhooks';
import { registerHookRoutes } from './hooks-routes';
import { invitationEmail } from '../email/messages';

/**
 * The workspace console: pages and assets under `/console`, its JSON API under `/console/v1`, and
 * the operator's invitation endpoint under `/admin/v1`, each a row of the endpoint table. Who may
 * call each (a session, with CSRF token and same origin for changes; the admin token) and its
 * bucket are the rows' policies, admitted before any handler here runs (services/http/admission).
 */
export const consoleRoutes = fp<{ accounts: ReturnType<typeof consoleAccounts> }>(
  async (app, { accounts }) => {
    const { deps } = app;
    const { membership, sessions, passwordResets } = accounts;
    const { keys, readModels } = deps;
    const thresholds = new BalanceThresholds(deps.store);
    const webhooks = new WorkspaceWebhooks(new WebhookStore(deps.store.sql), deps.config.webhooks, (workspaceId, id) => deleteWebhookEndpoint(deps.store, workspaceId, id));
    const watches = new WatchService(deps.store, deps.lookups, readModels, { logger: app.log, sourceTimeoutMs: deps.config.sourceTimeoutMs });
    const assets = await loadAssets();
    /** The member the `session` admission signed in. */
    const member = (req: FastifyRequest): SessionMember => req.signedIn!.member;

    app.register(async (scope) => {
      scope.addHook('onRequest', async (_req, reply) => {
        // Balances, keys at creation, members: no cache along the way may keep any of it.
        reply.header('Cache-Control', 'no-store');
        reply.header('Referrer-Policy', 'no-referrer');
      });

      // ---------- pages and assets ----------

      // Each page is the same text for everyone: rendered once, here, not per request.
      for (const page of CONSOLE_PAGES) {
        const html = renderPage(page, assets.links);
        route(scope, PAGE_ROWS[page], async ({ reply }) => sendPage(reply, html));
      }
      route(scope, 'consoleSlash', async ({ reply }) => reply.redirect('/console', 302));
      route(scope, 'consoleAsset', async ({ req, reply }) => {
        return sendStaticAsset(req, reply, assets.byName);
      });

      // ---------- sign-in, invitations, session ----------

      route(scope, 'consoleSignIn', async ({ req, reply, body }) => {
        const signedIn = await sessions.signIn(body.workspace_id, body.email, body.password, req.ip);
        return startSession(req, reply, signedIn.sessionId, signedIn.member);
      });

      route(scope, 'consoleSession', async ({ req }) => sessionAnswer(member(req), req.signedIn!.sessionId));

      route(scope, 'consoleSignOut', async ({ req, reply }) => {
        await sessions.signOut(member(req));
        clearCookie(req, reply);
        return reply.send();
      });

      route(scope, 'consoleInvitationPreview', async ({ query }) => membership.describeInvitation(query.token));

      route(scope, 'consoleAcceptInvitation', async ({ req, reply, body }) => {
        const accepted = await membership.acceptInvitation(body.token, body.password, req.ip);
        return startSession(req, reply, accepted.sessionId, accepted.member);
      });

      route(scope, 'consoleChangePassword', async ({ req, reply, body }) => {
        const sessionId = await membership.changePassword(member(req), body.current_password, body.new_password, req.ip);
        return startSession(req, reply, sessionId, member(req));
      });

      registerPasswordResetRoutes(scope, deps, passwordResets);

      // ---------- numbers: the admin API's own queries ----------

      route(scope, 'consoleOverview', async ({ req }) => {
        const { workspaceId } = member(req);
        const today = utcDay(new Date());
        const ws = await readModels.workspace(workspaceId);
        if (!ws) throw new UnknownWorkspaceError(workspaceId);
        const rows = await readModels.usage(workspaceId, { from: overviewFrom(today), to: today });
        const overview = overviewOf(rows, today);
        return {
          balance: Number(ws.balance),
          ...overview,
          recent_errors: await readModels.recentErrors(workspaceId),
          last_insufficient_credits: await lastPaymentRefusal(deps.store.sql, workspaceId),
          low_balance_threshold: await thresholds.get(workspaceId),
          // Banners, as the 402's: what of the workspace's push side needs a look.
          failing_webhook_endpoints: (await webhooks.list(workspaceId)).flatMap((e) => (e.state === 'failing' && e.failing_since !== null ? [{ id: e.id, url: e.url, failing_since: e.failing_since }] : [])),
          paused_watches: (await watches.list(workspaceId)).flatMap((w) => (w.paused_reason !== null ? [{ id: w.id, paused_reason: w.paused_reason }] : [])),
        };
      });

      route(scope, 'consoleSetAlerts', async ({ req, body }) => {
        const { workspaceId, memberId } = member(req);
        requireOwner(member(req));
        await thresholds.set(workspaceId, body.low_balance_threshold, memberId);
        return { low_balance_threshold: await thresholds.get(workspaceId) };
      });

      route(scope, 'consoleListKeys', async ({ req }) => {
        const { workspaceId } = member(req);
        const [listed, creators] = await Promise.all([keys.list(workspaceId), readModels.keyCreators(workspaceId)]);
        return { data: listed.map((k) => ({ ...k, created_by: creators.get(k.id) ?? null })) };
      });

      route(scope, 'consoleCreateKey', async ({ req, body }) => {
        const { workspaceId, memberId, email } = member(req);
        return { ...(await keys.create(workspaceId, { name: body.name, createdBy: memberId, mode: body.mode })), created_by: email };
      });

      route(scope, 'consoleRenameKey', async ({ req, params, body }) => {
        const { workspaceId } = member(req);
        await keys.rename(workspaceId, params.id, body.name, member(req).memberId);
        const creators = await readModels.keyCreators(workspaceId);
        const key = (await keys.list(workspaceId)).find((k) => k.id === params.id)!;
        return { ...key, created_by: creators.get(params.id) ?? null };
      });

      route(scope, 'consoleRevokeKey', async ({ req, params }) => {
        const { workspaceId, memberId } = member(req);
        const revoked = await keys.revoke(params.id, workspaceId);
        req.log.info({ key_id: revoked.id, member_id: memberId, deleted_watches: revoked.deleted_watches }, 'key revoked in the console, with the watches it created');
        return revoked;
      });

      route(scope, 'consoleUsage', async ({ req, query }) => {
        const { workspaceId } = member(req);
        if (query.key_id !== undefined) await keys.requireKeyOf(workspaceId, query.key_id);
        // The console's periods are [from, to); the usage query takes its last day, included.
        const rows = await readModels.usage(workspaceId, { keyId: query.key_id, from: query.from, to: query.to === undefined ? undefined : addDays(query.to, -1), modes: modesShown(query.mode) });
        return { data: query.operation === undefined ? rows : rows.filter((r) => r.operation === query.operation) };
      });

      route(scope, 'consoleLedger', async ({ req, query }) => {
        const { workspaceId } = member(req);
        const page = await readModels.ledgerEntries(workspaceId, { requestId: query.request_id, after: query.after, limit: query.limit, modes: modesShown(query.mode) });
        const operations = await readModels.operationsOf(workspaceId, page.data.flatMap((e) => (e.request_id === null ? [] : [e.request_id])));
        return { ...page, data: page.data.map((e) => ({ ...e, operation: (e.request_id !== null && operations.get(e.request_id)) || null })) };
      });

      route(scope, 'consoleRequestStory', async ({ req, params }) => {
        const { workspaceId } = member(req);
        const story = await readModels.requestStory(workspaceId, params.id);
        if (!story) throw new ApiError('not_found', { message: 'No call of this workspace has this request id.' });
        const ledger = await readModels.ledgerEntries(workspaceId, { requestId: params.id, limit: 50 });
        const operation = story.call?.operation ?? null;
        return { request_id: params.id, ...story, ledger: ledger.data.map((e) => ({ ...e, operation })) };
      });

      route(scope, 'consoleLedgerCsv', async ({ req, reply, query }) => {
        const { workspaceId } = member(req);
        if (query.to < query.from) throw new ApiError('invalid_request', { details: [{ field: 'to', issue: 'too_small', message: '`to` is before `from`.' }] });
        const entries = await readModels.ledgerBetween(workspaceId, new Date(`${query.from}T00:00:00Z`), new Date(`${query.to}T00:00:00Z`));
        const csv = toCsv(
          CONSOLE_LEDGER_CSV_COLUMNS,
          entries.map((e) => [e.position, e.recorded_at, e.type, e.request_id, e.key_id, e.credits, e.balance_after]),
        );
        reply.header('Content-Disposition', `attachment; filename="ledger-${workspaceId}-${query.from}-${query.to}.csv"`);
        return reply.type('text/csv; charset=utf-8').send(csv);
      });

      // The admin API's statement (the one rule of services/finance/statement.ts), of the session's workspace only.
      route(scope, 'consoleStatement', async ({ req, reply, query }) => {
        const { workspaceId } = member(req);
        const period = forwardPeriod(query);
        const { statement: totals, lines } = await statement(deps.store.sql, workspaceId, period.from, period.to, modesShown(query.mode));
        if (query.format === 'json') return totals;
        reply.header('Content-Disposition', `attachment; filename="${statementCsvFileName(workspaceId, period)}"`);
        return reply.type('text/csv; charset=utf-8').send(statementCsv(lines));
      });

      // ---------- webhook endpoints and watches (any member) ----------

      registerHookRoutes(scope, { webhooks, watches });

      // ---------- members (owners) ----------

      route(scope, 'consoleMembers', async ({ req }) => {
        requireOwner(member(req));
        return readModels.listMembers(member(req).workspaceId);
      });

      route(scope, 'consoleInvite', async ({ req, body }) => {
        const { workspaceId } = member(req);
        requireOwner(member(req));
        const invitation = await membership.invite(workspaceId, actorOf(member(req)), body, await invitationMailer(req, workspaceId, body.role));
        // The link went to the invited address only: the inviter never holds it.
        const { link: _sentByEmail, ...answer } = invitationAnswer(req, workspaceId, invitation);
        return answer;
      });

      route(scope, 'consoleCancelInvitation', async ({ req, reply, params }) => {
        await membership.cancelInvitation(member(req).workspaceId, actorOf(member(req)), params.id);
        return reply.send();
      });

      route(scope, 'consoleChangeRole', async ({ req, reply, params, body }) => {
        await membership.changeRole(member(req).workspaceId, actorOf(member(req)), params.id, body.role);
        return reply.send();
      });

      route(scope, 'consoleRemoveMember', async ({ req, reply, params }) => {
        await membership.remove(member(req).workspaceId, actorOf(member(req)), params.id);
        return reply.send();
      });

      // ---------- the operator invites the first member ----------

      route(scope, 'adminInviteMember', async ({ req, params, body }) => {
        // Emailed to the invited address; the operator (who holds the admin token) gets the link too,
        // to bootstrap a workspace whatever the mail setup (docs/api.md, "Invitations").
        const invitation = await membership.invite(params.id, { kind: 'operator' }, body, await invitationMailer(req, params.id, body.role));
        return invitationAnswer(req, params.id, invitation);
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

    async function sessionAnswer(signedIn: SessionMember, sessionId: string) {
      const ws = await readModels.workspace(signedIn.workspaceId);
      return {
        member: { id: signedIn.memberId, email: signedIn.email, role: signedIn.role },
        workspace: { id: signedIn.workspaceId, name: ws?.name ?? signedIn.workspaceId },
        csrf_token: csrfTokenOf(sessionId),
      };
    }

    async function startSession(req: FastifyRequest, reply: FastifyReply, sessionId: string, signedIn: SessionMember) {
      const secure = req.protocol === 'https' ? '; Secure' : '';
      reply.header('Set-Cookie', `${SESSION_COOKIE}=${sessionId}; Path=/console; HttpOnly; SameSite=Lax; Max-Age=${SESSION_MAX_MS / 1000}${secure}`);
      return reply.send(await sessionAnswer(signedIn, sessionId));
    }
  },
  { name: 'routes-console', dependencies: [DEPS_PLUGIN] },
);

/** Each page's row of the endpoint table. */
const PAGE_ROWS: Record<ConsolePage, EndpointId> = {
  signin: 'consoleSignInPage',
  accept: 'consoleAcceptPage',
  forgot: 'consoleForgotPage',
  reset: 'consoleResetPage',
  overview: 'consoleOverviewPage',
  keys: 'consoleKeysPage',
  usage: 'consoleUsagePage',
  ledger: 'consoleLedgerPage',
  request: 'consoleRequestPage',
  statement: 'consoleStatementPage',
  members: 'consoleMembersPage',
  webhooks: 'consoleWebhooksPage',
  account: 'consoleAccountPage',
};

function clearCookie(req: FastifyRequest, reply: FastifyReply) {
  const secure = req.protocol === 'https' ? '; Secure' : '';
  reply.header('Set-Cookie', `${SESSION_COOKIE}=; Path=/console; HttpOnly; SameSite=Lax; Max-Age=0${secure}`);
}

const requireOwner = (signedIn: SessionMember) => {
  if (signedIn.role !== 'owner') throw new ApiError('forbidden', { message: 'Only an owner of the workspace may manage its members.', reason: 'not_owner' });
};

const actorOf = (signedIn: SessionMember): Actor => ({ kind: 'member', memberId: signedIn.memberId, role: signedIn.role });

// ---------- pages ----------

const ASSET_TYPES = {
  [CONSOLE_SCRIPT]: 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
} as const;

/** Bundled once per process: every app of a test process shares it. */
let scriptFromSource: Promise<Uint8Array> | undefined;

/**
 * The files under /console/assets. The script is the one `npm run build` bundled next to this
 * module; run from the TypeScript source (tsx, vitest) there is none, and it is bundled here.
 */
async function loadAssets() {
  const built = new URL(`./assets/${CONSOLE_SCRIPT}`, import.meta.url);
  const script = existsSync(built) ? readFileSync(built) : Buffer.from(await (scriptFromSource ??= cachedConsoleScript()));
  const byName = new Map<string, StaticAsset>();
  for (const [name, type] of Object.entries(ASSET_TYPES)) {
    const body = name === CONSOLE_SCRIPT ? script : readFileSync(new URL(`./assets/${name}`, import.meta.url));
    byName.set(name, staticAsset(type, body));
  }
  const url = (name: keyof typeof ASSET_TYPES) => `/console/assets/${name}?v=${byName.get(name)!.version}`;
  return { byName, links: { js: url(CONSOLE_SCRIPT), css: url('console.css'), icon: url('favicon.svg') } };
}

/** Loads only this origin's script and style; no inline code, no framing. */
const PAGE_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

function sendPage(reply: FastifyReply, html: string) {
  reply.header('Content-Security-Policy', PAGE_CSP);
  reply.header('X-Frame-Options', 'DENY');
  return reply.type('text/html; charset=utf-8').send(html);
}
