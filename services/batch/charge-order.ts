import type { ChargeTurn } from '../lookup/lookup-service';

/**
 * The turns of a batch's items, so they are charged in their order whatever order their cache
 * reads finish in: item i's turn begins once every earlier item's turn has ended. An item that
 * ends its turn early (refused, failed, free) frees the later ones without waiting for its own.
 */
export class ChargeOrder {
  private readonly ends: (() => void)[] = [];
  /** turns[i] resolves once every item before i has ended its turn. */
  private readonly turns: Promise<void>[] = [];

  constructor(size: number) {
    let earlier: Promise<void> = Promise.resolve();
    for (let i = 0; i < size; i++) {
      this.turns.push(earlier);
      const ended = new Promise<void>((resolve) => this.ends.push(resolve));
      earlier = Promise.all([earlier, ended]).then(() => undefined);
    }
  }

  /** Resolves when item `index` may charge. */
  turnOf(index: number): Promise<void> {
    return this.at(this.turns, index);
  }

  /** Item `index` has submitted its charge, or needs none; calling it again does nothing. */
  end(index: number): void {
    this.at(this.ends, index)();
  }

  /**
   * Item `index`'s turn for the lookup service: waits for it, then takes a concurrency slot for a
   * live fetch with `takeSlot` (false: none to be had).
   */
  turn(index: number, takeSlot: () => Promise<boolean>): ChargeTurn {
    return {
      begin: async (liveFetch) => {
        await this.turnOf(index);
        return liveFetch ? takeSlot() : true;
      },
      end: () => this.end(index),
    };
  }

  private at<T>(list: T[], index: number): T {
    const found = list[index];
    if (found === undefined) throw new RangeError(`no item ${index} in a batch of ${list.length}`);
    return found;
  }
}
