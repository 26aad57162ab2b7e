import type { SqlExecutor } from '../eventstore/sql';

/** The last call of each workspace answered 402, kept for the console's banner (written by the API plugin `payment-refusals`). */
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
