import { describe, expect, it } from 'vitest';
import { MAX_CONCURRENCY_DEFAULT } from '../../../contracts/http';
import { decideChangeLimits } from '../../../services/workspaces/change-limits';
import { decideCreateWorkspace } from '../../../services/workspaces/create-workspace';
import { decideRecordUncharged } from '../../../services/ledger/commands/record-uncharged';
import { UnknownWorkspaceError } from '../../../services/ledger/errors';
import { evolveWorkspaceThrough } from '../../../services/ledger/workspace-state';
import { WS, call, shape, workspace } from '../ledger/commands/support';

describe('create a workspace', () => {
  it('given no workspace, when created with credits, then it is created and granted them, a balance the state model agrees with', () => {
    const events = decideCreateWorkspace(undefined, { workspaceId: WS, name: 'Acme', credits: 50, maxConcurrency: 3 });
    expect(shape(events, 'name', 'max_concurrency', 'amount', 'reason')).toEqual([
      ['WorkspaceCreated', 'Acme', 3, undefined, undefined],
      ['CreditsGranted', undefined, undefined, 50, 'initial credits'],
    ]);
    expect(evolveWorkspaceThrough(undefined, events)).toEqual({ balance: 50, maxConcurrency: 3 });
  });

  it('given no credits or limit, when created, then the balance is 0 and the limit the contract default', () => {
    const events = decideCreateWorkspace(undefined, { workspaceId: WS, name: 'Empty', credits: 0 });
    expect(shape(events, 'max_concurrency')).toEqual([['WorkspaceCreated', MAX_CONCURRENCY_DEFAULT]]);
  });

  it('given the workspace exists, when created again, then it is refused', () => {
    expect(() => decideCreateWorkspace(workspace(0), { workspaceId: WS, name: 'Twice' })).toThrow(/exists/);
  });
});

describe('change limits', () => {
  it('given a workspace, when its limit changes, then LimitsChanged carries the new limit and the balance stays', () => {
    const events = decideChangeLimits(workspace(7, 8), { workspaceId: WS, maxConcurrency: 2 });
    expect(shape(events, 'max_concurrency')).toEqual([['LimitsChanged', 2]]);
    expect(evolveWorkspaceThrough(workspace(7, 8), events)).toEqual({ balance: 7, maxConcurrency: 2 });
  });

  it('given no workspace, when changing limits, then it fails with UnknownWorkspaceError', () => {
    expect(() => decideChangeLimits(undefined, { workspaceId: WS, maxConcurrency: 2 })).toThrow(UnknownWorkspaceError);
  });
});

describe('record an uncharged call', () => {
  it('given a free not-found from cache, when recorded, then only the completion is appended: the balance stays', () => {
    const decision = decideRecordUncharged({ workspace: workspace(4) }, { ...call, completed: { outcome: 'not_found', cache_status: 'HIT', credits_charged: 0, error_code: 'not_found' } });
    expect(shape(decision.events, 'outcome', 'credits_charged')).toEqual([['LookupCompleted', 'not_found', 0]]);
    expect(evolveWorkspaceThrough(workspace(4), decision.events)).toEqual(workspace(4));
    expect(decision.result).toBe(4);
  });
});
