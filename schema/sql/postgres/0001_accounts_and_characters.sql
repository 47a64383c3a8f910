-- Accounts and their characters (PostgreSQL; the same shape as schema/sql/sqlite/0001).
--
-- Names are unique by their lower-case key; the spelling chosen at creation is kept for display.
-- Timestamps are Unix milliseconds written by the application (its Clock), not by the server.
-- Tables are created unqualified: they land in the first schema of the connection's search_path.

CREATE TABLE accounts (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name_key TEXT NOT NULL UNIQUE,
  display_name TEXT NOT NULL,
  password_hash TEXT NOT NULL,
  created_at_ms BIGINT NOT NULL,
  failed_logins BIGINT NOT NULL DEFAULT 0 CHECK (failed_logins >= 0),
  locked_until_ms BIGINT NOT NULL DEFAULT 0
);

-- state_version: optimistic concurrency, +1 per save.
-- owner_epoch: the ownership fence, raised by every claim, never lowered.
-- state_json: the game state, opaque to the store (TEXT, not JSONB: the store never looks inside).
CREATE TABLE characters (
  name_key TEXT PRIMARY KEY,
  display_name TEXT NOT NULL,
  account_id BIGINT NOT NULL REFERENCES accounts (id),
  state_version BIGINT NOT NULL CHECK (state_version >= 1),
  owner_epoch BIGINT NOT NULL CHECK (owner_epoch >= 0),
  zone_id TEXT NOT NULL,
  room_id TEXT NOT NULL,
  state_json TEXT NOT NULL,
  created_at_ms BIGINT NOT NULL,
  updated_at_ms BIGINT NOT NULL
);

CREATE INDEX characters_by_account ON characters (account_id, created_at_ms);
