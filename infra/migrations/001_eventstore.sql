-- The append-only event log. Global order is (transaction_id, position): readers only see
-- transactions older than the oldest one still running, so a late commit is never skipped.
CREATE TABLE IF NOT EXISTS streams (
  stream  text PRIMARY KEY,
  version bigint NOT NULL
);

CREATE TABLE IF NOT EXISTS events (
  position       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
  stream         text NOT NULL,
  version        bigint NOT NULL,
  type           text NOT NULL,
  data           jsonb NOT NULL,
  metadata       jsonb NOT NULL DEFAULT '{}'::jsonb,
  recorded_at    timestamptz NOT NULL DEFAULT now(),
  UNIQUE (stream, version)
);

CREATE INDEX IF NOT EXISTS events_global_order ON events (transaction_id, position);

CREATE INDEX IF NOT EXISTS events_request_id ON events ((metadata->>'request_id'));

-- Where each checkpointed subscription (async projection, Kafka relay) has got to.
CREATE TABLE IF NOT EXISTS subscription_checkpoints (
  name           text PRIMARY KEY,
  transaction_id xid8 NOT NULL DEFAULT '0'::xid8,
  position       bigint NOT NULL DEFAULT 0,
  updated_at     timestamptz NOT NULL DEFAULT now()
);
