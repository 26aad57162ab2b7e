/**
 * Group commit: calls made while a batch runs wait and go together in the next, so under load many
 * callers share one statement or transaction (and one commit) instead of one each. One batch runs
 * at a time. A batch that throws fails each of its calls with that error.
 */
export class GroupBatcher<I, O> {
  private queue: { item: I; resolve: (output: O) => void; reject: (error: unknown) => void }[] = [];
  private running = false;

  constructor(
    /** Answers the items in their order. */
    private readonly runBatch: (items: I[]) => Promise<O[]>,
    private readonly maxBatch = 128,
  ) {}

  /** Calls waiting for the next batch. */
  get queued(): number {
    return this.queue.length;
  }

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      // Let the calls already read from the sockets join the first batch: on an embedded database
      // (PGlite) a whole batch runs in microtasks, so without this turn of the event loop no
      // second call would ever arrive while one commits and each would pay a commit of its own.
      await new Promise((resolve) => setImmediate(resolve));
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          const outputs = await this.runBatch(batch.map((call) => call.item));
          if (outputs.length !== batch.length) throw new Error(`a batch of ${batch.length} answered ${outputs.length}`);
          for (const [i, call] of batch.entries()) call.resolve(outputs[i]!);
        } catch (error) {
          for (const call of batch) call.reject(error);
        }
      }
    } finally {
      this.running = false;
    }
  }
}
