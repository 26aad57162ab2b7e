import type { KeyMode } from '../../contracts/events';
import type { ModeFilter } from '../../contracts/http';

/**
 * The rules of test keys (docs/api.md, "Test keys"; docs/adr/0026-test-keys.md), pure. A key's
 * mode is fixed at creation and named by its prefix (`lk_test_…`); every call it makes has it.
 */

/** What a call costs in its key's mode: a test key's calls are never charged, whatever the price. */
export const priceInMode = (mode: KeyMode, price: number): number => (mode === 'test' ? 0 : price);

/** Where a call's live fetch goes: a test key's only ever to the built-in sandbox network. */
export const sourceForMode = (mode: KeyMode): 'configured' | 'sandbox' => (mode === 'test' ? 'sandbox' : 'configured');

/** Whether a call reads and writes the shared cache: a test key's never do (they always fetch from the sandbox). */
export const usesCache = (mode: KeyMode): boolean => mode === 'live';

/**
 * Whether a key may create or run a watch: a watch's refreshes are live, charged lookups made in the
 * workspace's name long after the call, so a test key (never charged, sandbox only) may not start one.
 */
export const mayStartWatches = (mode: KeyMode): boolean => mode === 'live';

/** The modes a usage, ledger or statement read shows for its `mode` filter. */
export const modesShown = (filter: ModeFilter): KeyMode[] => (filter === 'all' ? ['live', 'test'] : [filter]);

/**
 * The scope a test key's Idempotency-Keys and concurrency slots live in: its workspace's, apart, so
 * a test call neither replays a live answer nor takes a live call's slot.
 */
export const scopeInMode = (workspaceId: string, mode: KeyMode): string => (mode === 'test' ? `${workspaceId}:test` : workspaceId);

/** The concurrency slots a key's lookups take (`max_concurrency` of them): its workspace's, in its mode. */
export const slotScope = (key: { workspaceId: string; mode: KeyMode }): string => `ws:${scopeInMode(key.workspaceId, key.mode)}`;

/** Whether an event is of a test call (`mode: "test"`): it moves no balance, so balance watchers skip it. */
export const isTestCall = (data: { mode?: KeyMode }): boolean => data.mode === 'test';

/** The `mode` field an event of a call or a key carries: only a test one's (absent means live, as before). */
export const modeField = (mode: KeyMode): { mode?: 'test' } => (mode === 'test' ? { mode: 'test' } : {});
