import type { Endpoint } from '../../contracts/endpoints';
import type { ErrorCode } from '../../contracts/errors';
import type { Config } from '../config/config';
import type { EventStore } from '../eventstore/event-store';
import type { InstanceLifecycle } from '../health/readiness';
import type { IdempotencyStore } from '../idempotency/idempotency';
import type { Ledger } from '../ledger/ledger';
import type { ReadModels } from '../read-models/read-models';
import type { Workspaces } from '../workspaces/workspaces';
import type { KeyAdmission } from '../limits/admission';
import type { ConcurrencySlots, SlotHandle } from '../limits/concurrency';
import type { RateDecision, RateLimiter } from '../limits/rate-limiter';
import type { SessionMember } from '../sessions/sessions';
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
  /** A cached key's mark, token and (single lookups) slot at once: with Redis (admission-redis.ts). */
  keyAdmission?: KeyAdmission;
  idempotency: IdempotencyStore;
  /** Relay lag, when the Kafka relay runs in this process. */
  relayLag?: () => Promise<unknown>;
  /** Where the instance is in its life, for GET /v1/health/ready; default: started (route tests). */
  lifecycle?: InstanceLifecycle;
  /** Where the app's log goes (tests read it); default: stdout. */
  logStream?: NodeJS.WritableStream;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Decorated by the deps plugin (deps-plugin.ts), which every route plugin depends on. */
    deps: AppDeps;
    shedder: LoadShedder;
  }
  interface FastifyRequest {
    /** The key that calls (admission `apiKey`), once checked. */
    apiKey: AuthenticatedKey | null;
    /** A token the key check already took (the Redis fast path, a drained address's), for the bucket step. */
    bucketDecision: RateDecision | null;
    /**
     * The concurrency slot taken with the key's token (a single lookup's admission, Redis), until
     * the lookup claims it (claimAdmissionSlot); released when the answer goes out otherwise.
     */
    admissionSlot: SlotHandle | null;
    /** The console member signed in (admission `session`). */
    signedIn: { member: SessionMember; sessionId: string } | null;
    /** The error this request was answered with (set by renderError), for its access line and metrics. */
    errorAnswer: { code: ErrorCode; creditsCharged: number } | null;
  }
  interface FastifyContextConfig {
    /** The route's row of the endpoint table (set by route()): its admission, its rate-limit policy. */
    endpoint?: Endpoint;
  }
}
