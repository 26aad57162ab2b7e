-- The batching writer's group commit in one round trip (docs/adr/0034): it decides from the
-- workspace rows its own last commit left, and sends BEGIN, their lock, the append and COMMIT
-- together. The lock statement (LOCK_WORKSPACES_AS_COMMITTED, services/ledger/locked-workspace.ts)
-- calls this when a row is not as the writer last committed it (another instance, a grant, a limit
-- change): nothing of the transaction commits, and the writer decides again from the rows it then
-- locks and reads. VOLATILE, so the statement's CASE calls it only then.
CREATE OR REPLACE FUNCTION workspaces_moved() RETURNS int LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RAISE EXCEPTION 'workspace rows moved since this writer last committed them' USING ERRCODE = 'LW001';
END $$;
