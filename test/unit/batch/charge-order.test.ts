import { describe, expect, it } from 'vitest';
import { ChargeOrder } from '../../../services/batch/charge-order';

const tick = () => new Promise((resolve) => setImmediate(resolve));

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
    const live = order.turn(0, async () => {
      slotsTaken.push(0);
      return false;
    });
    const hit = order.turn(1, async () => {
      slotsTaken.push(1);
      return true;
    });
    expect(await live.begin(true)).toBe(false);
    live.end();
    expect(await hit.begin(false)).toBe(true);
    expect(slotsTaken).toEqual([0]);
  });

  it('ending a turn twice does nothing; an index outside the batch is a bug', () => {
    const order = new ChargeOrder(1);
    order.end(0);
    order.end(0);
    expect(() => order.end(1)).toThrow(RangeError);
  });
});
