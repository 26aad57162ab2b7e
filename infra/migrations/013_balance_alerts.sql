-- Low-balance alerts (services/alerts): each workspace's threshold and whether its alert is armed.
-- Written with LowBalanceThresholdChanged (the threshold, armed) and by the balance-alerts
-- subscription (armed), in their transactions; no row: no alert.
CREATE TABLE IF NOT EXISTS balance_alerts (
  workspace_id          text PRIMARY KEY,
  low_balance_threshold bigint,
  armed                 boolean NOT NULL DEFAULT true
);
