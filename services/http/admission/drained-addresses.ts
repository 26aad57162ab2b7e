import type { RateDecision } from '../../limits/rate-limiter';

/**
 * Client addresses whose per-IP bucket this process has seen run dry, until it would be full again.
 *
 * A made-up key is normally refused from the key set, without a query. While that set cannot vouch
 * (being rebuilt after a lost LISTEN connection), checking an unknown key costs a database query:
 * from an address listed here such an attempt pays its per-IP token first, and a refused one is
 * answered 429 without any query, so a flood of made-up keys from one address costs at most one
 * query per token the bucket gives, not one per request.
 */
export class DrainedAddresses {
  private readonly fullAgainAt = new Map<string, number>();

  constructor(
    private readonly options: { maxEntries?: number; now?: () => number } = {},
  ) {}

  /** Whether unknown keys from `address` must take their per-IP token before being looked up. */
  has(address: string): boolean {
    const until = this.fullAgainAt.get(address);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.fullAgainAt.delete(address);
    return false;
  }

  /** Notes the outcome of a take from `address`'s bucket. */
  noteTake(address: string, decision: RateDecision): void {
    if (decision.allowed) {
      // A bucket with tokens to spare is no longer drained; one at its last token stays listed.
      if (decision.remaining > 0) this.fullAgainAt.delete(address);
      return;
    }
    // A flood of distinct addresses must not grow this without bound; forgetting only costs queries.
    if (!this.fullAgainAt.has(address) && this.fullAgainAt.size >= (this.options.maxEntries ?? 100_000)) this.fullAgainAt.clear();
    // At least until the token that ends the refusal is back.
    const seconds = Math.max(decision.resetSeconds, decision.retryAfterSeconds, 1);
    this.fullAgainAt.set(address, this.now() + seconds * 1000);
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}
