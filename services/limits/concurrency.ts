/**
 * Concurrency-cap port: at most `max` slots held at once per scope (a workspace). A slot is a
 * lease: its holder renews it while it runs, so a slot of an instance that died lapses after
 * `leaseMs` instead of being lost for good.
 */
export interface SlotHandle {
  /** Frees the slot. Calling it again does nothing. */
  release(): Promise<void>;
}

export interface ConcurrencySlots {
  /** A slot in `scope` if fewer than `max` are held, else null. */
  acquire(scope: string, max: number): Promise<SlotHandle | null>;
  /** Stops renewing this instance's slots (they lapse after the lease); does not release them. */
  close(): Promise<void>;
}

export interface ConcurrencySlotsOptions {
  /** How long a slot survives without renewal (default 15 s). */
  leaseMs?: number;
  /** How often held slots are renewed (default leaseMs / 3). */
  renewEveryMs?: number;
  /** False never renews: a holder then behaves like one that died (tests). Default true. */
  renew?: boolean;
  /** Told about a failed renewal; the slot is renewed again on the next tick. */
  onRenewError?: (err: unknown) => void;
}

export const DEFAULT_LEASE_MS = 15_000;

export function assertMax(max: number): void {
  if (!Number.isSafeInteger(max) || max < 0) throw new RangeError(`max must be an integer >= 0, got ${max}`);
}

/**
 * The slots this instance holds, grouped by scope, and one unref'd timer renewing them all. Started
 * with the first slot and kept until close: stopped whenever none was held, it was re-armed for
 * nearly every call at moderate rates (services/common/deadline-ticker.ts says what timers cost).
 */
export class HeldSlots {
  private readonly byScope = new Map<string, Set<string>>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly everyMs: number,
    private readonly enabled: boolean,
    private readonly renewScope: (scope: string, slotIds: string[]) => Promise<void>,
    private readonly onError: (err: unknown) => void,
  ) {}

  add(scope: string, slotId: string): void {
    let ids = this.byScope.get(scope);
    if (!ids) this.byScope.set(scope, (ids = new Set()));
    ids.add(slotId);
    if (this.enabled && !this.closed && !this.timer) {
      this.timer = setInterval(() => this.renewAll(), this.everyMs);
      this.timer.unref();
    }
  }

  /** False when the slot was not held (already released). */
  delete(scope: string, slotId: string): boolean {
    const ids = this.byScope.get(scope);
    if (!ids?.delete(slotId)) return false;
    if (ids.size === 0) this.byScope.delete(scope);
    return true;
  }

  close(): void {
    this.closed = true;
    this.byScope.clear();
    this.stop();
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private renewAll(): void {
    for (const [scope, ids] of this.byScope) {
      this.renewScope(scope, [...ids]).catch(this.onError);
    }
  }
}

export function resolveOptions(options: ConcurrencySlotsOptions) {
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  if (!(leaseMs > 0)) throw new RangeError(`leaseMs must be positive, got ${leaseMs}`);
  return {
    leaseMs,
    renewEveryMs: options.renewEveryMs ?? Math.max(1, Math.floor(leaseMs / 3)),
    renew: options.renew ?? true,
    onRenewError: options.onRenewError ?? (() => {}),
  };
}
