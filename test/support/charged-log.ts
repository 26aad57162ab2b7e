// A large log written straight to the event store (no ledger round trips): per workspace a creation
// and a grant, then charged calls with their completions, one in ten refunded; the ledger chains
// linked as the writer links them, so it audits clean. For the audit's bench and its progress tests.
import { newEvent, streams } from '../../contracts/events';
import { newRequestId } from '../../services/common/ids';
import type { EventStore } from '../../services/eventstore/event-store';
import type { NewEvent } from '../../services/eventstore/types';
import { chainLedgerEvents } from '../../services/ledger/ledger-chain';

/** Writes about `events` events over `workspaces` workspaces; returns how many it wrote. */
export async function writeChargedLog(store: EventStore, { events, workspaces }: { events: number; workspaces: number }): Promise<number> {
  let written = 0;
  const perWorkspace = Math.ceil(events / workspaces);
  const tag = newRequestId().slice(-8);
  for (let w = 0; w < workspaces; w++) {
    const workspaceId = `ws_LOG${tag}${String(w).padStart(14, '0')}`;
    const stream = streams.workspace(workspaceId);
    let last: string | null = null;
    const append = async (batch: NewEvent[]) => {
      const chained = chainLedgerEvents(last, stream, batch);
      last = chained.lastHash;
      await store.append(stream, chained.events);
      written += batch.length;
    };
    await append([
      newEvent('WorkspaceCreated', { workspace_id: workspaceId, name: `log ${w}`, max_concurrency: 8 }),
      newEvent('CreditsGranted', { workspace_id: workspaceId, amount: 1_000_000, reason: null }),
    ]);
    let batch: NewEvent[] = [];
    for (let i = 0; written < (w + 1) * perWorkspace && written + batch.length < events; i++) {
      const requestId = newRequestId();
      const call = { workspace_id: workspaceId, request_id: requestId, key_id: 'key_log', operation: 'company' as const };
      batch.push(newEvent('LookupCharged', { ...call, credits: 1 }, requestId));
      const refunded = i % 10 === 0;
      if (refunded) batch.push(newEvent('LookupRefunded', { ...call, credits: 1, cause: 'upstream_error' }, requestId));
      batch.push(newEvent('LookupCompleted', { ...call, outcome: refunded ? 'error' : 'success', cache_status: 'HIT', credits_charged: refunded ? 0 : 1, error_code: refunded ? 'upstream_error' : null }, requestId));
      if (batch.length >= 2000) {
        await append(batch);
        batch = [];
      }
    }
    if (batch.length > 0) await append(batch);
  }
  return written;
}
