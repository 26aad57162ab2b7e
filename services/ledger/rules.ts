/**
 * Pure rules of the credits ledger. The SQL projections apply their outcome; the audit replays
 * the log through them; nothing here does I/O.
 */

export type ChargeDecision = { kind: 'charge'; credits: number; balanceAfter: number } | { kind: 'insufficient_credits'; balance: number };

/** A call is admitted when the balance covers its success price; the balance never goes negative. */
export function decideCharge(balance: number, price: number): ChargeDecision {
  if (!Number.isInteger(price) || price < 0) throw new RangeError(`bad price ${price}`);
  return balance >= price ? { kind: 'charge', credits: price, balanceAfter: balance - price } : { kind: 'insufficient_credits', balance };
}

export interface ChargeState {
  credits: number;
  refundedCredits: number | null;
}

/**
 * What a refund of a charge may return: at most what was charged, and only once per charge.
 * `owed` is what the outcome says should come back (the whole charge for a failure, the
 * difference for a not-found priced lower than the success).
 */
export function decideRefund(charge: ChargeState | undefined, owed: number): { kind: 'refund'; credits: number } | { kind: 'nothing' } {
  if (!charge || charge.refundedCredits !== null || owed <= 0) return { kind: 'nothing' };
  return { kind: 'refund', credits: Math.min(owed, charge.credits) };
}
