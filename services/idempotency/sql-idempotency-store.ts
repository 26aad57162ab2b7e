import { randomUUID } from 'node:crypto';
import type { Sql } from '../eventstore/sql';
import type { BeginResult, IdempotencyStore, StoredResponse } from './idempotency';

export interface SqlIdempotencyStoreOptions {
  /** How long a running request holds its key before another instance may take it over (60 s). */
  lockTtlMs?: number;
  /** How long a key counts from its first request (24 h). */
  retentionMs?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Database time unless the caller passes one (tests, or a caller with its own clock). */
const NOW = 'COALESCE($5::timestamptz, now())';

// Inserts a claim, or takes over a row that no longer counts: expired, or running with a lapsed
// lock. RETURNING yields a row only when this call owns the key. Concurrent calls on one key
// serialise on the row, and each sees the winner's claim as live, so exactly one starts.
const CLAIM = `
INSERT INTO idempotency_keys AS k
  (workspace_id, idem_key, fingerprint, state, lock_token, locked_until, response, created_at, expires_at)
VALUES ($1, $2, $3, 'running', $4,
        ${NOW} + $6::float8 * interval '1 millisecond', NULL,
        ${NOW},
        ${NOW} + $7::float8 * interval '1 millisecond')
ON CONFLICT (workspace_id, idem_key) DO UPDATE SET
  fingerprint = EXCLUDED.fingerprint, state = 'running', lock_token = EXCLUDED.lock_token,
  locked_until = EXCLUDED.locked_until, response = NULL,
  created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
WHERE k.expires_at <= EXCLUDED.created_at
   OR (k.state = 'running' AND k.locked_until <= EXCLUDED.created_at)
RETURNING k.lock_token`;

interface ExistingRow {
  fingerprint: string;
  state: 'running' | 'done';
  response: string | null;
}

/** What a live record that this call could not claim means for it. */
export function answerForExisting(row: ExistingRow, fingerprint: string): BeginResult {
  if (row.fingerprint !== fingerprint) return { kind: 'reused' };
  if (row.state === 'running' || row.response === null) return { kind: 'in_use' };
  return { kind: 'replay', response: JSON.parse(row.response) as StoredResponse };
}

export function createSqlIdempotencyStore(sql: Sql, opts: SqlIdempotencyStoreOptions = {}): IdempotencyStore {
  const lockTtlMs = opts.lockTtlMs ?? 60_000;
  const retentionMs = opts.retentionMs ?? DAY_MS;

  return {
    async begin(workspaceId, key, fingerprint, now) {
      const at = now ? now.toISOString() : null;
      // The record can vanish between the two statements (abandoned or purged): claim again.
      for (let attempt = 0; attempt < 5; attempt++) {
        const token = randomUUID();
        const claimed = await sql.query<{ lock_token: string }>(CLAIM, [
          workspaceId,
          key,
          fingerprint,
          token,
          at,
          lockTtlMs,
          retentionMs,
        ]);
        if (claimed.rows.length === 1) return { kind: 'started', token };
        const existing = await sql.query<ExistingRow>(
          `SELECT fingerprint, state, response FROM idempotency_keys WHERE workspace_id = $1 AND idem_key = $2`,
          [workspaceId, key],
        );
        if (existing.rows.length === 1) return answerForExisting(existing.rows[0], fingerprint);
      }
      throw new Error(`idempotency key ${key} kept changing under begin()`);
    },

    async complete(workspaceId, key, token, response) {
      await sql.query(
        `UPDATE idempotency_keys
            SET state = 'done', response = $4, lock_token = NULL, locked_until = NULL
          WHERE workspace_id = $1 AND idem_key = $2 AND lock_token = $3 AND state = 'running'`,
        [workspaceId, key, token, JSON.stringify(response)],
      );
    },

    async abandon(workspaceId, key, token) {
      await sql.query(
        `DELETE FROM idempotency_keys
          WHERE workspace_id = $1 AND idem_key = $2 AND lock_token = $3 AND state = 'running'`,
        [workspaceId, key, token],
      );
    },

    async purgeExpired(now) {
      const r = await sql.query(`DELETE FROM idempotency_keys WHERE expires_at <= COALESCE($1::timestamptz, now())`, [
        now ? now.toISOString() : null,
      ]);
      return r.rowCount;
    },
  };
}
