-- The workspace console: members, invitations, sign-in state.

-- Inline projection of the membership events (members-<workspace_id> streams): rebuilt from the log.
CREATE TABLE IF NOT EXISTS members (
  member_id    text PRIMARY KEY,
  workspace_id text NOT NULL,
  email        text NOT NULL,
  role         text NOT NULL,
  joined_at    timestamptz NOT NULL,
  removed_at   timestamptz
);
-- One active membership per email: sign-in is by email, so it names one workspace.
CREATE UNIQUE INDEX IF NOT EXISTS members_active_email ON members (email) WHERE removed_at IS NULL;
CREATE INDEX IF NOT EXISTS members_workspace ON members (workspace_id, joined_at);

CREATE TABLE IF NOT EXISTS invitations (
  invitation_id text PRIMARY KEY,
  workspace_id  text NOT NULL,
  email         text NOT NULL,
  role          text NOT NULL,
  -- SHA-256 of the one-time token; the token itself exists only in the link.
  token_hash    text NOT NULL UNIQUE,
  invited_by    text NOT NULL,
  created_at    timestamptz NOT NULL,
  expires_at    timestamptz NOT NULL,
  accepted_at   timestamptz,
  cancelled_at  timestamptz
);
CREATE INDEX IF NOT EXISTS invitations_workspace ON invitations (workspace_id, created_at);

-- Who created a key in the console (ApiKeyCreatedBy); keys an operator made have no row.
CREATE TABLE IF NOT EXISTS api_key_creators (
  key_id       text PRIMARY KEY,
  workspace_id text NOT NULL,
  member_id    text NOT NULL
);

-- Calls that ended in an error code (LookupCompleted), for the overview's "last errors".
CREATE TABLE IF NOT EXISTS console_errors (
  position     bigint PRIMARY KEY,
  workspace_id text NOT NULL,
  request_id   text NOT NULL,
  key_id       text NOT NULL,
  operation    text NOT NULL,
  error_code   text NOT NULL,
  recorded_at  timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS console_errors_workspace ON console_errors (workspace_id, position DESC);
INSERT INTO console_errors (position, workspace_id, request_id, key_id, operation, error_code, recorded_at)
  SELECT position, data->>'workspace_id', data->>'request_id', data->>'key_id', data->>'operation', data->>'error_code', recorded_at
    FROM events WHERE type = 'LookupCompleted' AND data->>'error_code' IS NOT NULL
  ON CONFLICT (position) DO NOTHING;

-- Plain state, not projections (never in the log, never rebuilt): secrets and short-lived facts.
-- A password hash must not reach the log, which is immutable and published to Kafka.
CREATE TABLE IF NOT EXISTS member_credentials (
  member_id     text PRIMARY KEY,
  password_hash text NOT NULL,
  changed_at    timestamptz NOT NULL
);

-- Sessions: only the SHA-256 of the cookie's id is stored.
CREATE TABLE IF NOT EXISTS console_sessions (
  id_hash      text PRIMARY KEY,
  member_id    text NOT NULL,
  created_at   timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS console_sessions_member ON console_sessions (member_id);

-- Failed sign-ins per email and client address (shared by every instance).
CREATE TABLE IF NOT EXISTS console_sign_in_failures (
  email           text NOT NULL,
  ip              text NOT NULL,
  failures        int NOT NULL,
  last_failure_at timestamptz NOT NULL,
  locked_until    timestamptz,
  PRIMARY KEY (email, ip)
);
