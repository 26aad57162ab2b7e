/**
 * Group commit for one kind of statement: calls made while a batch runs wait and go together in
 * the next, so under load many callers share one statement (and one commit) instead of one each.
 * One batch runs at a time. A batch that throws fails each of its calls with that error.
 */
export class GroupBatcher<I, O> {
  private queue: { item: I; resolve: (output: O) => void; reject: (error: unknown) => void }[] = [];
  private running = false;

  constructor(
    /** Answers the items in their order. */
    private readonly runBatch: (items: I[]) => Promise<O[]>,
    private readonly maxBatch = 128,
    /** Told the size of each batch as it starts (a metric). */
    private readonly onBatch: (size: number) => void = () => {},
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      // Calls made in this turn of the event loop join the first batch.
      await new Promise((resolve) => setImmediate(resolve));
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        this.onBatch(batch.length);
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
