import { describe, expect, it } from 'vitest';
import type { Logger } from '../../../services/common/log';
import { DatabaseUnavailableError } from '../../../services/eventstore/unavailable';
import type { VoidCommand } from '../../../services/ledger/commands/void-charge';
import { RefundRetrier } from '../../../services/ledger/refund-retrier';

const refund = (requestId: string): VoidCommand => ({ workspaceId: 'ws_1', requestId, keyId: 'key_1', operation: 'company', cacheStatus: 'MISS' });

function recordingLogger() {
  const lines: Array<{ level: string; message?: string }> = [];
  const logger: Logger = {
    info: (_f, message) => lines.push({ level: 'info', message }),
    warn: (_f, message) => lines.push({ level: 'warn', message }),
    error: (_f, message) => lines.push({ level: 'error', message }),
  };
  return { lines, logger };
}

async function until(check: () => boolean, withinMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 5));
  }
  return true;
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
    async write(cmd: VoidCommand) {
      attempts++;
      if (!available) throw new DatabaseUnavailableError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
      written.push(cmd.requestId);
    },
  };
}

describe('RefundRetrier', () => {
  it('given a database that answers, when a refund is added, then it is written at once', async () => {
    const db = databaseAway();
    db.up();
    const { logger } = recordingLogger();
    const retrier = new RefundRetrier((cmd) => db.write(cmd), logger);
    retrier.add(refund('r1'));
    expect(await until(() => db.written.length === 1)).toBe(true);
    expect(retrier.size).toBe(0);
  });

  it('given the database away, when it comes back, then every pending refund is written once', async () => {
    const db = databaseAway();
    const { logger, lines } = recordingLogger();
    const retrier = new RefundRetrier((cmd) => db.write(cmd), logger, { initialDelayMs: 5, maxDelayMs: 20 });
    for (const id of ['r1', 'r2', 'r3']) retrier.add(refund(id));
    retrier.add(refund('r2')); // the same request twice is one refund
    expect(await until(() => db.attempts() >= 4)).toBe(true);
    expect(retrier.size).toBe(3);
    expect(db.written).toEqual([]);

    db.up();
    expect(await until(() => retrier.size === 0)).toBe(true);
    expect([...db.written].sort()).toEqual(['r1', 'r2', 'r3']);
    expect(lines.some((l) => l.level === 'warn' && l.message === 'refunds wait for the database')).toBe(true);
    expect(lines.some((l) => l.level === 'info' && l.message === 'refunds owed during the database outage are written')).toBe(true);
  });

  it('given a failure that is not an outage, then the refund is logged and left to the sweeper, and the others still go', async () => {
    const written: string[] = [];
    const { logger, lines } = recordingLogger();
    const retrier = new RefundRetrier(async (cmd) => {
      if (cmd.requestId === 'bad') throw new Error('no workspace ws_1');
      written.push(cmd.requestId);
    }, logger);
    retrier.add(refund('bad'));
    retrier.add(refund('good'));
    expect(await until(() => retrier.size === 0)).toBe(true);
    expect(written).toEqual(['good']);
    expect(lines.some((l) => l.level === 'error' && l.message === 'refund failed; left to the abandoned-charge sweeper')).toBe(true);
  });

  it('given refunds pending at shutdown, when the database stays away, then stop gives up in time and says so', async () => {
    const db = databaseAway();
    const { logger, lines } = recordingLogger();
    const retrier = new RefundRetrier((cmd) => db.write(cmd), logger, { initialDelayMs: 5, maxDelayMs: 10 });
    retrier.add(refund('r1'));
    await retrier.stop(100);
    expect(retrier.size).toBe(1);
    expect(lines.some((l) => l.level === 'warn' && l.message?.startsWith('stopping with refunds unwritten'))).toBe(true);
    retrier.add(refund('r2'));
    expect(retrier.size).toBe(1);
  });

  it('given refunds pending at shutdown, when the database answers, then stop writes them first', async () => {
    const db = databaseAway();
    const { logger } = recordingLogger();
    const retrier = new RefundRetrier((cmd) => db.write(cmd), logger, { initialDelayMs: 5, maxDelayMs: 10 });
    retrier.add(refund('r1'));
    db.up();
    await retrier.stop(5_000);
    expect(db.written).toEqual(['r1']);
    expect(retrier.size).toBe(0);
  });

  it('given too many pending, then a new one is left to the sweeper with an error logged', async () => {
    const db = databaseAway();
    const { logger, lines } = recordingLogger();
    const retrier = new RefundRetrier((cmd) => db.write(cmd), logger, { initialDelayMs: 50, maxPending: 2 });
    for (const id of ['r1', 'r2', 'r3']) retrier.add(refund(id));
    expect(retrier.size).toBe(2);
    expect(lines.filter((l) => l.level === 'error')).toHaveLength(1);
    await retrier.stop(0);
  });
});
