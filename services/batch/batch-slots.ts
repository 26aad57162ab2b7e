import type { ConcurrencySlots, SlotHandle } from '../limits/concurrency';

/**
 * The concurrency slots a batch's live fetches hold, one per item fetched live, out of the
 * workspace's `max_concurrency` (shared with its other calls, on every instance). While the
 * batch itself holds a slot, an item that finds none free waits for one of the batch's to be
 * released rather than being refused: a batch larger than `max_concurrency` runs through it.
 * Only when every slot is held by other calls is an item refused (429 `concurrency_limited`).
 */
export class BatchSlots {
  private held = 0;
  private waiting: (() => void)[] = [];

  constructor(
    private readonly slots: ConcurrencySlots,
    private readonly scope: string,
    private readonly max: number,
  ) {}

  /** A slot, or null when none is free and the batch holds none to wait for. */
  async acquire(): Promise<SlotHandle | null> {
    for (;;) {
      const slot = await this.slots.acquire(this.scope, this.max);
      if (slot) return this.track(slot);
      if (this.held === 0) return null;
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
  }

  private track(slot: SlotHandle): SlotHandle {
    this.held++;
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        try {
          await slot.release();
        } finally {
          this.held--;
          // Every waiter tries again: one gets the slot, the others wait on (or, the batch holding none, are refused).
          const woken = this.waiting;
          this.waiting = [];
          for (const wake of woken) wake();
        }
      },
    };
  }
}
