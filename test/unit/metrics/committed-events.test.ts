// The lookups and money counted from committed events: a test key's calls are counted apart.
import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../../services/eventstore/types';
import { creditsCharged, lookupsCompleted, recordCommittedEvents, testKeyLookups } from '../../../services/metrics/metrics';

const event = (type: string, data: Record<string, unknown>): RecordedEvent => ({
  position: 1,
  stream: 'workspace-ws_1',
  version: 1,
  type,
  data,
  metadata: {},
  transactionId: '1',
  recordedAt: new Date(),
});

const counted = async (counter: { get(): Promise<{ values: { labels: Record<string, unknown>; value: number }[] }> }, labels: Record<string, string>) =>
  (await counter.get()).values.filter((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x)).reduce((sum, v) => sum + v.value, 0);

describe('recordCommittedEvents', () => {
  it('given a test key\'s call, when committed, then it counts in test_key_lookups_total, not in the live lookups or credits', async () => {
    const call = { workspace_id: 'ws_1', request_id: 'req_1', key_id: 'key_1', operation: 'search', mode: 'test' };
    const before = { live: await counted(lookupsCompleted, { operation: 'search' }), charged: await counted(creditsCharged, { operation: 'search' }), test: await counted(testKeyLookups, { operation: 'search', outcome: 'success' }) };
    recordCommittedEvents([
      event('LookupCharged', { ...call, credits: 0 }),
      event('LookupCompleted', { ...call, outcome: 'success', cache_status: 'MISS', credits_charged: 0, error_code: null }),
    ]);
    expect(await counted(testKeyLookups, { operation: 'search', outcome: 'success' })).toBe(before.test + 1);
    expect(await counted(lookupsCompleted, { operation: 'search' })).toBe(before.live);
    expect(await counted(creditsCharged, { operation: 'search' })).toBe(before.charged);
  });

  it('given a live call, when committed, then it counts in the live lookups as before', async () => {
    const before = await counted(lookupsCompleted, { operation: 'company' });
    recordCommittedEvents([event('LookupCompleted', { workspace_id: 'ws_1', request_id: 'req_2', key_id: 'key_2', operation: 'company', outcome: 'success', cache_status: 'HIT', credits_charged: 1, error_code: null })]);
    expect(await counted(lookupsCompleted, { operation: 'company' })).toBe(before + 1);
  });
});
