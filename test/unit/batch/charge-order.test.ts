import { describe, expect, it } from 'vitest';
import { ChargeOrder } from '../../../services/batch/charge-order';

const tick = () => new Promise((resolve) => setImmediate(resolve));
const admittedAtOnce = async () => undefined;

describe('ChargeOrder', () => {
  it('given items ready in reverse order, when each charges in its turn, then they charge in item order', async () => {
    const order = new ChargeOrder(3);
    const charged: number[] = [];
    const item = async (index: number, readyAfter: number) => {
      for (let i = 0; i < readyAfter; i++) await tick();
      await order.turnOf(index);
      charged.push(index);
      order.end(index);
    };
    await Promise.all([item(0, 3), item(1, 2), item(2, 0)]);
    expect(charged).toEqual([0, 1, 2]);
  });

  it('given an item that ends its turn before it began (refused early), then it does not let a later item pass an earlier one', async () => {
    const order = new ChargeOrder(3);
    const charged: number[] = [];
    order.end(1);
    const late = order.turnOf(2).then(() => charged.push(2));
    await tick();
    expect(charged).toEqual([]);
    await order.turnOf(0);
    charged.push(0);
    order.end(0);
    await late;
    expect(charged).toEqual([0, 2]);
  });

  it('given the lookup service\'s turn, when a live fetch begins, then its slot is taken in the turn; a cache hit takes none', async () => {
    const order = new ChargeOrder(2);
    const slotsTaken: number[] = [];
    const live = order.turn(0, admittedAtOnce, async () => {
      slotsTaken.push(0);
      return false;
    });
    const hit = order.turn(1, admittedAtOnce, async () => {
      slotsTaken.push(1);
      return true;
    });
    expect(await live.begin(true)).toBe(false);
    live.end();
    expect(await hit.begin(false)).toBe(true);
    expect(slotsTaken).toEqual([0]);
  });

  it('given an item whose token is not yet known, when its turn begins, then it waits for it, and a refusal stops it before its slot', async () => {
    const order = new ChargeOrder(2);
    let knowTokens!: (granted: number) => void;
    const granted = new Promise<number>((resolve) => (knowTokens = resolve));
    const admittedIf = (index: number) => async () => {
      if (index >= (await granted)) throw new Error(`item ${index} refused`);
    };
    const slotsTaken: number[] = [];
    const takeSlot = (index: number) => async () => {
      slotsTaken.push(index);
      return true;
    };
    const first = order.turn(0, admittedIf(0), takeSlot(0));
    const second = order.turn(1, admittedIf(1), takeSlot(1));
    const began = first.begin(true);
    const refused = second.begin(true).catch((err: Error) => err.message);
    await tick();
    expect(slotsTaken).toEqual([]);
    knowTokens(1);
    expect(await began).toBe(true);
    first.end();
    expect(await refused).toBe('item 1 refused');
    await expect(second.admitted()).rejects.toThrow('item 1 refused');
    expect(slotsTaken).toEqual([0]);
  });

  it('given two waits for one item\'s turn, when the items before it end, then both resolve', async () => {
    const order = new ChargeOrder(2);
    const waits = [order.turnOf(1), order.turnOf(1)];
    order.end(0);
    await expect(Promise.all(waits)).resolves.toEqual([undefined, undefined]);
  });

  it('ending a turn twice does nothing; an index outside the batch is a bug', () => {
    const order = new ChargeOrder(1);
    order.end(0);
    order.end(0);
    expect(() => order.end(1)).toThrow(RangeError);
  });
});
