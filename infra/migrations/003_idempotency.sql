-- Idempotency-Key records, scoped to the workspace. A row is 'running' while its first request
-- holds the lock (lock_token until locked_until), then 'done' with the stored response. Rows count
-- for 24 h from the first request (expires_at); an expired row, or a running row whose lock
-- lapsed (its instance died), is taken over by the next request with that key.
CREATE TABLE IF NOT EXISTS idempotency_keys (
  workspace_id text NOT NULL,
  idem_key     text NOT NULL,
  fingerprint  text NOT NULL,
  state        text NOT NULL CHECK (state IN ('running', 'done')),
  lock_token   text,
  locked_until timestamptz,
  -- JSON text, kept verbatim so a replay returns the body byte for byte (jsonb would reorder keys).
  response     text,
  created_at   timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, idem_key)
);

CREATE INDEX IF NOT EXISTS idempotency_keys_expires_at ON idempotency_keys (expires_at);
