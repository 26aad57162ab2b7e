import { newEvent, type EventData, type KeyMode } from '../../contracts/events';
import type { Logger } from '../common/log';
import { isTestCall } from '../common/key-mode';
import { enqueueEmail } from '../email/email-outbox';
import { balanceLowEmail } from '../email/messages';
import type { EventStore } from '../eventstore/event-store';
import type { TransactionExecutor } from '../eventstore/sql';
import type { SubscriptionHandler } from '../eventstore/subscription';
import type { RecordedEvent } from '../eventstore/types';
import { BALANCE_EVENT_TYPES, opensOrMovesBalance } from '../ledger/workspace-state';
import { decideBalanceAlert, type AlertState, type BalanceMove } from './balance-alert-rule';

/** Where a workspace's alert events live: apart from its ledger stream (chain, audit). */
export const balanceAlertsStream = (workspaceId: string) => `balance-alerts-${workspaceId}`;

/** Which way a balance event moves the balance for the alert: a charge takes, the others give or open. */
const moveOf = (e: RecordedEvent): BalanceMove['kind'] => (e.type === 'LookupCharged' ? 'debit' : 'credit');

/** A workspace's threshold: set, removed (null) or read. Setting it arms the alert. */
export class BalanceThresholds {
  constructor(private readonly store: EventStore) {}

  async set(workspaceId: string, threshold: number | null, actor: string): Promise<void> {
    await this.store.transaction(async (tx) => {
      await tx.sql.query(
        `INSERT INTO balance_alerts (workspace_id, low_balance_threshold, armed) VALUES ($1, $2, true)
         ON CONFLICT (workspace_id) DO UPDATE SET low_balance_threshold = EXCLUDED.low_balance_threshold, armed = true`,
        [workspaceId, threshold],
      );
      await tx.append(balanceAlertsStream(workspaceId), [newEvent('LowBalanceThresholdChanged', { workspace_id: workspaceId, low_balance_threshold: threshold, actor })]);
    });
  }

  async get(workspaceId: string): Promise<number | null> {
    const { rows } = await this.store.sql.query<{ low_balance_threshold: string | null }>('SELECT low_balance_threshold FROM balance_alerts WHERE workspace_id = $1', [workspaceId]);
    const value = rows[0]?.low_balance_threshold;
    return value === undefined || value === null ? null : Number(value);
  }
}

/**
 * The checkpointed subscription that watches balances: for each charge, grant or refund of a
 * workspace with a threshold, the rule decides; a crossing appends `BalanceLow` and queues one
 * email per owner, in the batch's transaction with the checkpoint: once per crossing, whatever
 * the number of instances (one holds the subscription's lock at a time).
 */
export function balanceAlertsHandler(store: EventStore, options: { consoleUrl: () => string; logger: Logger }): SubscriptionHandler {
  return {
    name: 'balance-alerts',
    eventTypes: BALANCE_EVENT_TYPES,
    // Only the moves of workspaces with a threshold are read: most have none, and reading every
    // charge of the log cost more CPU than appending it (docs/performance.md, issue 24).
    readWhere: "events.data->>'workspace_id' IN (SELECT workspace_id FROM balance_alerts WHERE low_balance_threshold IS NOT NULL)",
    reads: { data: true, metadata: false },
    async handle(tx: TransactionExecutor, events: RecordedEvent[]) {
      // A test call's charge of 0 is no crossing, even while the balance sits below the threshold.
      const moves = events.filter((e) => opensOrMovesBalance(e) && !isTestCall(e.data as { mode?: KeyMode }));
      if (moves.length === 0) return;
      const workspaceIds = [...new Set(moves.map((e) => (e.data as { workspace_id: string }).workspace_id))];
      const { rows: alertRows } = await tx.query<{ workspace_id: string; low_balance_threshold: string; armed: boolean }>(
        'SELECT workspace_id, low_balance_threshold, armed FROM balance_alerts WHERE workspace_id = ANY($1) AND low_balance_threshold IS NOT NULL FOR UPDATE',
        [workspaceIds],
      );
      if (alertRows.length === 0) return;
      const states = new Map<string, AlertState>(alertRows.map((r) => [r.workspace_id, { threshold: Number(r.low_balance_threshold), armed: r.armed }]));
      const watched = moves.filter((e) => states.has((e.data as { workspace_id: string }).workspace_id));
      const { rows: entries } = await tx.query<{ position: string; balance_after: string }>('SELECT position, balance_after FROM ledger_entries WHERE position = ANY($1)', [
        watched.map((e) => e.position),
      ]);
      const balanceAt = new Map(entries.map((r) => [Number(r.position), Number(r.balance_after)]));
      const changed = new Set<string>();
      for (const event of watched) {
        const workspaceId = (event.data as { workspace_id: string }).workspace_id;
        const balanceAfter = balanceAt.get(event.position);
        if (balanceAfter === undefined) continue;
        const state = states.get(workspaceId)!;
        const decided = decideBalanceAlert(state, { kind: moveOf(event), balanceAfter });
        if (decided.next.armed !== state.armed) changed.add(workspaceId);
        states.set(workspaceId, decided.next);
        if (decided.fire) await fire(tx, event as RecordedEvent<EventData<'LookupCharged'>>, balanceAfter, state.threshold!);
      }
      for (const workspaceId of changed) await tx.query('UPDATE balance_alerts SET armed = $2 WHERE workspace_id = $1', [workspaceId, states.get(workspaceId)!.armed]);
    },
  };

  async function fire(tx: TransactionExecutor, charge: RecordedEvent<EventData<'LookupCharged'>>, balance: number, threshold: number) {
    const workspaceId = charge.data.workspace_id;
    await store.appendWithin(tx, balanceAlertsStream(workspaceId), [
      newEvent('BalanceLow', { workspace_id: workspaceId, balance, low_balance_threshold: threshold, request_id: charge.data.request_id }, charge.data.request_id),
    ]);
    const { rows: owners } = await tx.query<{ email: string }>("SELECT email FROM members WHERE workspace_id = $1 AND role = 'owner' AND removed_at IS NULL ORDER BY joined_at", [workspaceId]);
    const { rows: ws } = await tx.query<{ name: string }>('SELECT name FROM workspaces WHERE id = $1', [workspaceId]);
    const workspaceName = ws[0]?.name ?? workspaceId;
    for (const owner of owners) {
      await enqueueEmail(tx, balanceLowEmail({ to: owner.email, workspaceId, workspaceName, balance, threshold, consoleUrl: options.consoleUrl() }));
    }
    options.logger.info({ workspace_id: workspaceId, request_id: charge.data.request_id, balance, low_balance_threshold: threshold, owners: owners.length }, 'balance fell below the low-balance threshold; owners emailed');
  }
}
