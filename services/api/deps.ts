import type { Area, RateLimitPolicy } from '../../contracts/endpoints';
import type { ErrorCode } from '../../contracts/errors';
import type { Config } from '../config/config';
import type { EventStore } from '../eventstore/event-store';
import type { InstanceLifecycle } from '../health/readiness';
import type { IdempotencyStore } from '../idempotency/idempotency';
import type { Ledger } from '../ledger/ledger';
import type { ReadModels } from '../read-models/read-models';
import type { Workspaces } from '../workspaces/workspaces';
import type { ConcurrencySlots } from '../limits/concurrency';
import type { RateLimiter } from '../limits/rate-limiter';
import type { LookupService } from '../lookup/lookup-service';
import type { AuthenticatedKey, KeyAuthenticator } from '../keys/authenticator';
import type { KeyUseRecorder } from '../keys/key-use';
import type { Keys } from '../keys/keys';
import type { LoadShedder } from './load-shedder';

/** What the HTTP layer is built from: every adapter, chosen by the composition root (server.ts). */
export interface AppDeps {
  config: Config;
  store: EventStore;
  /** Charges, refunds and credits. */
  ledger: Ledger;
  workspaces: Workspaces;
  keys: Keys;
  readModels: ReadModels;
  lookups: LookupService;
  authenticator: KeyAuthenticator;
  /** Each key's last use (`last_used_at`): every authenticated request is one. */
  keyUse: KeyUseRecorder;
  rateLimiter: RateLimiter;
  slots: ConcurrencySlots;
  idempotency: IdempotencyStore;
  /** Relay lag, when the Kafka relay runs in this process. */
  relayLag?: () => Promise<unknown>;
  /** Where the instance is in its life, for GET /v1/health/ready; default: started (route tests). */
  lifecycle?: InstanceLifecycle;
  /** Where the app's log goes (tests read it); default: stdout. */
  logStream?: NodeJS.WritableStream;
}

/** The area of a request: its route's (the route table's, or the console's own), or `unknown` on no route. */
export type RequestArea = Area | 'console' | 'unknown';

declare module 'fastify' {
  interface FastifyInstance {
    /** Decorated by the deps plugin (plugins/deps.ts), which every route plugin depends on. */
    deps: AppDeps;
    shedder: LoadShedder;
  }
  interface FastifyRequest {
    apiKey: AuthenticatedKey | null;
    /** The error this request was answered with (set by renderError), for its access line and metrics. */
    errorAnswer: { code: ErrorCode; creditsCharged: number } | null;
  }
  interface FastifyContextConfig {
    area?: Area | 'console';
    /** The route table's `rateLimit`. */
    rateLimit?: RateLimitPolicy;
  }
}
