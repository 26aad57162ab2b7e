import type { FastifyInstance, FastifyRequest } from 'fastify';
import { route } from '../http/route';
import type { SessionMember } from '../sessions/sessions';
import type { WatchService } from '../watches/watch-service';
import type { WorkspaceWebhooks } from '../webhooks/workspace-webhooks';

/**
 * The console's webhook endpoints and watches: the public API's services (the same rules, the same
 * refusals) for the session's workspace, open to any member as keys are. A refresh now runs with
 * the key that created the watch, as the schedule does; one made here names its key.
 */
export function registerHookRoutes(scope: FastifyInstance, services: { webhooks: WorkspaceWebhooks; watches: WatchService }) {
  const { webhooks, watches } = services;
  const member = (req: FastifyRequest): SessionMember => req.signedIn!.member;

  /** An endpoint as the console shows it: a failing one with why (its given-up delivery's last attempt). */
  const withFailingReason = <E extends { id: string; state: string }>(e: E, reasons: Awaited<ReturnType<WorkspaceWebhooks['failingReasons']>>) => ({
    ...e,
    failing_reason: e.state === 'failing' ? (reasons.get(e.id) ?? null) : null,
  });

  route(scope, 'consoleListWebhookEndpoints', async ({ req }) => {
    const { workspaceId } = member(req);
    const [endpoints, reasons] = await Promise.all([webhooks.list(workspaceId), webhooks.failingReasons(workspaceId)]);
    return { data: endpoints.map((e) => withFailingReason(e, reasons)) };
  });

  route(scope, 'consoleCreateWebhookEndpoint', async ({ req, body }) => {
    const { workspaceId, memberId } = member(req);
    const created = await webhooks.create(workspaceId, body);
    req.log.info({ endpoint_id: created.id, member_id: memberId }, 'webhook endpoint registered in the console');
    return created;
  });

  route(scope, 'consoleDeleteWebhookEndpoint', async ({ req, reply, params }) => {
    const { workspaceId, memberId } = member(req);
    const deleted = await webhooks.delete(workspaceId, params.id);
    req.log.info({ endpoint_id: params.id, member_id: memberId, deleted_watches: deleted.deletedWatches }, 'webhook endpoint deleted in the console, and the watches delivering to it');
    return reply.send();
  });

  route(scope, 'consoleUpdateWebhookEndpoint', async ({ req, params, body }) => {
    const { workspaceId, memberId } = member(req);
    const updated = await webhooks.update(workspaceId, params.id, body);
    req.log.info({ endpoint_id: updated.id, member_id: memberId, changed: Object.keys(body), state: updated.state }, 'webhook endpoint changed in the console');
    return withFailingReason(updated, await webhooks.failingReasons(workspaceId));
  });

  route(scope, 'consoleRotateWebhookSecret', async ({ req, params }) => {
    const { workspaceId, memberId } = member(req);
    const rotated = await webhooks.rotateSecret(workspaceId, params.id);
    req.log.info({ endpoint_id: rotated.id, member_id: memberId, previous_secret_expires_at: rotated.previous_secret_expires_at }, 'webhook secret rotated in the console');
    return rotated;
  });

  route(scope, 'consoleListWebhookDeliveries', async ({ req, params, query }) => ({ data: await webhooks.deliveries(member(req).workspaceId, params.id, query.limit) }));

  route(scope, 'consoleResendWebhookDelivery', async ({ req, params }) => {
    const { workspaceId, memberId } = member(req);
    const delivery = await webhooks.resend(workspaceId, params.id, params.delivery_id);
    req.log.info({ endpoint_id: params.id, delivery_id: delivery.id, member_id: memberId }, 'webhook delivery re-sent from the console');
    return delivery;
  });

  route(scope, 'consoleListWatches', async ({ req }) => ({ data: await watches.list(member(req).workspaceId) }));

  route(scope, 'consoleCreateWatch', async ({ req, body }) => {
    const { workspaceId, memberId } = member(req);
    const { key_id: keyId, ...watched } = body;
    const watch = await watches.create({ workspaceId, keyId, chosen: true }, watched);
    req.log.info({ watch_id: watch.id, key_id: keyId, member_id: memberId }, 'watch created in the console');
    return watch;
  });

  route(scope, 'consoleDeleteWatch', async ({ req, reply, params }) => {
    const { workspaceId, memberId } = member(req);
    await watches.remove(workspaceId, params.id);
    req.log.info({ watch_id: params.id, member_id: memberId }, 'watch deleted in the console');
    return reply.send();
  });

  route(scope, 'consoleRunWatch', async ({ req, params }) => {
    const { workspaceId, memberId } = member(req);
    const outcome = await watches.refreshNow(workspaceId, params.id, req.id);
    req.log.info({ watch_id: params.id, member_id: memberId, refresh_request_id: outcome.requestId }, 'watch refreshed from the console');
    return {
      watch: outcome.watch,
      refresh_request_id: outcome.requestId,
      changed: outcome.changed,
      credits_charged: outcome.billing.charged,
      credits_remaining: outcome.billing.balance,
    };
  });
}
