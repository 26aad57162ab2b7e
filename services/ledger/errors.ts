export class UnknownWorkspaceError extends Error {
  constructor(readonly workspaceId: string) {
    super(`no workspace ${workspaceId}`);
  }
}

/** A grant refused by decideGrant: it would take the balance past the most a balance may hold. */
export class BalanceLimitError extends Error {
  constructor(
    readonly balance: number,
    readonly amount: number,
    readonly max: number,
  ) {
    super(`a grant of ${amount} to a balance of ${balance} would pass the maximum balance of ${max}`);
  }
}
