-- Checkpoints: the frequent snapshot of a playing character between two saves of its row
-- (CheckpointStore, the embedded backend). Load picks the fresher of row and checkpoint by
-- (owner_epoch, state_version), a tie going to the checkpoint.
--
-- No foreign key to characters: a checkpoint is written by its own store and must not fail
-- because of the row. Deleting a character deletes its checkpoint (the trigger below), so a
-- later character of the same name never loads an old snapshot.

CREATE TABLE checkpoints (
  name_key TEXT PRIMARY KEY,
  display_name TEXT NOT NULL,
  account_id INTEGER NOT NULL CHECK (account_id >= 0),
  state_version INTEGER NOT NULL CHECK (state_version >= 1),
  owner_epoch INTEGER NOT NULL CHECK (owner_epoch >= 0),
  zone_id TEXT NOT NULL,
  room_id TEXT NOT NULL,
  state_json TEXT NOT NULL,
  written_at_ms INTEGER NOT NULL
) STRICT;

CREATE TRIGGER characters_delete_checkpoint AFTER DELETE ON characters
BEGIN
  DELETE FROM checkpoints WHERE name_key = OLD.name_key;
END;
