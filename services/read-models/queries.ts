import type { EventData, KeyMode } from '../../contracts/events';
import type { SqlExecutor } from '../eventstore/sql';
import { UnknownWorkspaceError } from '../ledger/errors';
import type { LoggedEvent } from './request-story';

/** Read models of the admin API, the console and the answer's meta: plain reads of the projection tables. */

export interface Workspace {
  id: string;
  name: string;
  balance: number;
  max_concurrency: number;
  created_at: string;
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

export async function getWorkspace(sql: SqlExecutor, id: string): Promise<Workspace | undefined> {
  const { rows } = await sql.query<Omit<Workspace, 'created_at'> & { created_at: Date }>(
    'SELECT id, name, balance, max_concurrency, created_at FROM workspaces WHERE id = $1',
    [id],
  );
  const row = rows[0];
  return row && { ...row, created_at: iso(row.created_at)! };
}

/** Throws UnknownWorkspaceError for no such workspace. */
export async function requireWorkspace(sql: SqlExecutor, id: string): Promise<Workspace> {
  const workspace = await getWorkspace(sql, id);
  if (!workspace) throw new UnknownWorkspaceError(id);
  return workspace;
}

/** Null for no such workspace. */
export async function balance(sql: SqlExecutor, workspaceId: string): Promise<number | null> {
  const { rows } = await sql.query<{ balance: number }>('SELECT balance FROM workspaces WHERE id = $1', [workspaceId]);
  return rows[0]?.balance ?? null;
}

export async function listKeys(sql: SqlExecutor, workspaceId: string) {
  await requireWorkspace(sql, workspaceId);
  const { rows } = await sql.query<{ id: string; prefix: string; name: string | null; mode: KeyMode; created_at: Date; last_used_at: Date | null; revoked_at: Date | null }>(
    // The later of the last completed lookup (projected from the log) and the last authenticated
    // request of any kind (key_last_seen, services/keys/key-use.ts); GREATEST skips a NULL.
    `SELECT k.id, k.prefix, k.name, k.mode, k.created_at, GREATEST(u.last_used_at, s.last_seen_at) AS last_used_at, k.revoked_at
       FROM api_keys k LEFT JOIN key_last_used u ON u.key_id = k.id LEFT JOIN key_last_seen s ON s.key_id = k.id
      WHERE k.workspace_id = $1 ORDER BY k.created_at, k.id`,
    [workspaceId],
  );
  return rows.map((r) => ({ ...r, created_at: iso(r.created_at)!, last_used_at: iso(r.last_used_at), revoked_at: iso(r.revoked_at) }));
}

/** When a key was revoked; undefined for a key that does not exist or is not revoked. */
export async function keyRevokedAt(sql: SqlExecutor, keyId: string): Promise<string | undefined> {
  const { rows } = await sql.query<{ revoked_at: Date | null }>('SELECT revoked_at FROM api_keys WHERE id = $1', [keyId]);
  return iso(rows[0]?.revoked_at ?? null) ?? undefined;
}

/**
 * A ledger line's mode, from its event (`e`, joined on the position): the chained record itself,
 * so the mode a read filters on is the one the audit's hash chain covers.
 */
export const LEDGER_LINE_MODE = `coalesce(e.data->>'mode', 'live')`;

type LedgerEntryRow = { position: number; type: string; request_id: string | null; key_id: string | null; credits: number; balance_after: number; recorded_at: Date; mode: KeyMode };
const LEDGER_ENTRY_COLUMNS = `le.position, le.type, le.request_id, le.key_id, le.credits, le.balance_after, le.recorded_at, ${LEDGER_LINE_MODE} AS mode`;
const ledgerEntryOf = (r: LedgerEntryRow) => ({
  ...r,
  position: Number(r.position),
  credits: Number(r.credits),
  balance_after: Number(r.balance_after),
  recorded_at: iso(r.recorded_at)!,
});

/**
 * A page of a workspace's ledger lines, optionally of one request, after a position; `modes`: which calls' (live by default).
 * One request's lines are found by the log's request-id index (a line's request id is its event's),
 * the others by the ledger's (workspace_id, position) index.
 */
export async function ledgerEntries(sql: SqlExecutor, workspaceId: string, q: { requestId?: string; after?: number; limit: number; modes?: readonly KeyMode[] }) {
  await requireWorkspace(sql, workspaceId);
  const ofRequest = q.requestId === undefined ? '$2::text IS NULL' : `e.metadata->>'request_id' = $2`;
  const { rows } = await sql.query<LedgerEntryRow>(
    `SELECT ${LEDGER_ENTRY_COLUMNS} FROM ledger_entries le JOIN events e ON e.position = le.position
      WHERE le.workspace_id = $1 AND ${ofRequest} AND le.position > $3 AND ${LEDGER_LINE_MODE} = ANY($5::text[])
      ORDER BY le.position LIMIT $4`,
    [workspaceId, q.requestId ?? null, q.after ?? 0, q.limit + 1, q.modes ?? ['live']],
  );
  const page = rows.slice(0, q.limit).map(ledgerEntryOf);
  return { data: page, next: rows.length > q.limit ? page[page.length - 1]!.position : null };
}

/** Live ledger lines recorded in [from, to), oldest first (the console's CSV download). */
export async function ledgerBetween(sql: SqlExecutor, workspaceId: string, from: Date, to: Date) {
  await requireWorkspace(sql, workspaceId);
  const { rows } = await sql.query<LedgerEntryRow>(
    `SELECT ${LEDGER_ENTRY_COLUMNS} FROM ledger_entries le JOIN events e ON e.position = le.position
      WHERE le.workspace_id = $1 AND le.recorded_at >= $2 AND le.recorded_at < $3 AND ${LEDGER_LINE_MODE} = 'live' ORDER BY le.position`,
    [workspaceId, from, to],
  );
  return rows.map(ledgerEntryOf);
}

/** A usage row's mode: its key's (a key's mode never changes). */
export const USAGE_ROW_MODE = `coalesce(k.mode, 'live')`;

/** `modes`: which keys' rows (services/common/key-mode.ts, modesShown); live by default. */
export async function usage(sql: SqlExecutor, workspaceId: string, q: { keyId?: string; from?: string; to?: string; modes?: readonly KeyMode[] }) {
  await requireWorkspace(sql, workspaceId);
  const { rows } = await sql.query<{ day: string | Date; key_id: string; operation: string; calls: number; credits_charged: number; credits_refunded: number; errors: number; mode: KeyMode }>(
    `SELECT u.day::text AS day, u.key_id, u.operation, u.calls, u.credits_charged, u.credits_refunded, u.errors, ${USAGE_ROW_MODE} AS mode
       FROM usage_daily u LEFT JOIN api_keys k ON k.id = u.key_id
      WHERE u.workspace_id = $1 AND ($2::text IS NULL OR u.key_id = $2)
        AND ($3::date IS NULL OR u.day >= $3::date) AND ($4::date IS NULL OR u.day <= $4::date)
        AND ${USAGE_ROW_MODE} = ANY($5::text[])
      ORDER BY u.day, u.key_id, u.operation`,
    [workspaceId, q.keyId ?? null, q.from ?? null, q.to ?? null, q.modes ?? ['live']],
  );
  return rows.map((r) => ({ ...r, day: String(r.day) }));
}

type Role = EventData<'MemberInvited'>['role'];

/** A workspace's active members and its open invitations, oldest first. */
export async function listMembers(sql: SqlExecutor, workspaceId: string, now: Date) {
  const { rows: members } = await sql.query<{ member_id: string; email: string; role: Role; joined_at: Date }>(
    'SELECT member_id, email, role, joined_at FROM members WHERE workspace_id = $1 AND removed_at IS NULL ORDER BY joined_at, member_id',
    [workspaceId],
  );
  const { rows: invitations } = await sql.query<{ invitation_id: string; email: string; role: Role; invited_by: string; created_at: Date; expires_at: Date }>(
    `SELECT invitation_id, email, role, invited_by, created_at, expires_at FROM invitations
      WHERE workspace_id = $1 AND accepted_at IS NULL AND cancelled_at IS NULL AND expires_at > $2 ORDER BY created_at, invitation_id`,
    [workspaceId, now],
  );
  return {
    members: members.map((m) => ({ id: m.member_id, email: m.email, role: m.role, joined_at: iso(m.joined_at)! })),
    invitations: invitations.map((i) => ({ id: i.invitation_id, email: i.email, role: i.role, invited_by: i.invited_by, created_at: iso(i.created_at)!, expires_at: iso(i.expires_at)! })),
  };
}

/** Who created each console-made key: key id → email (removed members included). */
export async function keyCreators(sql: SqlExecutor, workspaceId: string): Promise<Map<string, string>> {
  const { rows } = await sql.query<{ key_id: string; email: string }>(
    'SELECT c.key_id, m.email FROM api_key_creators c JOIN members m ON m.member_id = c.member_id WHERE c.workspace_id = $1',
    [workspaceId],
  );
  return new Map(rows.map((r) => [r.key_id, r.email]));
}

/** A workspace's latest failed calls, newest first (the console's overview). */
export async function recentErrors(sql: SqlExecutor, workspaceId: string, limit = 10) {
  const { rows } = await sql.query<{ request_id: string; key_id: string; operation: string; error_code: string; recorded_at: Date }>(
    'SELECT request_id, key_id, operation, error_code, recorded_at FROM console_errors WHERE workspace_id = $1 ORDER BY position DESC LIMIT $2',
    [workspaceId, limit],
  );
  return rows.map((r) => ({ ...r, recorded_at: iso(r.recorded_at)! }));
}

/** The events one call appended, by the log's index on the metadata's request id (migration 001). */
export async function requestEvents(sql: SqlExecutor, requestId: string): Promise<LoggedEvent[]> {
  const { rows } = await sql.query<{ position: number | string; stream: string; type: string; data: Record<string, unknown>; recorded_at: Date }>(
    `SELECT position, stream, type, data, recorded_at FROM events WHERE metadata->>'request_id' = $1 ORDER BY position LIMIT 100`,
    [requestId],
  );
  return rows.map((r) => ({ position: Number(r.position), stream: r.stream, type: r.type, data: r.data, recordedAt: iso(r.recorded_at)! }));
}

/**
 * The operation of each charged call among `requestIds` (grants have none), from its LookupCharged
 * by the log's request-id index: a charge settled in its own transaction has no `charges` row.
 */
export async function operationsOf(sql: SqlExecutor, workspaceId: string, requestIds: readonly string[]): Promise<Map<string, string>> {
  if (requestIds.length === 0) return new Map();
  const { rows } = await sql.query<{ request_id: string; operation: string }>(
    `SELECT metadata->>'request_id' AS request_id, data->>'operation' AS operation FROM events
      WHERE metadata->>'request_id' = ANY($2::text[]) AND type = 'LookupCharged' AND data->>'workspace_id' = $1`,
    [workspaceId, [...new Set(requestIds)]],
  );
  return new Map(rows.map((r) => [r.request_id, r.operation]));
}
