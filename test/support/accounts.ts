import type { EventStore } from '../../services/eventstore/event-store';
import { Keys } from '../../services/keys/keys';
import { ReadModels } from '../../services/read-models/read-models';
import { Workspaces } from '../../services/workspaces/workspaces';

/** For suites that run no key authenticator: a revocation then has no key cache to reach. */
const NO_KEY_CACHE = { revoked: async () => {} };

/** Workspaces, keys and the reads over one store, as the composition root (services/api/server.ts) wires them. */
export function accountsOf(store: EventStore, authenticator: ConstructorParameters<typeof Keys>[1] = NO_KEY_CACHE) {
  return { workspaces: new Workspaces(store), keys: new Keys(store, authenticator), reads: new ReadModels(store.sql) };
}
