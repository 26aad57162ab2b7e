import { describe, expect, it } from 'vitest';
import { HashingBusyError, HashingQueue } from '../../../services/members/hashing';
import { HASHING_CONCURRENCY, HASHING_PER_ADDRESS, HASHING_QUEUE } from '../../../services/members/rules';

/** A hash that finishes when the test says so. */
function gate() {
  let open!: () => void;
  const done = new Promise<void>((resolve) => (open = resolve));
  return { open, done };
}

describe('the hashing queue', () => {
  it('given more hashes than cores, then at most HASHING_CONCURRENCY run at once and the rest wait their turn, in order', async () => {
    const queue = new HashingQueue();
    const gates = Array.from({ length: HASHING_CONCURRENCY + 2 }, gate);
    const order: number[] = [];
    const runs = gates.map((g, i) => queue.admit(`10.0.0.${i}`).run(async () => {
      order.push(i);
      await g.done;
    }));
    await new Promise((resolve) => setImmediate(resolve));
    expect(queue.load()).toEqual({ running: HASHING_CONCURRENCY, admitted: gates.length });
    for (const g of gates) g.open();
    await Promise.all(runs);
    expect(order).toEqual(gates.map((_, i) => i));
    expect(queue.load()).toEqual({ running: 0, admitted: 0 });
  });

  it('given one address at its share, then its next hash is refused while another address is admitted', () => {
    const queue = new HashingQueue();
    for (let i = 0; i < HASHING_PER_ADDRESS; i++) queue.admit('10.0.0.1');
    expect(() => queue.admit('10.0.0.1')).toThrow(HashingBusyError);
    expect(() => queue.admit('10.0.0.2')).not.toThrow();
  });

  it('given the instance full across addresses, then any address is refused until a place is given back', () => {
    const queue = new HashingQueue();
    const tickets = Array.from({ length: HASHING_CONCURRENCY + HASHING_QUEUE }, (_, i) => queue.admit(`10.0.1.${i}`));
    expect(() => queue.admit('10.0.2.1')).toThrow(HashingBusyError);
    tickets[0]!.release();
    tickets[0]!.release();
    expect(() => queue.admit('10.0.2.1')).not.toThrow();
    expect(() => queue.admit('10.0.2.2')).toThrow(HashingBusyError);
  });

  it('given a hash that fails, then its place and slot are given back', async () => {
    const queue = new HashingQueue();
    await expect(queue.admit('10.0.0.1').run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(queue.load()).toEqual({ running: 0, admitted: 0 });
  });
});
