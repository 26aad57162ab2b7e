-- Projections of the event log. Every table here can be dropped and rebuilt from position 0.

-- Inline (same transaction as the events): balances, keys, ledger view, charges, cache index.
CREATE TABLE IF NOT EXISTS workspaces (
  id              text PRIMARY KEY,
  name            text NOT NULL,
  balance         bigint NOT NULL CHECK (balance >= 0),
  max_concurrency int NOT NULL,
  created_at      timestamptz NOT NULL
);

CREATE TABLE IF NOT EXISTS api_keys (
  id                    text PRIMARY KEY,
  workspace_id          text NOT NULL,
  key_hash              text NOT NULL UNIQUE,
  prefix                text NOT NULL,
  name                  text,
  rate_limit_per_minute int NOT NULL,
  created_at            timestamptz NOT NULL,
  revoked_at            timestamptz
);
CREATE INDEX IF NOT EXISTS api_keys_workspace ON api_keys (workspace_id, created_at);

CREATE TABLE IF NOT EXISTS ledger_entries (
  position      bigint PRIMARY KEY,
  workspace_id  text NOT NULL,
  type          text NOT NULL,
  request_id    text,
  key_id        text,
  credits       bigint NOT NULL,
  balance_after bigint NOT NULL,
  recorded_at   timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_entries_workspace ON ledger_entries (workspace_id, position);
CREATE INDEX IF NOT EXISTS ledger_entries_request ON ledger_entries (request_id);

-- One row per charge: makes a refund happen at most once.
CREATE TABLE IF NOT EXISTS charges (
  request_id       text PRIMARY KEY,
  workspace_id     text NOT NULL,
  key_id           text NOT NULL,
  operation        text NOT NULL,
  credits          bigint NOT NULL,
  refunded_credits bigint
);

CREATE TABLE IF NOT EXISTS cache_entities (
  entity       text PRIMARY KEY,
  kind         text NOT NULL,
  -- json, not jsonb: a HIT returns the profile with its fields in the order a live fetch gave.
  data         json NOT NULL,
  content_hash text NOT NULL,
  fetched_at   timestamptz NOT NULL,
  position     bigint NOT NULL
);

-- Every input form of an entity (slug, old slug, id, URN, domain, name) points to one entity;
-- a not-found answer is an alias with no entity.
CREATE TABLE IF NOT EXISTS cache_aliases (
  alias      text PRIMARY KEY,
  kind       text NOT NULL,
  entity     text,
  code       text,
  reason     text,
  fetched_at timestamptz NOT NULL,
  position   bigint NOT NULL
);

-- Async (checkpointed subscription; may lag a moment): usage and last use of keys.
CREATE TABLE IF NOT EXISTS usage_daily (
  workspace_id     text NOT NULL,
  day              date NOT NULL,
  key_id           text NOT NULL,
  operation        text NOT NULL,
  calls            bigint NOT NULL DEFAULT 0,
  credits_charged  bigint NOT NULL DEFAULT 0,
  credits_refunded bigint NOT NULL DEFAULT 0,
  errors           bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (workspace_id, day, key_id, operation)
);

CREATE TABLE IF NOT EXISTS key_last_used (
  key_id       text PRIMARY KEY,
  last_used_at timestamptz NOT NULL
);
