-- Email that goes out (services/email): every message is first a row here, written in the
-- transaction of what caused it, then sent by whichever instance claims it (FOR UPDATE SKIP
-- LOCKED plus a lease), retried with backoff. Plain state, not a projection: never rebuilt.
CREATE TABLE IF NOT EXISTS email_outbox (
  id              text PRIMARY KEY,
  -- invitation, password_reset, balance_low: for metrics and logs.
  kind            text NOT NULL,
  recipient       text NOT NULL,
  subject         text NOT NULL,
  -- Holds one-time links until sent: cleared once sent or given up.
  body            text,
  created_at      timestamptz NOT NULL,
  attempts        int NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  -- A claim's lease: an instance that died mid-send leaves the row to be claimed again after it.
  claimed_until   timestamptz,
  sent_at         timestamptz,
  failed_at       timestamptz,
  last_error      text
);
CREATE INDEX IF NOT EXISTS email_outbox_due ON email_outbox (next_attempt_at) WHERE sent_at IS NULL AND failed_at IS NULL;

-- Password resets: only the SHA-256 of the link's token is kept (as for invitations and sessions).
CREATE TABLE IF NOT EXISTS password_resets (
  token_hash   text PRIMARY KEY,
  member_id    text NOT NULL,
  workspace_id text NOT NULL,
  created_at   timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL,
  used_at      timestamptz
);
CREATE INDEX IF NOT EXISTS password_resets_member ON password_resets (member_id, created_at);
