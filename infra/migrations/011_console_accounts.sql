-- Console accounts: members scoped to their workspace, credential versions, and
-- sign-in attempts counted before the password is checked.

-- An email is a member of each workspace on its own terms: one active membership per workspace
-- and email, so claiming an address in one workspace neither blocks nor reveals another's.
DROP INDEX IF EXISTS members_active_email;
CREATE UNIQUE INDEX IF NOT EXISTS members_workspace_active_email ON members (workspace_id, email) WHERE removed_at IS NULL;

-- A password change bumps the version; a session made with an older one is dead on its next request.
ALTER TABLE member_credentials ADD COLUMN IF NOT EXISTS version int NOT NULL DEFAULT 1;
ALTER TABLE console_sessions ADD COLUMN IF NOT EXISTS credential_version int NOT NULL DEFAULT 1;

-- Password checks per subject (a sign-in: workspace, email and client address; a password change:
-- the member). `failures` counts every attempt from the moment it is let through, before the hash
-- runs; `in_flight` is how many of those have not finished yet.
CREATE TABLE IF NOT EXISTS console_password_attempts (
  subject         text PRIMARY KEY,
  failures        int NOT NULL,
  in_flight       int NOT NULL,
  last_failure_at timestamptz NOT NULL,
  locked_until    timestamptz
);
-- The counts of the per-email table are short-lived (an hour, a 15-minute lock): not carried over.
DROP TABLE IF EXISTS console_sign_in_failures;
