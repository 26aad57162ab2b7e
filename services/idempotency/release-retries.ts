import type { Logger } from '../common/log';
import { OutageRetrier, type OutageRetrierOptions } from '../common/outage-retrier';
import { isDatabaseUnreachable } from '../eventstore/unavailable';
import type { IdempotencyStore } from './idempotency';

interface Release {
  workspaceId: string;
  key: string;
  token: string;
}

/**
 * `store`, with each claim whose release (`abandon`) failed retried in the background until the
 * database takes it: a client retrying its 503 with the same key runs it within about a second of
 * the database answering again, not 409 `idempotency_key_in_use` until the lock lapses. If this
 * instance dies first, the claim lapses after IDEMPOTENCY_LOCK_TTL_MS as before. `abandon` still
 * rejects, so that its caller logs the failure with its request.
 */
export function withReleaseRetries(
  store: IdempotencyStore,
  logger: Logger,
  options: OutageRetrierOptions = {},
): IdempotencyStore & { stop(timeoutMs?: number): Promise<void> } {
  const releases = new OutageRetrier<Release>(
    {
      // A lock token is drawn afresh for every claim: it names one release.
      idOf: (release) => release.token,
      attempt: (release) => store.abandon(release.workspaceId, release.key, release.token),
      isOutage: isDatabaseUnreachable,
      logger,
      fieldsOf: (release) => ({ workspace_id: release.workspaceId, idempotency_key: release.key }),
      messages: {
        notTaken: 'Idempotency-Key release not retried here; it runs anew once its lock lapses',
        waiting: 'Idempotency-Key releases wait for the database',
        caughtUp: 'Idempotency-Keys claimed during the database outage are released',
        failed: 'Idempotency-Key release failed; it runs anew once its lock lapses',
        stoppedWithPending: 'stopping with Idempotency-Keys unreleased; they run anew once their locks lapse',
      },
    },
    options,
  );
  return {
    begin: (workspaceId, key, fingerprint, now) => store.begin(workspaceId, key, fingerprint, now),
    complete: (workspaceId, key, token, response) => store.complete(workspaceId, key, token, response),
    purgeExpired: (now) => store.purgeExpired(now),
    async abandon(workspaceId, key, token) {
      try {
        await store.abandon(workspaceId, key, token);
      } catch (err) {
        // Whatever failed: the retrier keeps only what an outage explains, and logs the rest.
        releases.add({ workspaceId, key, token });
        throw err;
      }
    },
    /** A last bounded round of releases (shutdown); what is left lapses with its lock. */
    stop: (timeoutMs) => releases.stop(timeoutMs),
  };
}
