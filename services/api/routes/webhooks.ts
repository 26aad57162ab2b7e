import fp from 'fastify-plugin';
import { WebhookStore } from '../../webhooks/webhook-store';
import { WorkspaceWebhooks } from '../../webhooks/workspace-webhooks';
import { deleteWebhookEndpoint } from '../../watches/watch-service';
import { route } from '../../http/route';
import { DEPS_PLUGIN } from '../../http/deps-plugin';

/** Webhook endpoints of the key's workspace (docs/api.md "Webhooks"): free. */
export const webhookRoutes = fp(
  async (app) => {
    const { deps } = app;
    const webhooks = new WorkspaceWebhooks(new WebhookStore(deps.store.sql), deps.config.webhooks, (workspaceId, id) => deleteWebhookEndpoint(deps.store, workspaceId, id));
    const meta = (requestId: string) => ({ request_id: requestId });

    route(app, 'createWebhookEndpoint', async ({ req, body }) => {
      const created = await webhooks.create(req.apiKey!.workspaceId, body);
      req.log.info({ endpoint_id: created.id }, 'webhook endpoint registered');
      return { data: created, meta: meta(req.id) };
    });

    route(app, 'listWebhookEndpoints', async ({ req }) => ({ data: await webhooks.list(req.apiKey!.workspaceId), meta: meta(req.id) }));

    route(app, 'getWebhookEndpoint', async ({ req, params }) => ({ data: await webhooks.get(req.apiKey!.workspaceId, params.id), meta: meta(req.id) }));

    route(app, 'updateWebhookEndpoint', async ({ req, params, body }) => ({ data: await webhooks.update(req.apiKey!.workspaceId, params.id, body), meta: meta(req.id) }));

    route(app, 'deleteWebhookEndpoint', async ({ req, params }) => {
      const deleted = await webhooks.delete(req.apiKey!.workspaceId, params.id);
      req.log.info({ endpoint_id: params.id, deleted_watches: deleted.deletedWatches }, 'webhook endpoint deleted, and the watches delivering to it');
      return { data: { id: params.id, deleted: true as const, deleted_watches: deleted.deletedWatches }, meta: meta(req.id) };
    });

    route(app, 'rotateWebhookSecret', async ({ req, params }) => {
      const rotated = await webhooks.rotateSecret(req.apiKey!.workspaceId, params.id);
      req.log.info({ endpoint_id: rotated.id, previous_secret_expires_at: rotated.previous_secret_expires_at }, 'webhook secret rotated');
      return { data: rotated, meta: meta(req.id) };
    });

    route(app, 'listWebhookDeliveries', async ({ req, params, query }) => ({ data: await webhooks.deliveries(req.apiKey!.workspaceId, params.id, query.limit), meta: meta(req.id) }));

    route(app, 'resendWebhookDelivery', async ({ req, params }) => {
      const delivery = await webhooks.resend(req.apiKey!.workspaceId, params.id, params.delivery_id);
      req.log.info({ endpoint_id: params.id, delivery_id: delivery.id }, 'webhook delivery re-sent');
      return { data: delivery, meta: meta(req.id) };
    });
  },
  { name: 'routes-webhooks', dependencies: [DEPS_PLUGIN] },
);
