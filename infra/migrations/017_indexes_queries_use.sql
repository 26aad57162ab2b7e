-- Issue 27, "write only what a query reads": every index on the tables a charged call writes is
-- justified by a query; these two were not (docs/adr/0030-storage-per-charged-call.md).
--
-- events (stream, recorded_at): no query bounds a stream by time with it. The balance at an instant
-- (services/finance/queries.ts, workspaceAt) filters on date_trunc(recorded_at), which no index
-- serves, and selects the stream by the (stream, version) key it orders by.
DROP INDEX IF EXISTS events_stream_time;
-- ledger_entries (request_id): one request's ledger lines are found by the log's own request-id
-- index (events_request_id), which the request story, the refund of a hit and the operations of
-- ledger lines use anyway; a ledger line's request id is its event's.
DROP INDEX IF EXISTS ledger_entries_request;
