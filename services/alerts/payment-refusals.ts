import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { SqlExecutor } from '../eventstore/sql';
import { DEPS_PLUGIN } from '../api/plugins/deps';

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

export async function recordPaymentRefusal(sql: SqlExecutor, r: { workspaceId: string; requestId: string; keyId: string; path: string }, at = new Date()): Promise<void> {
  await sql.query(
    `INSERT INTO last_payment_refusals (workspace_id, request_id, key_id, path, refused_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (workspace_id) DO UPDATE SET request_id = EXCLUDED.request_id, key_id = EXCLUDED.key_id, path = EXCLUDED.path, refused_at = EXCLUDED.refused_at`,
    [r.workspaceId, r.requestId, r.keyId, r.path, at],
  );
}

/** The workspace's last 402, or null. */
export async function lastPaymentRefusal(sql: SqlExecutor, workspaceId: string) {
  const { rows } = await sql.query<{ request_id: string; key_id: string; path: string; refused_at: Date }>(
    'SELECT request_id, key_id, path, refused_at FROM last_payment_refusals WHERE workspace_id = $1',
    [workspaceId],
  );
  const r = rows[0];
  return r ? { request_id: r.request_id, key_id: r.key_id, path: r.path, refused_at: new Date(r.refused_at).toISOString() } : null;
}
