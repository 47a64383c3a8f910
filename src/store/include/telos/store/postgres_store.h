// PostgresStore: the fleet backend of CharacterStore, AccountStore and MailStore, in one
// PostgreSQL database (optionally one schema of it).
//
// Opening brings the schema up to date: the numbered, forward-only migrations in
// schema/sql/postgres/NNNN_*.sql are compiled into the binary, and every one not yet recorded in
// the `schema_migrations` table is applied in order, each in its own transaction under a
// transaction-scoped advisory lock, so two processes opening at once never apply one twice. A
// database whose schema is newer than this binary knows is refused (FailedPrecondition).
//
// Availability: PostgreSQL may go away at any time. A call that finds the connection dead
// drops it; the next call reconnects (lazily, no background thread). After a failed reconnect,
// further attempts wait a bounded, doubling backoff (reconnect_backoff_initial_ms up to
// reconnect_backoff_max_ms, judged by the Clock); calls inside the backoff fail at once. While
// the server is unreachable every call returns Unavailable naming the cause. A read whose
// connection turns out dead is retried once on a new connection (a restarted server goes
// unnoticed); a write is not: it returns UnknownResult when it may have committed (re-read, or
// rely on the fences, before retrying). Nothing crashes and no call blocks longer than
// connect_timeout_ms plus statement_timeout_ms (and the TCP keepalive bound for a silent peer).
//
// Ownership: a PostgresStore owns its connection; the three store references it hands out live
// as long as it does. The Clock must outlive it.
//
// Thread safety: every method of the store and of the three interfaces may be called from any
// thread; one connection is shared under a mutex (see postgres_store.cc for why one). Calls
// BLOCK on network I/O: they run on the dedicated blocking pool or the CharacterSaver's worker,
// never on a zone executor.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "telos/base/clock.h"
#include "telos/base/status.h"
#include "telos/store/account_store.h"
#include "telos/store/audit_store.h"
#include "telos/store/character_store.h"
#include "telos/store/mail_store.h"
#include "telos/store/records_store.h"
#include "telos/store/social_store.h"

namespace telos::store {

struct PostgresStoreOptions {
  // A postgresql:// URL or a libpq "key=value" conninfo, e.g. TELOS_DATABASE_URL.
  std::string conninfo;
  // The schema that holds the tables (created if missing), or empty for the server's default
  // search_path (normally "public"). 1..63 bytes of lower-case ASCII letters, digits and '_',
  // not starting with a digit. Lets several fleets or test runs share one database.
  std::string schema;
  // Shown in pg_stat_activity; empty leaves libpq's default.
  std::string application_name = "telos";
  int64_t connect_timeout_ms = 5'000;
  // Server-side bound on one statement (0: none). A statement cut off returns DeadlineExceeded.
  int64_t statement_timeout_ms = 10'000;
  int64_t reconnect_backoff_initial_ms = 100;
  int64_t reconnect_backoff_max_ms = 5'000;
  // Tests only: every successful save with a zone_lease_epoch appends its ZoneWrite to the
  // write history in the same transaction (CharacterStore::ListZoneWrites). Off in production:
  // the table would grow without bound.
  bool record_zone_writes = false;
};

class PostgresStore {
 public:
  // Connects and migrates. Unavailable when the server cannot be reached within
  // connect_timeout_ms; InvalidArgument for a malformed conninfo or schema name;
  // FailedPrecondition when the schema is newer than this binary's.
  // REQUIRES: options.conninfo is not empty, connect_timeout_ms > 0, the other durations >= 0
  //           and reconnect_backoff_initial_ms <= reconnect_backoff_max_ms (else
  //           InvalidArgument).
  static Result<std::unique_ptr<PostgresStore>> Open(const PostgresStoreOptions& options,
                                                     const Clock& clock);

  virtual ~PostgresStore() = default;

  virtual CharacterStore& characters() = 0;
  virtual AccountStore& accounts() = 0;
  virtual MailStore& mail() = 0;
  // Guilds, friends and locales (migration sqlite 0011 / postgres 0009).
  virtual SocialStore& social() = 0;
  // Game-event tallies applied once each (migration 0004).
  virtual RecordsStore& records() = 0;
  // The staff audit trail (migration 0006).
  virtual AuditStore& audit() = 0;

  // The highest migration applied when the store was opened.
  virtual int64_t schema_version() const = 0;

  // One round trip to the server (SELECT 1): OK while it answers. Unavailable (inside the
  // reconnect backoff at once) when it does not. Blocks like every other call.
  virtual Status Ping() = 0;
};

// The highest migration compiled into this binary.
int64_t PostgresSchemaVersionKnown();

}  // namespace telos::store
