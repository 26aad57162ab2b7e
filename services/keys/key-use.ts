import { backgroundLogger, everyNthError, type Logger } from '../common/log';
import type { SqlExecutor } from '../eventstore/sql';

/** How often the noted uses are written: the key list's `last_used_at` lags by at most this. */
const FLUSH_EVERY_MS = 1000;

/**
 * Each key's last use by any authenticated request (a lookup, a cache call, a replay, a refusal
 * made with the key), for `last_used_at`. Noting one is a map write on the request path; the
 * latest use per key is written in one batched upsert a second, so a busy key costs one row
 * write a second per instance, not one per request. A failed write keeps its uses for the next.
 */
export class KeyUseRecorder {
  private pending = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private readonly writeFailed: (err: unknown) => void;
  private readonly clock: () => number;

  constructor(
    private readonly sql: SqlExecutor,
    options: { flushEveryMs?: number; logger?: Logger; clock?: () => number } = {},
  ) {
    this.clock = options.clock ?? Date.now;
    this.writeFailed = everyNthError(options.logger ?? backgroundLogger(), 'key uses not written; kept for the next try');
    this.timer = setInterval(() => void this.flush(), options.flushEveryMs ?? FLUSH_EVERY_MS);
    this.timer.unref();
  }

  note(keyId: string): void {
    const at = this.clock();
    if ((this.pending.get(keyId) ?? 0) < at) this.pending.set(keyId, at);
  }

  /** Writes what is noted so far; one write at a time, and it never throws (failures are logged). */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.sql.query(
        `INSERT INTO key_last_seen (key_id, last_seen_at) SELECT * FROM unnest($1::text[], $2::timestamptz[])
         ON CONFLICT (key_id) DO UPDATE SET last_seen_at = GREATEST(key_last_seen.last_seen_at, EXCLUDED.last_seen_at)`,
        [[...batch.keys()], [...batch.values()].map((t) => new Date(t).toISOString())],
      );
    } catch (err) {
      for (const [keyId, at] of batch) if ((this.pending.get(keyId) ?? 0) < at) this.pending.set(keyId, at);
      this.writeFailed(err);
    }
  }
}
