import type { SqlExecutor } from '../../services/eventstore/sql';
import { isLedgerEvent, LEDGER_EVENT_TYPES, ledgerEventHash } from '../../services/ledger/ledger-chain';

const PAGE = 5000;

/**
 * Existing logs get their ledger chains: every ledger event recorded before chains existed is
 * linked, per workspace in log order, from the workspace's first event (SQL has SHA-256 but no
 * canonical JSON, hence code). Runs once, before the log becomes append-only (008).
 */
export async function up(tx: SqlExecutor): Promise<void> {
  const last = new Map<string, string>();
  for (let after = 0; ; ) {
    const { rows } = await tx.query<{ position: string | number; stream: string; type: string; data: { workspace_id?: string } }>(
      'SELECT position, stream, type, data FROM events WHERE position > $1 AND type = ANY($2::text[]) ORDER BY position LIMIT $3',
      [after, LEDGER_EVENT_TYPES, PAGE],
    );
    if (rows.length === 0) break;
    const positions: number[] = [];
    const links: string[] = [];
    for (const row of rows) {
      const workspaceId = row.data.workspace_id;
      if (!isLedgerEvent(row.type) || typeof workspaceId !== 'string') continue;
      const prev = last.get(workspaceId) ?? null;
      const hash = ledgerEventHash(prev, row);
      last.set(workspaceId, hash);
      positions.push(Number(row.position));
      links.push(JSON.stringify({ prev_hash: prev, hash }));
    }
    await tx.query(
      `UPDATE events SET metadata = events.metadata || l.links::jsonb
         FROM unnest($1::bigint[], $2::text[]) AS l(position, links) WHERE events.position = l.position`,
      [positions, links],
    );
    after = Number(rows[rows.length - 1]!.position);
  }
  if (last.size > 0) {
    await tx.query(
      `UPDATE workspaces SET last_ledger_hash = l.hash
         FROM unnest($1::text[], $2::text[]) AS l(id, hash) WHERE workspaces.id = l.id`,
      [[...last.keys()], [...last.values()]],
    );
  }
}
