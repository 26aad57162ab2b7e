import { ERROR_CATALOGUE, isErrorCode } from '../../contracts/errors';
import type { CacheStatus } from '../../contracts/http';
import type { EventData } from '../../contracts/events';

/** An event of the log, as the request story reads it. */
export interface LoggedEvent {
  position: number;
  stream: string;
  type: string;
  data: Record<string, unknown>;
  recordedAt: string;
}

export interface RequestStory {
  call: {
    operation: string;
    key_id: string;
    recorded_at: string;
    outcome: 'success' | 'not_found' | 'error';
    status: number;
    cache_status: CacheStatus | null;
    credits_charged: number;
    error_code: string | null;
  } | null;
  refund: { credits: number; cause: string; recorded_at: string } | null;
  content_hash: string | null;
  events: { position: number; stream: string; type: string; recorded_at: string }[];
}

/**
 * Pure: one call's story from the events it appended (those whose metadata names its request id).
 * Null when none of them is the workspace's: another workspace's request is not found, not shown.
 * The HTTP status comes from the error catalogue, the one place that maps codes to statuses.
 */
export function requestStoryOf(events: readonly LoggedEvent[], workspaceId: string): RequestStory | null {
  // Profile events carry no workspace: they belong to the call that appended them.
  const ours = events.filter((e) => e.data.workspace_id === undefined || e.data.workspace_id === workspaceId);
  if (!ours.some((e) => e.data.workspace_id === workspaceId)) return null;
  const completed = ours.find((e) => e.type === 'LookupCompleted');
  const refunded = ours.find((e) => e.type === 'LookupRefunded');
  const fetched = ours.find((e) => e.type === 'ProfileFetched');
  const c = completed?.data as EventData<'LookupCompleted'> | undefined;
  const r = refunded?.data as EventData<'LookupRefunded'> | undefined;
  return {
    call: c
      ? {
          operation: c.operation,
          key_id: c.key_id,
          recorded_at: completed!.recordedAt,
          outcome: c.outcome,
          status: answeredStatus(c),
          cache_status: c.cache_status,
          credits_charged: c.credits_charged,
          error_code: c.error_code,
        }
      : null,
    refund: r ? { credits: r.credits, cause: r.cause, recorded_at: refunded!.recordedAt } : null,
    content_hash: fetched ? String((fetched.data as EventData<'ProfileFetched'>).content_hash) : null,
    events: ours.map((e) => ({ position: e.position, stream: e.stream, type: e.type, recorded_at: e.recordedAt })),
  };
}

/**
 * The status the call answered: a success is a 200 even with an `error_code`, which on a STALE
 * answer names the failed fetch the copy stood in for (docs/adr/0022); otherwise the code's
 * status from the error catalogue.
 */
function answeredStatus(c: Pick<EventData<'LookupCompleted'>, 'outcome' | 'error_code'>): number {
  if (c.outcome === 'success' || c.error_code === null || !isErrorCode(c.error_code)) return 200;
  return ERROR_CATALOGUE[c.error_code].status;
}
