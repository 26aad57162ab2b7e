/**
 * Concurrent calls with the same key share one piece of work; the entry is dropped when the work
 * settles, so the next call starts afresh (this is not a cache).
 */
export class SingleFlight<T> {
  private readonly inFlight = new Map<string, Promise<T>>();

  /** @param copyForFollower gives each caller that joined an existing flight its own copy. */
  constructor(private readonly copyForFollower: (value: T) => T = (value) => value) {}

  run(key: string, work: () => Promise<T>): Promise<T> {
    const existing = this.inFlight.get(key);
    if (existing) return existing.then(this.copyForFollower);
    const flight = Promise.resolve()
      .then(work)
      .finally(() => {
        if (this.inFlight.get(key) === flight) this.inFlight.delete(key);
      });
    this.inFlight.set(key, flight);
    return flight;
  }

  /** Keys with work in flight right now. */
  get size(): number {
    return this.inFlight.size;
  }
}
