-- Low-balance alerts (services/alerts): each workspace's threshold and whether its alert is armed.
-- Written with LowBalanceThresholdChanged (the threshold, armed) and by the balance-alerts
-- subscription (armed), in their transactions; no row: no alert.
CREATE TABLE IF NOT EXISTS balance_alerts (
  workspace_id          text PRIMARY KEY,
  low_balance_threshold bigint,
  armed                 boolean NOT NULL DEFAULT true
);

-- The last call of each workspace refused with 402 insufficient_credits, for the console's banner.
-- A refusal appends no event (nothing is charged): plain state, overwritten by the next one.
CREATE TABLE IF NOT EXISTS last_payment_refusals (
  workspace_id text PRIMARY KEY,
  request_id   text NOT NULL,
  key_id       text NOT NULL,
  path         text NOT NULL,
  refused_at   timestamptz NOT NULL
);
