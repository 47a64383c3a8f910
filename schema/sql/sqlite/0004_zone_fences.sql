-- The third fence on character saves: the zone lease epoch (DESIGN invariant 1; the same shape
-- as schema/sql/postgres/0003).
--
-- Every tenure of a zone holds a lease epoch that only grows. A save made by a leased zone
-- carries (zone, shard, lease epoch), and the store refuses it when the zone's fence is above
-- that epoch. A new tenure raises the fence before its zone runs, so every save of an older
-- tenure is refused from then on, even one from a shard that was paused past its lease.

-- Who last wrote the row. Rows written before this migration read as an unleased write
-- ('' and 0), which is also what a save from the lobby or from outside a zone stores.
ALTER TABLE characters ADD COLUMN writer_shard TEXT NOT NULL DEFAULT '';
ALTER TABLE characters
  ADD COLUMN zone_lease_epoch INTEGER NOT NULL DEFAULT 0 CHECK (zone_lease_epoch >= 0);

-- One row per zone that was ever raised or saved under a lease. lease_epoch never decreases;
-- shard_id and updated_at_ms say who raised it last and when (application Unix milliseconds).
CREATE TABLE zone_fences (
  zone_id TEXT PRIMARY KEY,
  lease_epoch INTEGER NOT NULL CHECK (lease_epoch >= 1),
  shard_id TEXT NOT NULL,
  updated_at_ms INTEGER NOT NULL
) STRICT;

-- The write history a test checker reads: one row per successful leased save, appended in the
-- save's transaction, only while the store runs with record_zone_writes. No foreign key: the
-- history outlives a deleted character. AUTOINCREMENT so that ids are never reused.
CREATE TABLE zone_writes (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  zone_id TEXT NOT NULL,
  lease_epoch INTEGER NOT NULL CHECK (lease_epoch >= 1),
  shard_id TEXT NOT NULL,
  name_key TEXT NOT NULL,
  state_version INTEGER NOT NULL CHECK (state_version >= 1),
  written_at_ms INTEGER NOT NULL
) STRICT;
