import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { recordPaymentRefusal } from '../alerts/payment-refusals';
import { DEPS_PLUGIN } from '../http/deps-plugin';

/**
 * Keeps, per workspace, the last call answered 402 (`insufficient_credits`), so the console's
 * overview can show it as a banner: the caller's program saw it, its owners may not have.
 * Written after the answer is sent; a failure to write is logged, never the caller's concern.
 */
export const paymentRefusalsRecorder = fp(
  async (app) => {
    const sql = app.deps.store.sql;
    app.addHook('onResponse', async (req: FastifyRequest, reply: FastifyReply) => {
      if (reply.statusCode !== 402 || !req.apiKey) return;
      await recordPaymentRefusal(sql, { workspaceId: req.apiKey.workspaceId, requestId: String(req.id), keyId: req.apiKey.keyId, path: req.routeOptions.url ?? req.url })
        .catch((err: unknown) => req.log.warn({ err }, 'recording the 402 for the console banner failed'));
    });
  },
  { name: 'payment-refusals', dependencies: [DEPS_PLUGIN] },
);

