-- The fleet-wide tallies that durable game events feed, applied once each
-- (src/store/include/telos/store/records_store.h; the same shape as schema/sql/sqlite/0006).

-- Per consumer and source, the last sequence applied. An event at or below it is a duplicate.
CREATE TABLE event_watermarks (
  consumer TEXT NOT NULL,
  source TEXT NOT NULL,
  sequence BIGINT NOT NULL CHECK (sequence >= 1),
  PRIMARY KEY (consumer, source)
);

-- One row per (kind, subject): how often, and the first and latest actor and time.
CREATE TABLE game_tallies (
  kind TEXT NOT NULL,
  subject TEXT NOT NULL,
  count BIGINT NOT NULL CHECK (count >= 1),
  first_actor TEXT NOT NULL,
  first_at_ms BIGINT NOT NULL,
  last_actor TEXT NOT NULL,
  last_at_ms BIGINT NOT NULL,
  PRIMARY KEY (kind, subject)
);
