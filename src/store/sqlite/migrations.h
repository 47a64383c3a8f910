// The SQLite migration runner (private to src/store).
//
// Migrations are numbered, forward-only SQL scripts (schema/sql/sqlite/NNNN_name.sql), compiled
// into the binary by a CMake step (see src/store/CMakeLists.txt). The `schema_migrations` table
// records each applied version with its file name and time. ApplyMigrations refuses a database
// that records a version above every known one, then applies the pending ones in order, each in
// its own BEGIN IMMEDIATE transaction together with its schema_migrations row, so a failed
// migration leaves no trace and a concurrent opener never applies one twice.
//
// Thread safety: none; the caller serializes use of the connection.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "sqlite/connection.h"
#include "telos/base/status.h"

namespace telos::store::sqlite {

struct Migration {
  int64_t version;        // 1, 2, 3 ... without gaps
  std::string_view name;  // the file name, e.g. "0001_accounts_and_characters.sql"
  std::string_view sql;
};

// The migrations compiled into this binary, in version order (generated at build time).
std::span<const Migration> EmbeddedMigrations();

// Brings the database up to the last of `known`, which must be numbered 1..N without gaps
// (else Internal). Returns the schema version afterwards. FailedPrecondition when the database
// already records a version above N. `now_ms` stamps the schema_migrations rows.
Result<int64_t> ApplyMigrations(Connection& conn, std::span<const Migration> known, int64_t now_ms);

// The highest version recorded in schema_migrations (0 for an empty database).
Result<int64_t> AppliedSchemaVersion(Connection& conn);

}  // namespace telos::store::sqlite
