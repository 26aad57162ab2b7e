import fp from 'fastify-plugin';
import { refuseTestKeyForWatches, WatchService } from '../../watches/watch-service';
import { route } from '../../http/route';
import { DEPS_PLUGIN } from '../../http/deps-plugin';

/** Watches of the key's workspace (docs/api.md "Watches"): free, but each refresh is charged. */
export const watchRoutes = fp(
  async (app) => {
    const { deps } = app;
    const watches = new WatchService(deps.store, deps.lookups, deps.readModels, { logger: app.log, sourceTimeoutMs: deps.config.sourceTimeoutMs });
    const meta = (requestId: string) => ({ request_id: requestId });

    route(app, 'createWatch', async ({ req, body }) => {
      const key = req.apiKey!;
      refuseTestKeyForWatches(key.mode);
      const watch = await watches.create({ workspaceId: key.workspaceId, keyId: key.keyId }, body);
      req.log.info({ watch_id: watch.id }, 'watch created');
      return { data: watch, meta: meta(req.id) };
    });

    route(app, 'listWatches', async ({ req }) => ({ data: await watches.list(req.apiKey!.workspaceId), meta: meta(req.id) }));

    route(app, 'getWatch', async ({ req, params }) => ({ data: await watches.require(req.apiKey!.workspaceId, params.id), meta: meta(req.id) }));

    route(app, 'deleteWatch', async ({ req, params }) => {
      await watches.remove(req.apiKey!.workspaceId, params.id);
      return { data: { id: params.id, deleted: true as const }, meta: meta(req.id) };
    });

    route(app, 'runWatch', async ({ req, reply, params }) => {
      refuseTestKeyForWatches(req.apiKey!.mode);
      const outcome = await watches.refreshNow(req.apiKey!.workspaceId, params.id, req.id);
      reply.header('X-Credits-Charged', outcome.billing.charged).header('X-Credits-Remaining', outcome.billing.balance);
      return {
        data: outcome.watch,
        meta: { ...meta(req.id), refresh_request_id: outcome.requestId, changed: outcome.changed, credits_charged: outcome.billing.charged, credits_remaining: outcome.billing.balance },
      };
    });
  },
  { name: 'routes-watches', dependencies: [DEPS_PLUGIN] },
);
