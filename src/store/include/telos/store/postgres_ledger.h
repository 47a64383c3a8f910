// PostgresLedger: the fleet backend of arcade::Ledger, in the same PostgreSQL database (and
// schema) as the PostgresStore; opening it applies the migrations of schema/sql/postgres.
//
// A batch is one transaction of a fixed number of statements whatever its size (set-based, the
// postings travel as arrays): create the named accounts if missing, lock their rows FOR UPDATE
// in name order (so two instances posting for the same player — two games driven by two
// drivers — serialize there and never both spend the same chips), read the closures and the
// applied keys, let arcade::PlanBatch decide, then insert the postings, their legs and the
// closures and add the net deltas to the balances, and commit once. A CHECK constraint keeps
// every balance but the house's at zero or more even if a bug slipped past the plan.
//
// Availability: a connection found dead is dropped and the next call opens a new one. A commit
// whose connection dies answers UnknownResult (retry with the same keys: the replay answers
// with the original results); two instances inserting the same new key at once make the later
// one fail with Conflict (retry: it then replays).
//
// Ownership: the ledger owns its connection. The Clock (posting timestamps) must outlive it.
//
// Thread safety: every method may be called from any thread; one connection under one mutex.
// Calls BLOCK on network I/O (see arcade/ledger.h).
#pragma once

#include <memory>
#include <string>

#include "telos/arcade/ledger.h"
#include "telos/base/clock.h"
#include "telos/base/status.h"

namespace telos::store {

struct PostgresLedgerOptions {
  std::string conninfo;  // a postgresql:// URL or key=value conninfo, e.g. TELOS_DATABASE_URL
  std::string schema;    // as PostgresStoreOptions::schema (empty: the default search_path)
  std::string application_name = "telos-arcade";
  int64_t connect_timeout_ms = 5'000;
  int64_t statement_timeout_ms = 10'000;
};

class PostgresLedger {
 public:
  // Connects and migrates. Unavailable when the server cannot be reached; InvalidArgument for a
  // bad conninfo or schema name; FailedPrecondition when the schema is newer than this binary's.
  static Result<std::unique_ptr<arcade::Ledger>> Open(const PostgresLedgerOptions& options,
                                                      const Clock& clock);
};

}  // namespace telos::store
