import type { ChargeTurn } from '../lookup/lookup-service';

/**
 * The turns of a batch's items, so they are charged in their order whatever order their cache
 * reads finish in: item i's turn begins once every earlier item's turn has ended. An item that
 * ends its turn early (refused, failed, free) frees the later ones without waiting for its own.
 */
export class ChargeOrder {
  private readonly ended: boolean[];
  /** The first item that has not ended its turn: every item up to it may charge. */
  private next = 0;
  /** The turns waited for, by item: resolved when `next` reaches the item. */
  private readonly waiting = new Map<number, { turn: Promise<void>; begin: () => void }>();

  constructor(private readonly size: number) {
    this.ended = new Array<boolean>(size).fill(false);
  }

  /** Resolves when item `index` may charge. */
  turnOf(index: number): Promise<void> {
    this.check(index);
    if (index <= this.next) return Promise.resolve();
    let waited = this.waiting.get(index);
    if (!waited) {
      let begin!: () => void;
      const turn = new Promise<void>((resolve) => (begin = resolve));
      waited = { turn, begin };
      this.waiting.set(index, waited);
    }
    return waited.turn;
  }

  /** Item `index` has submitted its charge, or needs none; calling it again does nothing. */
  end(index: number): void {
    this.check(index);
    this.ended[index] = true;
    while (this.next < this.size && this.ended[this.next]) {
      this.next++;
      this.waiting.get(this.next)?.begin();
      this.waiting.delete(this.next);
    }
  }

  /**
   * Item `index`'s turn for the lookup service: waits for its admission (`admitted`, which throws
   * its refusal) and its turn, then takes a concurrency slot for a live fetch with `takeSlot`
   * (false: none to be had).
   */
  turn(index: number, admitted: () => Promise<void>, takeSlot: () => Promise<boolean>): ChargeTurn {
    return {
      admitted,
      begin: async (liveFetch) => {
        await admitted();
        await this.turnOf(index);
        return liveFetch ? takeSlot() : true;
      },
      end: () => this.end(index),
    };
  }

  private check(index: number): void {
    if (!Number.isInteger(index) || index < 0 || index >= this.size) throw new RangeError(`no item ${index} in a batch of ${this.size}`);
  }
}
