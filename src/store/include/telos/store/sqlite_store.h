// SqliteStore: the embedded backend of CharacterStore, AccountStore, MailStore and CheckpointStore,
// in one SQLite database file.
//
// Opening a file brings its schema up to date: the numbered, forward-only migrations in
// schema/sql/sqlite/NNNN_*.sql are compiled into the binary, and every one not yet recorded in
// the `schema_migrations` table is applied in order, each in its own transaction. A file whose
// schema is newer than this binary knows is refused (FailedPrecondition), because an old binary
// writing a newer schema could corrupt it. The database runs in WAL mode with a busy timeout,
// foreign keys on, and STRICT tables.
//
// Ownership: a SqliteStore owns its connection; the four store references it hands out live as
// long as it does. The Clock must outlive it.
//
// Thread safety: every method of the store and of the four interfaces may be called from any
// thread; one connection is shared under a mutex. Calls BLOCK on disk I/O (and on another
// process's write lock, up to the busy timeout): they run on the dedicated blocking pool or the
// CharacterSaver's worker, never on a zone executor.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "telos/base/clock.h"
#include "telos/base/limits.h"
#include "telos/base/status.h"
#include "telos/store/account_store.h"
#include "telos/store/audit_store.h"
#include "telos/store/character_store.h"
#include "telos/store/checkpoint_store.h"
#include "telos/store/mail_store.h"
#include "telos/store/records_store.h"
#include "telos/store/social_store.h"

namespace telos::store {

struct SqliteStoreOptions {
  // A file path (created if missing), or ":memory:" for a private database that vanishes on
  // close (tests; WAL does not apply to it).
  std::string path;
  int64_t busy_timeout_ms = limits::kSqliteBusyTimeoutMs;
  // FULL survives power loss at the cost of an fsync per commit; NORMAL (false) survives a
  // process crash only. Durable game state wants FULL.
  bool synchronous_full = true;
  // Tests only: every successful save with a zone_lease_epoch appends its ZoneWrite to the
  // write history in the same transaction (CharacterStore::ListZoneWrites). Off in production:
  // the table would grow without bound.
  bool record_zone_writes = false;
};

class SqliteStore {
 public:
  // Opens (creating if needed) and migrates the database. Unavailable when the file cannot be
  // opened or is locked; FailedPrecondition when its schema is newer than this binary's.
  // REQUIRES: options.path is not empty, options.busy_timeout_ms >= 0 (else InvalidArgument).
  static Result<std::unique_ptr<SqliteStore>> Open(const SqliteStoreOptions& options,
                                                   const Clock& clock);

  virtual ~SqliteStore() = default;

  virtual CharacterStore& characters() = 0;
  virtual AccountStore& accounts() = 0;
  virtual MailStore& mail() = 0;
  // Guilds, friends and locales (migration sqlite 0011 / postgres 0009).
  virtual SocialStore& social() = 0;
  // The embedded CheckpointStore, in the same file (migration 0003).
  virtual CheckpointStore& checkpoints() = 0;
  // Game-event tallies applied once each (migration 0006).
  virtual RecordsStore& records() = 0;
  // The staff audit trail (migration 0008).
  virtual AuditStore& audit() = 0;

  // The highest migration applied to the file.
  virtual int64_t schema_version() const = 0;
};

// The highest migration compiled into this binary.
int64_t SqliteSchemaVersionKnown();

}  // namespace telos::store
