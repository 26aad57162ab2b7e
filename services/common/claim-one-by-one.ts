/**
 * The one rule for work claimed under a lease from a table shared by instances (watches, the
 * email outbox): claim ONE item, process it, and only then claim the next. A lease is sized for
 * one item (its timeout plus a margin); a batch claimed under one lease and worked through in
 * turn lets the later items' leases lapse while they wait, and another instance then claims and
 * processes them too (a second charge, a second email).
 *
 * Stops when `claim` finds nothing, after `limit` items, or once `stopped()` says so. `process`
 * deals with its own failures; one that throws ends the pass (the item's lease lapses and any
 * instance retries it). Resolves with how many items were processed.
 */
export async function claimOneByOne<T>(options: {
  claim: () => Promise<T | undefined>;
  process: (item: T) => Promise<void>;
  limit?: number;
  stopped?: () => boolean;
}): Promise<number> {
  const { claim, process, limit = Number.POSITIVE_INFINITY, stopped = () => false } = options;
  let processed = 0;
  while (processed < limit && !stopped()) {
    const item = await claim();
    if (item === undefined) break;
    await process(item);
    processed++;
  }
  return processed;
}
