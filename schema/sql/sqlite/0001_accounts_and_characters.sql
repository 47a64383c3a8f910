-- Accounts and their characters.
--
-- Names are unique by their lower-case key; the spelling chosen at creation is kept for display.
-- Timestamps are Unix milliseconds written by the application (its Clock), not by SQLite.

CREATE TABLE accounts (
  id INTEGER PRIMARY KEY,
  name_key TEXT NOT NULL UNIQUE,
  display_name TEXT NOT NULL,
  password_hash TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  failed_logins INTEGER NOT NULL DEFAULT 0 CHECK (failed_logins >= 0),
  locked_until_ms INTEGER NOT NULL DEFAULT 0
) STRICT;

-- state_version: optimistic concurrency, +1 per save.
-- owner_epoch: the ownership fence, raised by every claim, never lowered.
-- state_json: the game state, opaque to the store.
CREATE TABLE characters (
  name_key TEXT PRIMARY KEY,
  display_name TEXT NOT NULL,
  account_id INTEGER NOT NULL REFERENCES accounts (id),
  state_version INTEGER NOT NULL CHECK (state_version >= 1),
  owner_epoch INTEGER NOT NULL CHECK (owner_epoch >= 0),
  zone_id TEXT NOT NULL,
  room_id TEXT NOT NULL,
  state_json TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL
) STRICT;

CREATE INDEX characters_by_account ON characters (account_id, created_at_ms);
