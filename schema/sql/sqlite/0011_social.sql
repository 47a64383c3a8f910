-- Guilds, friends and the account's locale (src/store/include/telos/store/social_store.h; the
-- same shape as schema/sql/postgres/0009). Names are keyed by their lower-case form.

CREATE TABLE guilds (
  name_key TEXT PRIMARY KEY,
  display_name TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL
) STRICT;

-- One row per character at most: a character is in one guild or none. rank: 0 member,
-- 1 officer, 2 founder.
CREATE TABLE guild_members (
  member_key TEXT PRIMARY KEY REFERENCES characters (name_key) ON DELETE CASCADE,
  guild_key TEXT NOT NULL REFERENCES guilds (name_key) ON DELETE CASCADE,
  rank INTEGER NOT NULL CHECK (rank IN (0, 1, 2)),
  joined_at_ms INTEGER NOT NULL
) STRICT;

CREATE INDEX guild_members_by_guild ON guild_members (guild_key, rank);

CREATE TABLE guild_invites (
  guild_key TEXT NOT NULL REFERENCES guilds (name_key) ON DELETE CASCADE,
  invitee_key TEXT NOT NULL REFERENCES characters (name_key) ON DELETE CASCADE,
  invited_at_ms INTEGER NOT NULL,
  PRIMARY KEY (guild_key, invitee_key)
) STRICT;

CREATE INDEX guild_invites_by_invitee ON guild_invites (invitee_key);

CREATE TABLE friends (
  owner_key TEXT NOT NULL REFERENCES characters (name_key) ON DELETE CASCADE,
  friend_key TEXT NOT NULL REFERENCES characters (name_key) ON DELETE CASCADE,
  added_at_ms INTEGER NOT NULL,
  PRIMARY KEY (owner_key, friend_key)
) STRICT;

CREATE INDEX friends_by_friend ON friends (friend_key);

-- "xx-YY", or empty until the player sets one.
ALTER TABLE accounts ADD COLUMN locale TEXT NOT NULL DEFAULT '';
