import { randomUUID } from 'node:crypto';
import type { Sql } from '../eventstore/sql';
import { GroupBatcher } from '../common/group-batcher';
import { idempotencyBatchSize } from '../metrics/metrics';
import type { BeginResult, IdempotencyStore, StoredResponse } from './idempotency';

export interface SqlIdempotencyStoreOptions {
  /** How long a running request holds its key before another instance may take it over (60 s). */
  lockTtlMs?: number;
  /** How long a key counts from its first request (24 h). */
  retentionMs?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

// Inserts a claim per row of the batch ($1..$5: workspace ids, keys, fingerprints, lock tokens,
// instants, null for the database's), or takes over a row that no longer counts: expired, or
// running with a lapsed lock. RETURNING yields the token of each call that now owns its key. Calls
// on one key serialise on the row, and each sees the winner's claim as live, so exactly one starts.
// A key may appear once per batch (a row cannot be claimed twice by one statement).
const CLAIM = `
INSERT INTO idempotency_keys AS k
  (workspace_id, idem_key, fingerprint, state, lock_token, locked_until, response, created_at, expires_at)
SELECT i.workspace_id, i.idem_key, i.fingerprint, 'running', i.lock_token,
       COALESCE(i.at, now()) + $6::float8 * interval '1 millisecond', NULL,
       COALESCE(i.at, now()),
       COALESCE(i.at, now()) + $7::float8 * interval '1 millisecond'
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[]) AS i(workspace_id, idem_key, fingerprint, lock_token, at)
ON CONFLICT (workspace_id, idem_key) DO UPDATE SET
  fingerprint = EXCLUDED.fingerprint, state = 'running', lock_token = EXCLUDED.lock_token,
  locked_until = EXCLUDED.locked_until, response = NULL,
  created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
WHERE k.expires_at <= EXCLUDED.created_at
   OR (k.state = 'running' AND k.locked_until <= EXCLUDED.created_at)
RETURNING k.lock_token`;

/** The live records of the keys a batch could not claim ($1 workspace ids, $2 keys). */
const EXISTING = `
SELECT k.workspace_id, k.idem_key, k.fingerprint, k.state, k.response
  FROM unnest($1::text[], $2::text[]) AS i(workspace_id, idem_key)
  JOIN idempotency_keys k ON k.workspace_id = i.workspace_id AND k.idem_key = i.idem_key`;

/** Stores each call's outcome, if its token still owns the key ($1..$4: workspace ids, keys, tokens, responses). */
const COMPLETE = `
UPDATE idempotency_keys k
   SET state = 'done', response = i.response, lock_token = NULL, locked_until = NULL
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS i(workspace_id, idem_key, lock_token, response)
 WHERE k.workspace_id = i.workspace_id AND k.idem_key = i.idem_key AND k.lock_token = i.lock_token AND k.state = 'running'`;

interface Claim {
  workspaceId: string;
  key: string;
  fingerprint: string;
  now: Date | undefined;
}

interface Completion {
  workspaceId: string;
  key: string;
  token: string;
  response: StoredResponse;
}

/** The record vanished between the claim and its read (abandoned or purged): claim again. */
const VANISHED = 'vanished';

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

/**
 * Idempotency-Key records in SQL. Claims and completions are group-committed (GroupBatcher): under
 * load each costs a share of one statement and one commit instead of a transaction of its own.
 */
export function createSqlIdempotencyStore(sql: Sql, opts: SqlIdempotencyStoreOptions = {}): IdempotencyStore {
  const lockTtlMs = opts.lockTtlMs ?? 60_000;
  const retentionMs = opts.retentionMs ?? DAY_MS;
  const identity = (workspaceId: string, key: string) => JSON.stringify([workspaceId, key]);

  const claims = new GroupBatcher<Claim, BeginResult | typeof VANISHED>(async (batch) => {
    idempotencyBatchSize.observe({ statement: 'claim' }, batch.length);
    const tokens = batch.map(() => randomUUID());
    // The first call of each key claims; the others read what it left, like calls just after it.
    const firstOfKey = new Map<string, number>();
    for (const [i, c] of batch.entries()) {
      const id = identity(c.workspaceId, c.key);
      if (!firstOfKey.has(id)) firstOfKey.set(id, i);
    }
    const claiming = [...firstOfKey.values()];
    const { rows: won } = await sql.query<{ lock_token: string }>(CLAIM, [
      claiming.map((i) => batch[i]!.workspaceId),
      claiming.map((i) => batch[i]!.key),
      claiming.map((i) => batch[i]!.fingerprint),
      claiming.map((i) => tokens[i]!),
      claiming.map((i) => batch[i]!.now?.toISOString() ?? null),
      lockTtlMs,
      retentionMs,
    ]);
    const started = new Set(won.map((r) => r.lock_token));
    const others = batch.filter((_, i) => !started.has(tokens[i]!));
    const existing = new Map<string, ExistingRow>();
    if (others.length > 0) {
      const { rows } = await sql.query<ExistingRow & { workspace_id: string; idem_key: string }>(EXISTING, [
        others.map((c) => c.workspaceId),
        others.map((c) => c.key),
      ]);
      for (const r of rows) existing.set(identity(r.workspace_id, r.idem_key), r);
    }
    return batch.map((c, i) => {
      if (started.has(tokens[i]!)) return { kind: 'started', token: tokens[i]! };
      const row = existing.get(identity(c.workspaceId, c.key));
      return row ? answerForExisting(row, c.fingerprint) : VANISHED;
    });
  });

  const completions = new GroupBatcher<Completion, void>(async (batch) => {
    idempotencyBatchSize.observe({ statement: 'complete' }, batch.length);
    await sql.query(COMPLETE, [
      batch.map((c) => c.workspaceId),
      batch.map((c) => c.key),
      batch.map((c) => c.token),
      batch.map((c) => JSON.stringify(c.response)),
    ]);
    return batch.map(() => undefined);
  });

  return {
    async begin(workspaceId, key, fingerprint, now) {
      for (let attempt = 0; attempt < 5; attempt++) {
        const result = await claims.submit({ workspaceId, key, fingerprint, now });
        if (result !== VANISHED) return result;
      }
      throw new Error(`idempotency key ${key} kept changing under begin()`);
    },

    complete(workspaceId, key, token, response) {
      return completions.submit({ workspaceId, key, token, response });
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
