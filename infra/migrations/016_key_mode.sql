-- Test keys (docs/api.md, "Test keys"; docs/adr/0026-test-keys.md): each key's mode, from its
-- ApiKeyCreated (absent there means live). The ledger and usage reads take a call's mode from its
-- key, so no other table needs the column.
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS mode text NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test'));
