-- Each game-event publisher's last reserved sequence (RecordsStore::ReserveSequence): kept so a
-- world that restarts goes on from where it was, never again from 1 (which the consumers'
-- watermarks would drop). The same shape as schema/sql/sqlite/0010.
CREATE TABLE event_sequences (
  source TEXT PRIMARY KEY,
  sequence BIGINT NOT NULL CHECK (sequence >= 1)
);
