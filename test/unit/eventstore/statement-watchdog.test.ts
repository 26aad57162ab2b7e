import type pg from 'pg';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { backgroundLogger } from '../../../services/common/log';
import { StatementWatchdog } from '../../../services/eventstore/statement-watchdog';

/** A connection as pg exposes it to the watchdog: what its socket was destroyed with, if it was. */
function connection() {
  const destroyed: (Error | undefined)[] = [];
  const client = { connection: { stream: { destroy: (error?: Error) => void destroyed.push(error) } } } as unknown as pg.ClientBase;
  return { client, destroyed };
}

/** A statement the test answers by hand. */
function pending() {
  let answer!: () => void;
  const promise = new Promise<void>((resolve) => (answer = resolve));
  return { promise, answer };
}

describe('StatementWatchdog', () => {
  let watchdog: StatementWatchdog;
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => {
    watchdog.stop();
    vi.useRealTimers();
  });

  it('given a statement left unanswered, then its connection is destroyed with "Query read timeout" past the bound, never before', async () => {
    watchdog = new StatementWatchdog(1_000, backgroundLogger('silent'));
    // Sent just before a tick: the tick it is counted from must not shorten its bound.
    await vi.advanceTimersByTimeAsync(49);
    const { client, destroyed } = connection();
    const statement = pending();
    const running = watchdog.run(client, () => statement.promise);

    await vi.advanceTimersByTimeAsync(999);
    expect(destroyed).toEqual([]);
    await vi.advanceTimersByTimeAsync(2 * 50);
    expect(destroyed.map((e) => e?.message)).toEqual(['Query read timeout']);

    // Destroyed once: later ticks leave it alone while its failure makes its way back.
    await vi.advanceTimersByTimeAsync(1_000);
    expect(destroyed).toHaveLength(1);
    statement.answer();
    await running;
  });

  it('given statements answered within the bound, one after another on one connection, then none is cut short', async () => {
    watchdog = new StatementWatchdog(1_000, backgroundLogger('silent'));
    const { client, destroyed } = connection();
    for (let i = 0; i < 5; i++) {
      const statement = pending();
      const running = watchdog.run(client, () => statement.promise);
      await vi.advanceTimersByTimeAsync(900);
      statement.answer();
      await running;
    }
    expect(destroyed).toEqual([]);
  });

  it('given a statement that fails, then its error reaches the caller and the connection is no longer watched', async () => {
    watchdog = new StatementWatchdog(1_000, backgroundLogger('silent'));
    const { client, destroyed } = connection();
    await expect(watchdog.run(client, () => Promise.reject(new Error('syntax error')))).rejects.toThrow('syntax error');
    await vi.advanceTimersByTimeAsync(5_000);
    expect(destroyed).toEqual([]);
  });
});
