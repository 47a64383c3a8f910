-- The embedded durable event streams (src/store/sqlite_event_log.cc, the contract in
-- src/bus/include/telos/bus/durable.h): what JetStream stores for a fleet, `telos serve` keeps
-- here, so its events survive a restart.

-- One row per stream. last_sequence is the last sequence handed out (sequences are never
-- reused, even after the events are pruned).
CREATE TABLE event_streams (
  name TEXT PRIMARY KEY,
  subjects TEXT NOT NULL,
  max_age_ms INTEGER NOT NULL CHECK (max_age_ms >= 0),
  max_messages INTEGER NOT NULL CHECK (max_messages >= 0),
  duplicate_window_ms INTEGER NOT NULL CHECK (duplicate_window_ms > 0),
  last_sequence INTEGER NOT NULL DEFAULT 0 CHECK (last_sequence >= 0)
) STRICT;

-- The stored events, pruned by their stream's bounds. msg_id is '' when the publisher gave
-- none; published_ms is application Unix milliseconds.
CREATE TABLE event_log (
  stream TEXT NOT NULL REFERENCES event_streams (name) ON DELETE CASCADE,
  sequence INTEGER NOT NULL CHECK (sequence >= 1),
  subject TEXT NOT NULL,
  data BLOB NOT NULL,
  msg_id TEXT NOT NULL,
  published_ms INTEGER NOT NULL,
  PRIMARY KEY (stream, sequence)
) STRICT, WITHOUT ROWID;
CREATE INDEX event_log_msg_ids ON event_log (stream, msg_id) WHERE msg_id <> '';

-- One row per durable consumer. Every event at or below answered_through has been answered
-- (acked, rejected or parked); head_sequence is the event being delivered and head_deliveries
-- how often it has been handed to a handler, written before each hand-over so a crash inside
-- the handler still counts towards max_deliveries.
CREATE TABLE event_consumers (
  stream TEXT NOT NULL REFERENCES event_streams (name) ON DELETE CASCADE,
  durable TEXT NOT NULL,
  answered_through INTEGER NOT NULL DEFAULT 0 CHECK (answered_through >= 0),
  head_sequence INTEGER NOT NULL DEFAULT 0 CHECK (head_sequence >= 0),
  head_deliveries INTEGER NOT NULL DEFAULT 0 CHECK (head_deliveries >= 0),
  PRIMARY KEY (stream, durable)
) STRICT;
