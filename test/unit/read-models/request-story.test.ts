import { describe, expect, it } from 'vitest';
import { type LoggedEvent, requestStoryOf } from '../../../services/read-models/request-story';

const at = '2026-11-26T10:00:00.000Z';
const event = (position: number, type: string, data: Record<string, unknown>, stream = 'workspace-ws_a'): LoggedEvent => ({ position, stream, type, data, recordedAt: at });
const call = { workspace_id: 'ws_a', request_id: 'req_1', key_id: 'key_1', operation: 'domain' };

describe('a request story', () => {
  it('given a charge, a fetch that failed to parse, its completion and its refund, then the story shows the 502, the refund and every event', () => {
    const story = requestStoryOf(
      [
        event(1, 'LookupCharged', { ...call, credits: 4 }),
        event(2, 'LookupCompleted', { ...call, outcome: 'error', cache_status: 'MISS', credits_charged: 4, error_code: 'parse_error' }),
        event(3, 'LookupRefunded', { ...call, credits: 4, cause: 'parse_error' }),
      ],
      'ws_a',
    );
    expect(story!.call).toMatchObject({ operation: 'domain', key_id: 'key_1', status: 502, outcome: 'error', error_code: 'parse_error', cache_status: 'MISS' });
    expect(story!.refund).toEqual({ credits: 4, cause: 'parse_error', recorded_at: at });
    expect(story!.content_hash).toBeNull();
    expect(story!.events.map((e) => e.type)).toEqual(['LookupCharged', 'LookupCompleted', 'LookupRefunded']);
  });

  it('given a found profile, then the story has its content hash and status 200, no refund', () => {
    const story = requestStoryOf(
      [
        event(1, 'LookupCharged', { ...call, credits: 1 }),
        event(2, 'ProfileFetched', { entity: 'company:acme', kind: 'company', data: {}, content_hash: 'sha256:abc', fetched_at: at, aliases: [] }, 'company-acme'),
        event(3, 'LookupCompleted', { ...call, outcome: 'success', cache_status: 'MISS', credits_charged: 1, error_code: null }),
      ],
      'ws_a',
    );
    expect(story).toMatchObject({ content_hash: 'sha256:abc', refund: null, call: { status: 200 } });
    expect(story!.events.map((e) => e.stream)).toContain('company-acme');
  });

  it('given a live fetch that failed upstream and a cached copy that answered (on_error "stale"), then the story shows the 200 it answered, STALE, the one charge kept and no refund', () => {
    // ADR 0022: the one charge is settled by the stale answer; LookupCompleted keeps the fetch's failure in error_code.
    const story = requestStoryOf(
      [
        event(1, 'LookupCharged', { ...call, credits: 1 }),
        event(2, 'LookupCompleted', { ...call, outcome: 'success', cache_status: 'STALE', credits_charged: 1, error_code: 'upstream_error' }),
      ],
      'ws_a',
    );
    expect(story!.call).toMatchObject({ status: 200, outcome: 'success', cache_status: 'STALE', credits_charged: 1, error_code: 'upstream_error' });
    expect(story!.refund).toBeNull();
  });

  it('given a stale answer priced below the charge, then the difference is its refund, caused by the failure, and the call still answered 200', () => {
    const story = requestStoryOf(
      [
        event(1, 'LookupCharged', { ...call, credits: 4 }),
        event(2, 'LookupRefunded', { ...call, credits: 3, cause: 'timeout' }),
        event(3, 'LookupCompleted', { ...call, outcome: 'success', cache_status: 'STALE', credits_charged: 1, error_code: 'timeout' }),
      ],
      'ws_a',
    );
    expect(story!.call).toMatchObject({ status: 200, cache_status: 'STALE' });
    expect(story!.refund).toEqual({ credits: 3, cause: 'timeout', recorded_at: at });
  });

  it('given a profile not found, then the story shows the 404 of its code', () => {
    const story = requestStoryOf([event(1, 'LookupCharged', { ...call, credits: 1 }), event(2, 'LookupCompleted', { ...call, outcome: 'not_found', cache_status: 'MISS', credits_charged: 1, error_code: 'not_found' })], 'ws_a');
    expect(story!.call).toMatchObject({ status: 404, outcome: 'not_found' });
  });

  it("given another workspace's request id, then there is no story", () => {
    expect(requestStoryOf([event(1, 'LookupCharged', { ...call, workspace_id: 'ws_b', credits: 1 })], 'ws_a')).toBeNull();
    expect(requestStoryOf([], 'ws_a')).toBeNull();
  });
});
