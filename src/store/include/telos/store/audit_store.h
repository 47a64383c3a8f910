// AuditStore: the durable trail of staff actions (issue 30). Every kick, mute, transfer, goto,
// stat, ban and role change is one row: who did it, what, to whom, when, on which world, and a
// free-text detail (reason, duration, outcome). Rows are only ever appended; `telos ctl audit`
// lists them newest first.
//
// Ownership: the store owns the rows; records are returned by value.
//
// Thread safety: implementations are safe to call from any thread. Calls BLOCK on I/O: call
// them from the blocking pool, never from a zone executor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "telos/base/status.h"

namespace telos::store {

struct AuditRow {
  int64_t id = 0;  // assigned by the store, increasing
  int64_t at_unix_ms = 0;
  std::string actor;
  std::string action;
  std::string target;
  std::string detail;
  std::string world;

  bool operator==(const AuditRow&) const = default;
};

class AuditStore {
 public:
  virtual ~AuditStore() = default;
  // Appends the row (its id is ignored) and returns the id given to it.
  // REQUIRES: actor and action are not empty and every field is at most
  //           limits::kAuditDetailBytesMax bytes (else InvalidArgument).
  virtual Result<int64_t> Append(const AuditRow& row) = 0;
  // Up to `limit` (at most limits::kAuditListMax) rows, newest first; with `actor` or `target`
  // not empty, only the rows naming them (exactly, ignoring letter case).
  virtual Result<std::vector<AuditRow>> List(size_t limit, const std::string& actor,
                                             const std::string& target) = 0;
};

}  // namespace telos::store
