import { backgroundLogger, type Logger } from '../common/log';
import { OutageRetrier } from '../common/outage-retrier';
import type { EventStore } from '../eventstore/event-store';
import { isDatabaseUnreachable } from '../eventstore/unavailable';
import { BatchingWriter } from './batching-writer';
import { charge, type ChargeCommand, type ChargeResult } from './commands/charge';
import { grantCredits } from './commands/grant-credits';
import { recordUncharged } from './commands/record-uncharged';
import { refundAbandonedCharges, settle, type SettleCommand, type SettleResult } from './commands/settle';
import { voidCharge, type VoidCommand, type VoidResult } from './commands/void-charge';

// The facade's vocabulary, for the API and the lookup service.
export type { ChargeCommand, ChargeResult } from './commands/charge';
export type { SettleCommand } from './commands/settle';
export type { VoidCommand } from './commands/void-charge';
export { BalanceLimitError, UnknownWorkspaceError } from './errors';

/**
 * The money side: charges, refunds and credits. Each method is one command (services/ledger/commands);
 * this only wires them to the store and the one batching writer they share. Workspaces, keys and
 * the reads have their own homes (services/workspaces, services/keys, services/read-models).
 */
export class Ledger {
  private readonly writer: BatchingWriter;
  /**
   * Refunds owed at once but not writable while the database is out of reach: written within about
   * a second of it answering again, by this instance. If the process dies first, the abandoned-charge
   * sweeper of any instance refunds them later; every attempt is safe to repeat.
   */
  private readonly refunds: OutageRetrier<VoidCommand>;

  constructor(
    private readonly store: EventStore,
    options: { logger?: Logger } = {},
  ) {
    this.writer = new BatchingWriter(store);
    const log = options.logger ?? backgroundLogger();
    this.refunds = new OutageRetrier<VoidCommand>({
      idOf: (cmd) => cmd.requestId,
      attempt: async (cmd) => {
        const { kept } = await this.voidCharge(cmd);
        // Only when a settle with a partial refund committed though its caller never heard: the
        // one refund a charge may have is spent, so this difference to the answer stays.
        if (kept > 0) log.error({ request_id: cmd.requestId, workspace_id: cmd.workspaceId, kept }, 'a call answered "nothing charged" keeps credits');
      },
      isOutage: isDatabaseUnreachable,
      logger: log,
      fieldsOf: (cmd) => ({ request_id: cmd.requestId, workspace_id: cmd.workspaceId }),
      messages: {
        notTaken: 'refund not retried here; the abandoned-charge sweeper will make it',
        waiting: 'refunds wait for the database',
        caughtUp: 'refunds owed during the database outage are written',
        failed: 'refund failed; left to the abandoned-charge sweeper',
        stoppedWithPending: 'stopping with refunds unwritten; the abandoned-charge sweeper will make them',
      },
    });
  }

  /** Writes the refunds still owed (bounded wait); what cannot be written is left to the sweeper. */
  async close(): Promise<void> {
    await this.refunds.stop();
  }

  grantCredits(id: string, amount: number, reason?: string): Promise<{ balance: number }> {
    return grantCredits(this.writer, { workspaceId: id, amount, reason });
  }

  /** Charges a call when the balance covers it, in the next batch of the writer. */
  charge(cmd: ChargeCommand): Promise<ChargeResult> {
    return charge(this.writer, cmd);
  }

  /** Records what a live lookup ended in, refunding at most once per charge. */
  settle(cmd: SettleCommand): Promise<SettleResult> {
    return settle(this.writer, cmd);
  }

  /**
   * Makes a call cost nothing whatever its charge reached: the caller was answered "nothing
   * charged" because the outcome could not be recorded (or the charge's own commit was not
   * confirmed). Safe to repeat; does nothing when the charge never committed.
   */
  voidCharge(cmd: VoidCommand): Promise<VoidResult> {
    return voidCharge(this.writer, cmd);
  }

  /** voidCharge now, and again until it goes through while the database is unavailable. */
  voidChargeEventually(cmd: VoidCommand): void {
    this.refunds.add(cmd);
  }

  /** See refundAbandonedCharges in commands/settle.ts. */
  refundAbandonedCharges(graceMs: number): Promise<number> {
    return refundAbandonedCharges(this.store, this.writer, graceMs);
  }

  /** A call that charged nothing (refused, or a free not-found from cache), for usage; resolves with the balance. */
  recordUncharged(cmd: Omit<SettleCommand, 'refund' | 'entityEvents'>): Promise<number | null> {
    return recordUncharged(this.writer, cmd);
  }
}
