import type pg from 'pg';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { backgroundLogger } from '../../../services/common/log';
import { StatementWatchdog } from '../../../services/eventstore/statement-watchdog';
import { isDatabaseUnreachable } from '../../../services/eventstore/unavailable';

/** A connection as pg exposes it to the watchdog: what its socket was destroyed with, if it was. */
function connection() {
  const destroyed: (Error | undefined)[] = [];
  const client = { connection: { stream: { destroy: (error?: Error) => void destroyed.push(error) } } } as unknown as pg.ClientBase;
  return { client, destroyed };
}

describe('StatementWatchdog', () => {
  let watchdog: StatementWatchdog;
  beforeEach(() => {
    vi.useFakeTimers();
    watchdog = new StatementWatchdog(1_000, backgroundLogger('silent'));
  });
  afterEach(() => {
    watchdog.stop();
    vi.useRealTimers();
  });

  it('given a statement left unanswered, then its connection is destroyed past the bound with an error that reads as an outage', async () => {
    const { client, destroyed } = connection();
    let answer!: () => void;
    const running = watchdog.run(client, () => new Promise<void>((resolve) => (answer = resolve)));
    await vi.advanceTimersByTimeAsync(990);
    expect(destroyed).toEqual([]);
    await vi.advanceTimersByTimeAsync(150);
    expect(destroyed).toHaveLength(1);
    expect(destroyed[0]?.message).toBe('Query read timeout');
    expect(isDatabaseUnreachable(destroyed[0])).toBe(true);
    answer();
    await running;
  });

  it('given statements answered in time, one after another on one connection, then none is cut short', async () => {
    const { client, destroyed } = connection();
    for (let i = 0; i < 5; i++) {
      await watchdog.run(client, () => vi.advanceTimersByTimeAsync(900));
    }
    expect(destroyed).toEqual([]);
  });

  it('given a statement that fails, then its error reaches the caller and its connection is left alone', async () => {
    const { client, destroyed } = connection();
    await expect(watchdog.run(client, () => Promise.reject(new Error('syntax error')))).rejects.toThrow('syntax error');
    await vi.advanceTimersByTimeAsync(5_000);
    expect(destroyed).toEqual([]);
  });
});
