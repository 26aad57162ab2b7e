import { describe, expect, it } from 'vitest';
import type { Logger } from '../../../services/common/log';
import { OutageRetrier, type OutageRetrierOptions } from '../../../services/common/outage-retrier';
import { isDatabaseUnreachable } from '../../../services/eventstore/unavailable';
import { databaseUnavailable, recordingLogger, until } from '../../support/retry-support';

interface Write {
  id: string;
}

const MESSAGES = {
  notTaken: 'not taken',
  waiting: 'waiting',
  caughtUp: 'caught up',
  failed: 'failed',
  stoppedWithPending: 'stopping with writes pending',
};

function retrier(attempt: (item: Write) => Promise<unknown>, logger: Logger, options?: OutageRetrierOptions) {
  return new OutageRetrier<Write>({ idOf: (w) => w.id, attempt, isOutage: isDatabaseUnreachable, logger, fieldsOf: (w) => ({ write_id: w.id }), messages: MESSAGES }, options);
}

/** A database that is away until `up()`; every write attempted meanwhile fails as an outage would. */
function databaseAway() {
  let available = false;
  const written: string[] = [];
  let attempts = 0;
  return {
    written,
    attempts: () => attempts,
    up: () => (available = true),
    async write(item: Write) {
      attempts++;
      if (!available) throw databaseUnavailable();
      written.push(item.id);
    },
  };
}

describe('OutageRetrier', () => {
  it('given a database that answers, when an item is added, then it is written at once', async () => {
    const db = databaseAway();
    db.up();
    const { logger } = recordingLogger();
    const retries = retrier((w) => db.write(w), logger);
    retries.add({ id: 'r1' });
    expect(await until(() => db.written.length === 1)).toBe(true);
    expect(retries.size).toBe(0);
  });

  it('given the database away, when it comes back, then every pending item is written once', async () => {
    const db = databaseAway();
    const { logger, lines } = recordingLogger();
    const retries = retrier((w) => db.write(w), logger, { initialDelayMs: 5, maxDelayMs: 20 });
    for (const id of ['r1', 'r2', 'r3']) retries.add({ id });
    retries.add({ id: 'r2' }); // the same id twice is one item
    expect(await until(() => db.attempts() >= 4)).toBe(true);
    expect(retries.size).toBe(3);
    expect(db.written).toEqual([]);

    db.up();
    expect(await until(() => retries.size === 0)).toBe(true);
    expect([...db.written].sort()).toEqual(['r1', 'r2', 'r3']);
    expect(lines.some((l) => l.level === 'warn' && l.message === 'waiting')).toBe(true);
    expect(lines.some((l) => l.level === 'info' && l.message === 'caught up')).toBe(true);
  });

  it('given a failure that is not an outage, then the item is logged with its fields and dropped, and the others still go', async () => {
    const written: string[] = [];
    const { logger, lines } = recordingLogger();
    const retries = retrier(async (w) => {
      if (w.id === 'bad') throw new Error('no workspace ws_1');
      written.push(w.id);
    }, logger);
    retries.add({ id: 'bad' });
    retries.add({ id: 'good' });
    expect(await until(() => retries.size === 0)).toBe(true);
    expect(written).toEqual(['good']);
    expect(lines.filter((l) => l.level === 'error' && l.message === 'failed').map((l) => l.fields)).toMatchObject([{ write_id: 'bad' }]);
  });

  it('given items pending at shutdown, when the database stays away, then stop gives up in time and says so', async () => {
    const db = databaseAway();
    const { logger, lines } = recordingLogger();
    const retries = retrier((w) => db.write(w), logger, { initialDelayMs: 5, maxDelayMs: 10 });
    retries.add({ id: 'r1' });
    await retries.stop(100);
    expect(retries.size).toBe(1);
    expect(lines.some((l) => l.level === 'warn' && l.message === 'stopping with writes pending')).toBe(true);
    retries.add({ id: 'r2' });
    expect(retries.size).toBe(1);
    expect(lines.some((l) => l.level === 'error' && l.message === 'not taken')).toBe(true);
  });

  it('given items pending at shutdown, when the database answers, then stop writes them first', async () => {
    const db = databaseAway();
    const { logger } = recordingLogger();
    const retries = retrier((w) => db.write(w), logger, { initialDelayMs: 5, maxDelayMs: 10 });
    retries.add({ id: 'r1' });
    db.up();
    await retries.stop(5_000);
    expect(db.written).toEqual(['r1']);
    expect(retries.size).toBe(0);
  });

  it('given too many pending, then a new one is not taken, with an error logged', async () => {
    const db = databaseAway();
    const { logger, lines } = recordingLogger();
    const retries = retrier((w) => db.write(w), logger, { initialDelayMs: 50, maxPending: 2 });
    for (const id of ['r1', 'r2', 'r3']) retries.add({ id });
    expect(retries.size).toBe(2);
    expect(lines.filter((l) => l.level === 'error').map((l) => [l.message, l.fields])).toEqual([['not taken', { write_id: 'r3' }]]);
    await retries.stop(0);
  });
});
