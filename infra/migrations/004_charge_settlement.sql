-- A charge is settled once its LookupCompleted is in the log. A charge left unsettled (its
-- instance died mid-lookup) is refunded by the recovery sweep after a grace period.
ALTER TABLE charges ADD COLUMN IF NOT EXISTS charged_at timestamptz;
ALTER TABLE charges ADD COLUMN IF NOT EXISTS settled boolean NOT NULL DEFAULT false;
CREATE INDEX IF NOT EXISTS charges_unsettled ON charges (charged_at) WHERE NOT settled;
