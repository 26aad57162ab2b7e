import type { EventData } from '../../contracts/events';
import type { InlineProjection } from '../eventstore/event-store';
import type { SqlExecutor } from '../eventstore/sql';
import type { RecordedEvent } from '../eventstore/types';

/** Thrown inside a charge transaction when the balance does not cover it: nothing commits. */
export class InsufficientCreditsError extends Error {
  constructor(readonly workspaceId: string) {
    super(`insufficient credits in ${workspaceId}`);
  }
}

type Handler = (tx: SqlExecutor, e: RecordedEvent<any>) => Promise<void>;

function projection(name: string, handlers: Record<string, Handler>): InlineProjection & { types: string[] } {
  return {
    name,
    types: Object.keys(handlers),
    async apply(tx, events) {
      for (const e of events) await handlers[e.type]?.(tx, e);
    },
  };
}

async function addLedgerEntry(tx: SqlExecutor, e: RecordedEvent, workspaceId: string, credits: number, balanceAfter: number, keyId: string | null) {
  await tx.query(
    `INSERT INTO ledger_entries (position, workspace_id, type, request_id, key_id, credits, balance_after, recorded_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [e.position, workspaceId, e.type, e.metadata.request_id ?? null, keyId, credits, balanceAfter, e.recordedAt],
  );
}

/** Workspace balance and limits, the ledger view with balance_after, and the charges. */
export const ledgerProjection = projection('ledger', {
  async WorkspaceCreated(tx, e: RecordedEvent<EventData<'WorkspaceCreated'>>) {
    await tx.query('INSERT INTO workspaces (id, name, balance, max_concurrency, created_at) VALUES ($1, $2, 0, $3, $4)', [
      e.data.workspace_id, e.data.name, e.data.max_concurrency, e.recordedAt,
    ]);
  },
  async CreditsGranted(tx, e: RecordedEvent<EventData<'CreditsGranted'>>) {
    const { rows } = await tx.query<{ balance: number }>('UPDATE workspaces SET balance = balance + $2 WHERE id = $1 RETURNING balance', [
      e.data.workspace_id, e.data.amount,
    ]);
    await addLedgerEntry(tx, e, e.data.workspace_id, e.data.amount, rows[0]!.balance, null);
  },
  async LimitsChanged(tx, e: RecordedEvent<EventData<'LimitsChanged'>>) {
    await tx.query('UPDATE workspaces SET max_concurrency = $2 WHERE id = $1', [e.data.workspace_id, e.data.max_concurrency]);
  },
  async LookupCharged(tx, e: RecordedEvent<EventData<'LookupCharged'>>) {
    const d = e.data;
    const { rows } = await tx.query<{ balance: number }>(
      'UPDATE workspaces SET balance = balance - $2 WHERE id = $1 AND balance >= $2 RETURNING balance',
      [d.workspace_id, d.credits],
    );
    if (!rows[0]) throw new InsufficientCreditsError(d.workspace_id);
    await tx.query('INSERT INTO charges (request_id, workspace_id, key_id, operation, credits, charged_at) VALUES ($1, $2, $3, $4, $5, $6)', [
      d.request_id, d.workspace_id, d.key_id, d.operation, d.credits, e.recordedAt,
    ]);
    await addLedgerEntry(tx, e, d.workspace_id, -d.credits, rows[0].balance, d.key_id);
  },
  async LookupRefunded(tx, e: RecordedEvent<EventData<'LookupRefunded'>>) {
    const d = e.data;
    const { rows } = await tx.query<{ balance: number }>('UPDATE workspaces SET balance = balance + $2 WHERE id = $1 RETURNING balance', [
      d.workspace_id, d.credits,
    ]);
    await tx.query('UPDATE charges SET refunded_credits = $2 WHERE request_id = $1', [d.request_id, d.credits]);
    await addLedgerEntry(tx, e, d.workspace_id, d.credits, rows[0]!.balance, d.key_id);
  },
  async LookupCompleted(tx, e: RecordedEvent<EventData<'LookupCompleted'>>) {
    await tx.query('UPDATE charges SET settled = true WHERE request_id = $1', [e.data.request_id]);
  },
});

/** API keys, read by authentication; revocation is visible the moment it commits. */
export const keysProjection = projection('api_keys', {
  async ApiKeyCreated(tx, e: RecordedEvent<EventData<'ApiKeyCreated'>>) {
    const d = e.data;
    await tx.query(
      `INSERT INTO api_keys (id, workspace_id, key_hash, prefix, name, rate_limit_per_minute, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [d.key_id, d.workspace_id, d.key_hash, d.prefix, d.name, d.rate_limit_per_minute, e.recordedAt],
    );
  },
  async ApiKeyRevoked(tx, e: RecordedEvent<EventData<'ApiKeyRevoked'>>) {
    await tx.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [e.data.key_id, e.recordedAt]);
  },
});

/**
 * The cache index: entity data plus every alias that leads to it, and cached not-founds. An alias
 * can be written from two streams (an entity's and a not-found's) whose commits may land in either
 * order; the higher log position wins, so a rebuild in log order gives the same rows.
 */
export const cacheProjection = projection('cache_index', {
  async ProfileFetched(tx, e: RecordedEvent<EventData<'ProfileFetched'>>) {
    const d = e.data;
    await tx.query(
      `INSERT INTO cache_entities (entity, kind, data, content_hash, fetched_at, position)
       VALUES ($1, $2, $3::json, $4, $5, $6)
       ON CONFLICT (entity) DO UPDATE SET data = EXCLUDED.data, content_hash = EXCLUDED.content_hash,
         fetched_at = EXCLUDED.fetched_at, position = EXCLUDED.position
       WHERE cache_entities.position < EXCLUDED.position`,
      [d.entity, d.kind, JSON.stringify(d.data), d.content_hash, d.fetched_at, e.position],
    );
    await tx.query(
      `INSERT INTO cache_aliases (alias, kind, entity, code, reason, fetched_at, position)
       SELECT a, $2, $3, NULL, NULL, $4, $5 FROM unnest($1::text[]) AS a
       ON CONFLICT (alias) DO UPDATE SET entity = EXCLUDED.entity, code = NULL, reason = NULL,
         fetched_at = EXCLUDED.fetched_at, position = EXCLUDED.position
       WHERE cache_aliases.position < EXCLUDED.position`,
      [d.aliases, d.kind, d.entity, d.fetched_at, e.position],
    );
  },
  async ProfileNotFound(tx, e: RecordedEvent<EventData<'ProfileNotFound'>>) {
    const d = e.data;
    await tx.query(
      `INSERT INTO cache_aliases (alias, kind, entity, code, reason, fetched_at, position)
       VALUES ($1, $2, NULL, $3, $4, $5, $6)
       ON CONFLICT (alias) DO UPDATE SET entity = NULL, code = EXCLUDED.code, reason = EXCLUDED.reason,
         fetched_at = EXCLUDED.fetched_at, position = EXCLUDED.position
       WHERE cache_aliases.position < EXCLUDED.position`,
      [d.alias, d.kind, d.code, d.reason, d.fetched_at, e.position],
    );
  },
});

export const INLINE_PROJECTIONS = [ledgerProjection, keysProjection, cacheProjection];

/** Tables each inline projection owns, for rebuilds. */
export const INLINE_TABLES: Record<string, string[]> = {
  ledger: ['workspaces', 'ledger_entries', 'charges'],
  api_keys: ['api_keys'],
  cache_index: ['cache_entities', 'cache_aliases'],
};
