-- A delivery's retry horizon runs from its first attempt (docs/api.md "Webhooks"), not from its
-- making: a delivery held back (endpoint disabled, workers behind) was given up after one attempt.
-- first_try_at is now set by the claim that makes the attempt, and cleared by a re-send.
ALTER TABLE webhook_deliveries ALTER COLUMN first_try_at DROP NOT NULL;
ALTER TABLE webhook_deliveries ALTER COLUMN first_try_at DROP DEFAULT;
UPDATE webhook_deliveries SET first_try_at = NULL WHERE state = 'pending' AND attempts = 0;
