-- Webhook endpoints, their deliveries and attempts, and watches (docs/api.md "Webhooks",
-- "Watches"; services/webhooks, services/watches). Plain state beside the log: an endpoint's
-- secret never enters the log, and the schedule rows are what instances claim.
CREATE TABLE IF NOT EXISTS webhook_endpoints (
  id                         text PRIMARY KEY,
  workspace_id               text NOT NULL,
  url                        text NOT NULL,
  event_types                jsonb NOT NULL,
  description                text,
  secret                     text NOT NULL,
  -- The secret before the last rotation, still signed with until previous_secret_expires_at.
  previous_secret            text,
  previous_secret_expires_at timestamptz,
  enabled                    boolean NOT NULL DEFAULT true,
  failing_since              timestamptz,
  created_at                 timestamptz NOT NULL DEFAULT now(),
  deleted_at                 timestamptz
);
CREATE INDEX IF NOT EXISTS webhook_endpoints_workspace ON webhook_endpoints (workspace_id, created_at) WHERE deleted_at IS NULL;

-- One message to one endpoint; its id is the `webhook-id` of every attempt. A pending delivery is
-- due at next_attempt_at: an instance claims it (SELECT … FOR UPDATE SKIP LOCKED) by moving
-- next_attempt_at past a lease, sends, then records the attempt and the next time or the end.
CREATE TABLE IF NOT EXISTS webhook_deliveries (
  id              text PRIMARY KEY,
  endpoint_id     text NOT NULL REFERENCES webhook_endpoints (id),
  workspace_id    text NOT NULL,
  event_type      text NOT NULL,
  -- The event of the log it was made from: one delivery per endpoint and event, whoever dispatches.
  source_event    text NOT NULL,
  body            text NOT NULL,
  state           text NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts        integer NOT NULL DEFAULT 0,
  first_try_at    timestamptz NOT NULL DEFAULT now(),
  next_attempt_at timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (endpoint_id, source_event),
  CHECK ((state = 'pending') = (next_attempt_at IS NOT NULL))
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX IF NOT EXISTS webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC);

CREATE TABLE IF NOT EXISTS webhook_attempts (
  delivery_id     text NOT NULL REFERENCES webhook_deliveries (id),
  attempt         integer NOT NULL,
  started_at      timestamptz NOT NULL,
  status          text NOT NULL CHECK (status IN ('succeeded', 'failed', 'refused')),
  response_status integer,
  latency_ms      integer NOT NULL,
  error           text,
  PRIMARY KEY (delivery_id, attempt)
);

-- The schedule of each watch (its events are on `watch-<id>`): claimed like deliveries.
CREATE TABLE IF NOT EXISTS watches (
  id                  text PRIMARY KEY,
  workspace_id        text NOT NULL,
  key_id              text NOT NULL,
  operation           text NOT NULL CHECK (operation IN ('company', 'domain', 'person')),
  body                jsonb NOT NULL,
  every               text NOT NULL CHECK (every IN ('1d', '7d', '30d')),
  webhook_endpoint_id text NOT NULL REFERENCES webhook_endpoints (id),
  paused_reason       text CHECK (paused_reason IN ('insufficient_credits')),
  next_run_at         timestamptz NOT NULL,
  last_run_at         timestamptz,
  last_request_id     text,
  content_hash        text,
  data                jsonb,
  created_at          timestamptz NOT NULL DEFAULT now(),
  deleted_at          timestamptz
);
CREATE INDEX IF NOT EXISTS watches_due ON watches (next_run_at) WHERE deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS watches_workspace ON watches (workspace_id, created_at) WHERE deleted_at IS NULL;
