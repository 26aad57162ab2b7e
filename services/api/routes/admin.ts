import fp from 'fastify-plugin';
import { ApiError } from '../../../contracts/errors';
import { ledgerExportPage, statement, usageExport, workspaceAt } from '../../finance/queries';
import { forwardPeriod, statementCsv, statementCsvFileName } from '../../finance/statement';
import { modesShown } from '../../common/key-mode';
import { UnknownWorkspaceError } from '../../ledger/ledger';
import { BalanceThresholds } from '../../alerts/balance-alerts';
import { runAudit } from '../../audit/audit-runner';
import { AuditJobStore } from '../../audit/audit-job-store';
import { AuditJobs, FINISHED_AUDIT_JOBS_KEPT } from '../../audit/audit-jobs';
import { route } from '../../http/route';
import { DEPS_PLUGIN } from '../../http/deps-plugin';

/**
 * Operators and the console: bearer ADMIN_TOKEN, on no rate-limit bucket (the rows' `admin`
 * admission, services/http/admission, which also guards unknown paths under /admin); unknown
 * workspaces and keys are mapped to 404 by the one error renderer (services/http/errors.ts).
 */
export const adminRoutes = fp(
  async (app) => {
    const { deps } = app;
    const { ledger, workspaces, keys, readModels } = deps;
    const heartbeatTimeoutMs = deps.config.auditHeartbeatTimeoutMs;
    const thresholds = new BalanceThresholds(deps.store);
    const audits = new AuditJobs(
      (options) => runAudit(deps.store, { databaseUrl: deps.config.databaseUrl, ...options }),
      new AuditJobStore(deps.store.sql, { heartbeatTimeoutMs, keepFinished: FINISHED_AUDIT_JOBS_KEPT }),
      { heartbeatTimeoutMs },
    );
    // This instance's running job is stopped, and its end written, before the connections close.
    app.addHook('onClose', async () => audits.stop());

    route(app, 'adminCreateWorkspace', async ({ body }) => {
      const ws = await workspaces.create({ name: body.name, credits: body.credits, maxConcurrency: body.max_concurrency });
      return { id: ws.id, name: ws.name, balance: ws.balance, max_concurrency: ws.max_concurrency };
    });

    route(app, 'adminGetWorkspace', async ({ params, query }) => {
      if (query.as_of !== undefined) return (await workspaceAt(deps.store.sql, params.id, query.as_of)).workspace;
      const ws = await workspaces.get(params.id);
      if (!ws) throw new UnknownWorkspaceError(params.id);
      return { ...ws, low_balance_threshold: await thresholds.get(params.id) };
    });

    route(app, 'adminPatchWorkspace', async ({ params, body }) => {
      if (!(await workspaces.get(params.id))) throw new UnknownWorkspaceError(params.id);
      if (body.low_balance_threshold !== undefined) await thresholds.set(params.id, body.low_balance_threshold, 'operator');
      if (body.max_concurrency !== undefined) {
        await workspaces.changeLimits(params.id, body.max_concurrency);
        deps.authenticator.forget(params.id);
      }
      return { ...(await workspaces.get(params.id))!, low_balance_threshold: await thresholds.get(params.id) };
    });

    route(app, 'adminGrantCredits', async ({ params, body }) => ledger.grantCredits(params.id, body.amount, body.reason));

    route(app, 'adminCreateKey', async ({ params, body }) =>
      keys.create(params.id, { name: body.name, rateLimitPerMinute: body.rate_limit_per_minute, mode: body.mode }),
    );

    route(app, 'adminListKeys', async ({ params }) => ({ data: await keys.list(params.id) }));

    route(app, 'adminRevokeKey', async ({ req, params }) => {
      const revoked = await keys.revoke(params.id);
      req.log.info({ key_id: revoked.id, deleted_watches: revoked.deleted_watches }, 'key revoked by the operator, with the watches it created');
      return revoked;
    });

    route(app, 'adminUsage', async ({ params, query }) => ({
      data: await readModels.usage(params.id, { keyId: query.key_id, from: query.from, to: query.to, modes: modesShown(query.mode) }),
    }));

    route(app, 'adminLedger', async ({ params, query }) => {
      const modes = modesShown(query.mode);
      if (query.as_of === undefined) return readModels.ledgerEntries(params.id, { requestId: query.request_id, after: query.after, limit: query.limit, modes });
      // As it stood then: replayed from the log, then filtered and paged like the ledger view.
      const { ledger: lines } = await workspaceAt(deps.store.sql, params.id, query.as_of);
      const matching = lines.filter((l) => l.position > (query.after ?? 0) && (query.request_id === undefined || l.request_id === query.request_id) && modes.includes(l.mode));
      const data = matching.slice(0, query.limit);
      return { data, next: matching.length > query.limit ? data.at(-1)!.position : null };
    });

    route(app, 'adminStatement', async ({ params, query, reply }) => {
      const { from, to } = forwardPeriod(query);
      const { statement: totals, lines } = await statement(deps.store.sql, params.id, from, to, modesShown(query.mode));
      if (query.format === 'json') return totals;
      reply.header('Content-Disposition', `attachment; filename="${statementCsvFileName(params.id, query)}"`);
      return reply.type('text/csv; charset=utf-8').send(statementCsv(lines));
    });

    route(app, 'adminLedgerExport', async ({ query }) => ledgerExportPage(deps.store.sql, { ...forwardPeriod(query), after: query.after, limit: query.limit }));

    route(app, 'adminUsageExport', async ({ query }) => ({ data: await usageExport(deps.store.sql, forwardPeriod(query)) }));

    route(app, 'adminAudit', async () => runAudit(deps.store, { databaseUrl: deps.config.databaseUrl }));

    route(app, 'adminStartAudit', async ({ req, reply }) => {
      const { job, started } = await audits.start(req.log);
      reply.header('Location', `/admin/v1/audits/${job.id}`);
      if (!started) reply.status(200);
      return job;
    });

    route(app, 'adminGetAudit', async ({ params, req }) => {
      const job = await audits.get(params.id, req.log);
      if (!job) {
        const message = `There is no audit job ${params.id}: only the last ${FINISHED_AUDIT_JOBS_KEPT} finished are kept; start another.`;
        throw new ApiError('not_found', { message, reason: 'no_audit' });
      }
      return job;
    });

    route(app, 'adminRelay', async () => (deps.relayLag ? { enabled: true, ...((await deps.relayLag()) as object) } : { enabled: false }));
  },
  { name: 'routes-admin', dependencies: [DEPS_PLUGIN] },
);

