// SqliteLedger: the embedded backend of arcade::Ledger (`telos serve`), in an SQLite file —
// normally the same file as the SqliteStore, whose migrations (schema/sql/sqlite) create the
// arcade tables; opening a ledger applies them too, so either may be opened first.
//
// A batch is one BEGIN IMMEDIATE .. COMMIT: the write lock is taken up front, the snapshot read
// under it, arcade::PlanBatch decides, and the applied postings, their legs, the balances and
// the closures are written before the one commit. With synchronous_full every commit is durable
// across power loss; the group commit in front of the ledger makes that one fsync per batch.
//
// Ownership: the ledger owns its connection. The Clock (posting timestamps) must outlive it.
//
// Thread safety: every method may be called from any thread; the connection is used under one
// mutex. Calls BLOCK on disk I/O (see arcade/ledger.h).
#pragma once

#include <memory>
#include <string>

#include "telos/arcade/ledger.h"
#include "telos/base/clock.h"
#include "telos/base/limits.h"
#include "telos/base/status.h"

namespace telos::store {

struct SqliteLedgerOptions {
  std::string path;  // a file (created if missing) or ":memory:"
  int64_t busy_timeout_ms = limits::kSqliteBusyTimeoutMs;
  bool synchronous_full = true;
};

class SqliteLedger {
 public:
  // Opens and migrates the file. Unavailable when it cannot be opened; FailedPrecondition when
  // its schema is newer than this binary's. REQUIRES: a non-empty path (else InvalidArgument).
  static Result<std::unique_ptr<arcade::Ledger>> Open(const SqliteLedgerOptions& options,
                                                      const Clock& clock);
};

}  // namespace telos::store
