import type { InlineProjection } from '../eventstore/event-store';
import type { SqlExecutor } from '../eventstore/sql';
import type { RecordedEvent } from '../eventstore/types';

// Each handler names its own event's data type; the table maps type names to them.
// biome-ignore lint/suspicious/noExplicitAny: handlers are keyed by event type, each typed by its own signature
export type EventHandler = (tx: SqlExecutor, e: RecordedEvent<any>) => Promise<void>;

/** An inline projection made of one handler per event type; other types cost nothing. */
export function projectionOf(name: string, handlers: Record<string, EventHandler>): InlineProjection & { types: string[] } {
  return {
    name,
    types: Object.keys(handlers),
    async apply(tx, events) {
      for (const e of events) await handlers[e.type]?.(tx, e);
    },
  };
}
