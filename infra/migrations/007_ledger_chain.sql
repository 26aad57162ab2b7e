-- Finance: tamper evidence of the ledger and statements.

-- The hash of each workspace's last ledger event, the one its next ledger event links to
-- (services/ledger/ledger-chain.ts). Read with the workspace row the writer locks anyway.
ALTER TABLE workspaces ADD COLUMN IF NOT EXISTS last_ledger_hash text;

-- Statements and balances at an instant select a workspace's entries by time.
CREATE INDEX IF NOT EXISTS ledger_entries_workspace_time ON ledger_entries (workspace_id, recorded_at);
CREATE INDEX IF NOT EXISTS events_stream_time ON events (stream, recorded_at);

-- The instant of the insert, not of the transaction's start: an append takes its stream's lock
-- before it inserts, so a stream's events are then recorded in the order of their versions, and a
-- period of time holds a prefix of each stream (statements and balances at an instant agree with
-- the running balance of the ledger). In milliseconds, what a JavaScript Date holds: the ledger
-- view, usage and the relay then carry the very instant the log has.
ALTER TABLE events ALTER COLUMN recorded_at SET DEFAULT date_trunc('milliseconds', clock_timestamp());
