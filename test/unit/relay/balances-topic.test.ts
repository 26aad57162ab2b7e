import { describe, expect, it } from 'vitest';
import { balanceEventsByWorkspace, toBalanceMessage } from '../../../services/relay/balances-topic';
import { topicConfigEntries, topicNames } from '../../../services/relay/routing';
import { recorded } from './samples';

const ws = 'ws_01JTESTWORKSPACE0000000000';
const other = 'ws_01JOTHERWORKSPACE000000000';

describe('which events of a batch update the balances topic', () => {
  it('given a batch with every event type, when grouped, then each workspace keeps its newest balance-moving event', () => {
    const created = recorded('WorkspaceCreated', 1);
    const granted = recorded('CreditsGranted', 2);
    const charged = recorded('LookupCharged', 3);
    const completed = recorded('LookupCompleted', 4);
    const limits = recorded('LimitsChanged', 5);
    const otherGrant = recorded('CreditsGranted', 1, { stream: `workspace-${other}`, data: { workspace_id: other, amount: 3, reason: null } });
    const refunded = recorded('LookupRefunded', 6);
    const keyCreated = recorded('ApiKeyCreated', 1);
    const newest = balanceEventsByWorkspace([created, granted, charged, completed, limits, otherGrant, refunded, keyCreated]);
    expect([...newest]).toEqual([
      [other, otherGrant],
      [ws, refunded],
    ]);
  });

  it('given only events that move no credits, or a ledger event without a workspace, then nothing is published', () => {
    const noWorkspace = recorded('CreditsGranted', 2, { data: { amount: 5 } });
    expect(balanceEventsByWorkspace([recorded('LimitsChanged'), recorded('LookupCompleted'), recorded('ApiKeyRevoked'), noWorkspace]).size).toBe(0);
  });
});

describe('a balance message', () => {
  it('is keyed by the workspace id on the balances topic, its value the balance and the newest event, with CloudEvents headers', () => {
    const event = recorded('LookupCharged', 7);
    const message = toBalanceMessage(ws, 41, event, topicNames('p.'));
    expect(message).toMatchObject({ topic: 'p.lookup.balances.v1', key: ws });
    expect(JSON.parse(message.value)).toEqual({
      workspace_id: ws,
      balance: 41,
      last_event_id: `workspace-${ws}:7`,
      last_event_position: event.position,
      last_event_recorded_at: event.recordedAt.toISOString(),
    });
    expect(message.headers).toEqual({
      ce_specversion: '1.0',
      ce_id: `workspace-${ws}:7`,
      ce_type: 'com.lookup-api.WorkspaceBalance.v1',
      ce_source: '/lookup-api/balances',
      ce_subject: ws,
      ce_time: event.recordedAt.toISOString(),
      'content-type': 'application/json',
    });
  });
});

describe('topic configuration', () => {
  it('keeps event topics for retention.ms and compacts the balances topic', () => {
    expect(topicConfigEntries('ledger')).toEqual([{ name: 'retention.ms', value: '-1' }]);
    expect(topicConfigEntries('other', 86_400_000)).toEqual([{ name: 'retention.ms', value: '86400000' }]);
    expect(topicConfigEntries('balances')).toEqual([
      { name: 'retention.ms', value: '-1' },
      { name: 'cleanup.policy', value: 'compact' },
    ]);
  });
});
