import type { EventStore, StoreTransaction } from '../eventstore/event-store';

type Job<T> = { run: (tx: StoreTransaction) => Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void };

/**
 * Group commit: every job that arrives while a transaction is in flight joins the next one, so
 * under load many charges share one commit (one WAL flush) instead of one each. A job that
 * throws rolls its batch back; the batch then re-runs one job per transaction so only the
 * faulty job fails.
 */
export class BatchingWriter {
  private queue: Job<any>[] = [];
  private flushing = false;

  constructor(
    private readonly store: EventStore,
    private readonly maxBatch = 64,
  ) {}

  submit<T>(run: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          const results = await this.store.transaction(async (tx) => {
            const out: unknown[] = [];
            for (const job of batch) out.push(await job.run(tx));
            return out;
          });
          batch.forEach((job, i) => job.resolve(results[i]));
        } catch (batchError) {
          if (batch.length === 1) {
            batch[0]!.reject(batchError);
            continue;
          }
          for (const job of batch) {
            await this.store.transaction((tx) => job.run(tx)).then(job.resolve, job.reject);
          }
        }
      }
    } finally {
      this.flushing = false;
    }
  }
}
