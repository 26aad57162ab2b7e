import type { onRequestAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { checksOrigin, rateLimitPolicy, takesConcurrencySlot, type Admission, type Endpoint } from '../../../contracts/endpoints';
import { ApiError } from '../../../contracts/errors';
import type { KeyAuthenticator } from '../../keys/authenticator';
import type { KeyUseRecorder } from '../../keys/key-use';
import type { KeyAdmission } from '../../limits/admission';
import type { RateLimiter } from '../../limits/rate-limiter';
import { adminToken } from './admin';
import { identifyKey, releaseAdmissionSlot, requireKey } from './api-key';
import { type AnonymousBucket, bucketHooks } from './buckets';
import { requireHost } from './host';
import { csrfToken, type SessionLookup, sameOrigin, signedIn } from './session';

export const ADMISSION_PLUGIN = 'admission';

export interface AdmissionOptions {
  adminToken: string;
  authenticator: KeyAuthenticator;
  keyUse: KeyUseRecorder;
  rateLimiter: RateLimiter;
  keyAdmission?: KeyAdmission;
  anonymous: AnonymousBucket;
  sessions: SessionLookup;
}

type Hook = onRequestAsyncHookHandler;

export interface AdmissionHooks {
  /** The hooks that admit a request to `row`, in order, by its admission and its rate-limit policy. */
  of(row: Endpoint): Hook[];
  /**
   * A path that is no route: the caller's bucket (a valid key's own, else the client address's),
   * then 404; under /admin the admin token first, so that the admin area shows nothing.
   */
  unknownPath: Hook[];
  unknownAdminPath: Hook[];
}

export function admissionHooks(options: AdmissionOptions): AdmissionHooks {
  const buckets = bucketHooks(options.rateLimiter, options.anonymous);
  const admin = adminToken(options.adminToken);
  const key = identifyKey(options);
  const keyWithSlot = identifyKey(options, true);
  const session = signedIn(options.sessions);
  const byAdmission: Record<Admission, (row: Endpoint) => Hook[]> = {
    public: (row) => [...buckets[rateLimitPolicy(row)], ...(checksOrigin(row) ? [sameOrigin] : [])],
    // The key first: a valid one draws on its own bucket, never on the client address's.
    apiKey: (row) => [takesConcurrencySlot(row) ? keyWithSlot : key, ...buckets[rateLimitPolicy(row)], requireKey],
    admin: (row) => [admin, ...buckets[rateLimitPolicy(row)]],
    // The bucket first: every console answer carries its RateLimit headers.
    session: (row) => [...buckets[rateLimitPolicy(row)], session, ...(checksOrigin(row) ? [sameOrigin, csrfToken] : [])],
  };
  return {
    of: (row) => [...byAdmission[row.admission](row), requireHost],
    unknownPath: [key, ...buckets.bucket, requireHost],
    unknownAdminPath: [admin, requireHost],
  };
}

const asArray = <T>(hooks: T | T[] | undefined): T[] => (hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks]);

const notFound = async () => {
  throw new ApiError('route_not_found', { message: 'No endpoint exists at this method and path.' });
};

/**
 * Admission as the endpoint table says: every route registered after this plugin must be a row
 * (services/http/route.ts puts it in the route's config), and gets its row's hooks. A path that is
 * no route gets the caller's bucket, except under /admin, where without the token the admin area
 * shows nothing, not even which paths exist.
 */
export const admissionPlugin = fp<AdmissionOptions>(
  async (app, options) => {
    app.decorateRequest('apiKey', null);
    app.decorateRequest('bucketDecision', null);
    app.decorateRequest('signedIn', null);
    app.decorateRequest('admissionSlot', null);
    const hooks = admissionHooks(options);
    app.addHook('onRoute', (route) => {
      const row = route.config?.endpoint;
      if (!row) throw new Error(`${String(route.method)} ${route.url} is no row of the endpoint table (contracts/endpoints.ts)`);
      route.onRequest = [...hooks.of(row), ...asArray(route.onRequest)];
      if (takesConcurrencySlot(row)) {
        // A slot taken at admission and not claimed by the lookup is freed before the answer
        // leaves (onSend), or when there is none to send (the client went away).
        route.onSend = [...asArray(route.onSend), async (req) => releaseAdmissionSlot(req)];
        route.onResponse = [...asArray(route.onResponse), async (req) => releaseAdmissionSlot(req)];
        route.onRequestAbort = [...asArray(route.onRequestAbort), async (req) => releaseAdmissionSlot(req)];
      }
    });
    app.register(async (scope) => {
      for (const hook of hooks.unknownPath) scope.addHook('onRequest', hook);
      scope.setNotFoundHandler(notFound);
    });
    app.register(
      async (scope) => {
        for (const hook of hooks.unknownAdminPath) scope.addHook('onRequest', hook);
        scope.setNotFoundHandler(notFound);
      },
      { prefix: '/admin' },
    );
  },
  { name: ADMISSION_PLUGIN, fastify: '5.x' },
);
