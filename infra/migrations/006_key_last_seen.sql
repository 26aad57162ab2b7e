-- When each API key was last used by any authenticated request (a cache call, a replay,
-- a 400, 402 or 429 made with the key is a use of it too). Plain state written in batches by the
-- instances (services/keys/key-use.ts), not a projection of the log: most such requests record no
-- event. The key list shows the later of this and key_last_used (the completed lookups).
CREATE TABLE IF NOT EXISTS key_last_seen (
  key_id       text PRIMARY KEY,
  last_seen_at timestamptz NOT NULL
);
