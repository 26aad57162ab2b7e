import { describe, expect, it } from 'vitest';
import { DatabaseUnavailableError } from '../../../services/eventstore/unavailable';
import type { IdempotencyStore } from '../../../services/idempotency/idempotency';
import { withReleaseRetries } from '../../../services/idempotency/release-retries';
import { databaseUnavailable, recordingLogger, until } from '../../support/retry-support';

/** A store whose releases fail with `failure` until `up()`: only `abandon` is used here. */
function storeAway(failure: () => Error) {
  let available = false;
  const released: string[] = [];
  const store: IdempotencyStore = {
    begin: async () => ({ kind: 'started', token: 't' }),
    complete: async () => {},
    purgeExpired: async () => 0,
    async abandon(workspaceId, key, token) {
      if (!available) throw failure();
      released.push(`${workspaceId}/${key}/${token}`);
    },
  };
  return { store, released, up: () => (available = true) };
}

describe('withReleaseRetries', () => {
  it('given the database away, when a claim cannot be released, then abandon still rejects and the release is written once the database answers', async () => {
    const db = storeAway(databaseUnavailable);
    const { logger, lines } = recordingLogger();
    const store = withReleaseRetries(db.store, logger, { initialDelayMs: 5, maxDelayMs: 20 });

    await expect(store.abandon('ws_1', 'key-1', 'token-1')).rejects.toBeInstanceOf(DatabaseUnavailableError);
    expect(await until(() => lines.some((l) => l.message === 'Idempotency-Key releases wait for the database'))).toBe(true);
    expect(db.released).toEqual([]);

    db.up();
    expect(await until(() => db.released.length === 1)).toBe(true);
    expect(db.released).toEqual(['ws_1/key-1/token-1']);
    expect(lines.some((l) => l.level === 'info' && l.message === 'Idempotency-Keys claimed during the database outage are released')).toBe(true);
    await store.stop(0);
  });

  it('given a release failing otherwise than with an outage, then it is logged as an error and not retried', async () => {
    const db = storeAway(() => new Error('syntax error at or near "DELETE"'));
    const { logger, lines } = recordingLogger();
    const store = withReleaseRetries(db.store, logger, { initialDelayMs: 5, maxDelayMs: 20 });

    await expect(store.abandon('ws_1', 'key-1', 'token-1')).rejects.toThrow('syntax error');
    expect(await until(() => lines.some((l) => l.level === 'error'))).toBe(true);
    expect(lines.filter((l) => l.level === 'error').map((l) => [l.message, l.fields])).toMatchObject([
      ['Idempotency-Key release failed; it runs anew once its lock lapses', { workspace_id: 'ws_1', idempotency_key: 'key-1' }],
    ]);
    db.up();
    await new Promise((r) => setTimeout(r, 50));
    expect(db.released).toEqual([]);
  });

  it('given releases pending at shutdown, when the database answers, then stop writes them first', async () => {
    const db = storeAway(databaseUnavailable);
    const { logger } = recordingLogger();
    const store = withReleaseRetries(db.store, logger, { initialDelayMs: 5, maxDelayMs: 10 });
    await store.abandon('ws_1', 'key-1', 'token-1').catch(() => {});
    db.up();
    await store.stop(5_000);
    expect(db.released).toEqual(['ws_1/key-1/token-1']);
  });
});
