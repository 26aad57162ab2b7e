-- Audit jobs (POST /admin/v1/audits) live here, not in one instance's memory: any instance answers
-- GET /admin/v1/audits/{id}, and one job runs at a time across instances. The instance running a
-- job writes its progress and heartbeat_at (the database's clock) about once a second; a running
-- job whose heartbeat is older than AUDIT_HEARTBEAT_TIMEOUT_MS belongs to an instance that died and
-- is failed by whichever instance looks (services/audit/audit-job-store.ts).
CREATE TABLE IF NOT EXISTS audit_jobs (
  id            text PRIMARY KEY,
  state         text NOT NULL CHECK (state IN ('running', 'done', 'failed')),
  phase         text NOT NULL CHECK (phase IN ('catching_up', 'replaying', 'comparing')),
  started_at    timestamptz NOT NULL,
  reading_since timestamptz,
  events_read   bigint NOT NULL DEFAULT 0,
  position      bigint NOT NULL DEFAULT 0,
  head_position bigint,
  heartbeat_at  timestamptz NOT NULL,
  -- Which instance runs it (host and process id), for the operator and the failure message.
  runner        text NOT NULL,
  finished_at   timestamptz,
  report        jsonb,
  error         text,
  CHECK ((state = 'running') = (finished_at IS NULL))
);

-- At most one running job, whichever instance started it.
CREATE UNIQUE INDEX IF NOT EXISTS audit_jobs_one_running ON audit_jobs ((true)) WHERE state = 'running';
CREATE INDEX IF NOT EXISTS audit_jobs_finished ON audit_jobs (finished_at DESC) WHERE state <> 'running';
