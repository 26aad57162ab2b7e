/**
 * The low-balance alert, pure. A workspace with a threshold is "armed" while its balance is at or
 * above it; a charge that leaves the balance below it fires the alert once and disarms it; any
 * ledger event that leaves the balance at or above it (a grant, a refund) re-arms it. Setting or
 * changing the threshold arms it, so the next charge below it alerts.
 */
export interface AlertState {
  /** Credits; null: no alert. */
  threshold: number | null;
  armed: boolean;
}

export interface BalanceMove {
  /** A charge takes credits; a grant or a refund gives them back. */
  kind: 'debit' | 'credit';
  balanceAfter: number;
}

export function decideBalanceAlert(state: AlertState, move: BalanceMove): { next: AlertState; fire: boolean } {
  if (state.threshold === null) return { next: state, fire: false };
  if (move.balanceAfter >= state.threshold) return { next: { ...state, armed: true }, fire: false };
  if (move.kind === 'debit' && state.armed) return { next: { ...state, armed: false }, fire: true };
  return { next: state, fire: false };
}
