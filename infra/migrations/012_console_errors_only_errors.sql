-- The overview's "last errors" holds errors only, by the one definition usage counts with
-- (services/projections/usage.ts endedInError): not-founds are answers, not errors.
DELETE FROM console_errors c USING events e WHERE e.position = c.position AND e.data->>'outcome' <> 'error';
