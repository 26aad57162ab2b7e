import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newEvent } from '../../../contracts/events';
import { ChainVerifier, chainLedgerEvents, ledgerEventHash } from '../../../services/ledger/ledger-chain';

const STREAM = 'workspace-ws_1';
const grant = (amount: number) => newEvent('CreditsGranted', { workspace_id: 'ws_1', amount, reason: null });
const charge = (requestId: string) => newEvent('LookupCharged', { workspace_id: 'ws_1', request_id: requestId, key_id: 'key_1', operation: 'company', credits: 1 }, requestId);
const completed = (requestId: string) =>
  newEvent('LookupCompleted', { workspace_id: 'ws_1', request_id: requestId, key_id: 'key_1', operation: 'company', outcome: 'success', cache_status: 'HIT', credits_charged: 1, error_code: null }, requestId);

/** As the audit reads them from the log: with positions, versions and the links of their metadata. */
const recorded = (events: ReturnType<typeof chainLedgerEvents>['events']) =>
  events.map((e, i) => ({
    position: 10 + i, stream: STREAM, version: i + 1, type: e.type, data: JSON.parse(JSON.stringify(e.data)),
    prevHash: (e.metadata?.prev_hash ?? null) as unknown, hash: (e.metadata?.hash ?? null) as unknown,
  }));

describe('the ledger hash chain', () => {
  it('given a first event, when hashed, then it is SHA-256 of the canonical JSON of the event and a null previous hash', () => {
    const canonical = '{"event":{"data":{"amount":5,"reason":null,"workspace_id":"ws_1"},"stream":"workspace-ws_1","type":"CreditsGranted"},"prev_hash":null}';
    expect(ledgerEventHash(null, { type: 'CreditsGranted', stream: STREAM, data: { workspace_id: 'ws_1', reason: null, amount: 5 } })).toBe(
      createHash('sha256').update(canonical).digest('hex'),
    );
  });

  it('given events of a workspace, when chained, then each ledger event links to the previous one and other events pass unchanged', () => {
    const { events, lastHash } = chainLedgerEvents('prev', STREAM, [charge('req_1'), completed('req_1'), grant(3)]);
    expect(events[0]!.metadata).toMatchObject({ prev_hash: 'prev', request_id: 'req_1', schema_version: 1 });
    expect(events[1]!.metadata).not.toHaveProperty('hash');
    expect(events[2]!.metadata!.prev_hash).toBe(events[0]!.metadata!.hash);
    expect(lastHash).toBe(events[2]!.metadata!.hash);
  });

  it('given data with an undefined field, when chained, then its hash is the one of the data as the log reads it back', () => {
    const withUndefined = { ...grant(5), data: { workspace_id: 'ws_1', amount: 5, reason: null, note: undefined } };
    const [chained] = chainLedgerEvents(null, STREAM, [withUndefined]).events;
    expect(chained!.metadata!.hash).toBe(ledgerEventHash(null, { type: 'CreditsGranted', stream: STREAM, data: JSON.parse(JSON.stringify(withUndefined.data)) }));
  });

  it('given no ledger event, when chained, then the last hash stays', () => {
    expect(chainLedgerEvents('prev', STREAM, [completed('req_1')]).lastHash).toBe('prev');
  });

  it('given a chain as appended, when verified, then it holds', () => {
    const verifier = new ChainVerifier('ws_1');
    for (const e of recorded(chainLedgerEvents(null, STREAM, [grant(5), charge('req_1'), charge('req_2')]).events)) verifier.check(e);
    expect(verifier.broken).toBeUndefined();
  });

  it('given an event whose data was changed, when verified, then the break is named at that event, on its hash', () => {
    const events = recorded(chainLedgerEvents(null, STREAM, [grant(5), grant(6), grant(7)]).events);
    (events[1]!.data as { amount: number }).amount = 600;
    const verifier = new ChainVerifier('ws_1');
    for (const e of events) verifier.check(e);
    expect(verifier.broken).toEqual({
      workspace_id: 'ws_1', position: 11, stream: STREAM, version: 2, field: 'hash',
      expected: ledgerEventHash(events[0]!.hash as string, events[1]!), actual: events[1]!.hash,
    });
  });

  it('given an event removed, when verified, then the break is named at the next event, on its link', () => {
    const events = recorded(chainLedgerEvents(null, STREAM, [grant(5), grant(6), grant(7)]).events);
    const verifier = new ChainVerifier('ws_1');
    for (const e of [events[0]!, events[2]!]) verifier.check(e);
    expect(verifier.broken).toMatchObject({ position: 12, field: 'prev_hash', expected: events[0]!.hash, actual: events[1]!.hash });
  });

  it('given an event rewritten with a fresh hash of its own, when verified, then the next link breaks', () => {
    const events = recorded(chainLedgerEvents(null, STREAM, [grant(5), grant(6), grant(7)]).events);
    const forged = chainLedgerEvents(events[0]!.hash as string, STREAM, [grant(600)]).events[0]!;
    events[1] = { ...events[1]!, data: forged.data, prevHash: forged.metadata!.prev_hash, hash: forged.metadata!.hash };
    const verifier = new ChainVerifier('ws_1');
    for (const e of events) verifier.check(e);
    expect(verifier.broken).toMatchObject({ position: 12, field: 'prev_hash' });
  });

  it('given an event without links (never chained), when verified, then it is the break', () => {
    const verifier = new ChainVerifier('ws_1');
    verifier.check({ position: 1, stream: STREAM, version: 1, type: 'CreditsGranted', data: { workspace_id: 'ws_1', amount: 5, reason: null }, prevHash: null, hash: null });
    expect(verifier.broken).toMatchObject({ position: 1, field: 'hash', actual: null });
  });
});
