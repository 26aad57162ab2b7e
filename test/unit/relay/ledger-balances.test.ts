import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PublishedEvent } from '../../../contracts/jsonschema';
import {
  applyLedgerEvent,
  creditDelta,
  emptyLedgerBalances,
  foldLedger,
  parsePublishedEvent,
} from '../../../services/relay/ledger-balances';

let position = 0;
function event(type: string, workspace: string, version: number, data: Record<string, unknown> = {}): PublishedEvent {
  position += 1;
  const stream = `workspace-${workspace}`;
  return {
    event_id: `${stream}:${version}`,
    position,
    stream,
    version,
    type,
    schema_version: 1,
    data: { workspace_id: workspace, ...data },
    metadata: {},
    recorded_at: '2025-01-01T00:00:00.000Z',
  };
}

describe('running balances from the ledger topic', () => {
  it('opens a balance at zero, adds grants and refunds, takes charges, ignores limit changes', () => {
    const state = foldLedger([
      event('WorkspaceCreated', 'ws_a', 1, { name: 'a', max_concurrency: 8 }),
      event('CreditsGranted', 'ws_a', 2, { amount: 100, reason: null }),
      event('LookupCharged', 'ws_a', 3, { credits: 4 }),
      event('LookupRefunded', 'ws_a', 4, { credits: 3 }),
      event('LimitsChanged', 'ws_a', 5, { max_concurrency: 2 }),
      event('WorkspaceCreated', 'ws_b', 1, { name: 'b', max_concurrency: 8 }),
    ]);
    expect(Object.fromEntries(state.balances)).toEqual({ ws_a: 99, ws_b: 0 });
    expect(state.applied).toBe(5);
    expect(state.duplicates).toBe(0);
  });

  it('drops a re-delivered event by its event id and says so', () => {
    const state = emptyLedgerBalances();
    const grant = event('CreditsGranted', 'ws_a', 1, { amount: 10 });
    expect(applyLedgerEvent(state, grant)).toEqual({ kind: 'applied', eventId: grant.event_id, workspaceId: 'ws_a', delta: 10, balance: 10 });
    expect(applyLedgerEvent(state, { ...grant })).toEqual({ kind: 'duplicate', eventId: grant.event_id });
    expect(state.balances.get('ws_a')).toBe(10);
    expect(state.duplicates).toBe(1);
  });

  it('reports a free charge as a zero move, not minus zero', () => {
    expect(Object.is(creditDelta({ type: 'LookupCharged', data: { credits: 0 } }), 0)).toBe(true);
  });

  it('ignores events without a workspace and types it does not know, once each', () => {
    const state = emptyLedgerBalances();
    const odd = { ...event('SomethingNew', 'ws_a', 1), data: { other: true } };
    expect(applyLedgerEvent(state, odd).kind).toBe('ignored');
    expect(applyLedgerEvent(state, odd).kind).toBe('duplicate');
    expect(state.balances.size).toBe(0);
  });

  it('gives the same balances whatever duplicates the stream carries (at-least-once delivery)', () => {
    const movement = fc.record({
      workspace: fc.constantFrom('ws_a', 'ws_b', 'ws_c'),
      type: fc.constantFrom('CreditsGranted', 'LookupCharged', 'LookupRefunded', 'LimitsChanged'),
      amount: fc.integer({ min: 0, max: 50 }),
    });
    fc.assert(
      fc.property(fc.array(movement, { maxLength: 80 }), fc.array(fc.nat(), { maxLength: 40 }), (moves, replays) => {
        const versions = new Map<string, number>();
        const events = moves.map(({ workspace, type, amount }) => {
          const version = (versions.get(workspace) ?? 0) + 1;
          versions.set(workspace, version);
          return event(type, workspace, version, { amount, credits: amount });
        });
        // A re-send repeats an earlier stretch after the original: inject copies after their original.
        const delivered = [...events];
        for (const r of replays) {
          if (events.length === 0) break;
          const original = events[r % events.length]!;
          const at = delivered.indexOf(original) + 1 + (r % 3);
          delivered.splice(Math.min(at, delivered.length), 0, { ...original });
        }
        const expected = new Map<string, number>();
        for (const e of events) {
          const d = e.data as { workspace_id: string; amount: number };
          const sign = e.type === 'LookupCharged' ? -1 : e.type === 'LimitsChanged' ? 0 : 1;
          expected.set(d.workspace_id, (expected.get(d.workspace_id) ?? 0) + sign * d.amount);
        }
        const state = foldLedger(delivered);
        for (const [ws, balance] of expected) expect(state.balances.get(ws) ?? 0).toBe(balance);
        expect(state.duplicates).toBe(delivered.length - events.length);
      }),
    );
  });
});

describe('reading a message value', () => {
  it('parses the envelope from bytes', () => {
    const e = event('CreditsGranted', 'ws_a', 1, { amount: 1 });
    expect(parsePublishedEvent(Buffer.from(JSON.stringify(e)))).toEqual(e);
  });

  it('rejects a value that is not an event envelope, and a tombstone', () => {
    expect(() => parsePublishedEvent('{"type":"CreditsGranted"}')).toThrow();
    expect(() => parsePublishedEvent('not json')).toThrow();
    expect(() => parsePublishedEvent(null)).toThrow(/without a value/);
  });
});
