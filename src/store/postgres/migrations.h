// The PostgreSQL migration runner (private to src/store).
//
// Migrations are numbered, forward-only SQL scripts (schema/sql/postgres/NNNN_name.sql),
// compiled into the binary by the CMake step in src/store/CMakeLists.txt. The
// `schema_migrations` table (in the connection's schema) records each applied version with its
// file name and time. ApplyMigrations refuses a database that records a version above every
// known one, then applies the pending ones in order, each in its own transaction together with
// its schema_migrations row, so a failed migration leaves no trace.
//
// Concurrency: several processes may Open the same database at once. Every migration
// transaction first takes a transaction-scoped advisory lock (pg_advisory_xact_lock) keyed on
// the schema, then re-reads the applied version under it; the lock is released by the COMMIT
// that also makes the migration visible, so the next holder always sees it and never applies a
// migration twice. The lock also covers creating the schema and the schema_migrations table,
// whose IF NOT EXISTS forms are not safe against a concurrent creator on their own.
//
// Thread safety: none; the caller serializes use of the connection.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "postgres/connection.h"
#include "telos/base/clock.h"
#include "telos/base/status.h"

namespace telos::store::postgres {

struct Migration {
  int64_t version;        // 1, 2, 3 ... without gaps
  std::string_view name;  // the file name, e.g. "0001_accounts_and_characters.sql"
  std::string_view sql;
};

// The migrations compiled into this binary, in version order (generated at build time).
std::span<const Migration> EmbeddedMigrations();

// Brings the database up to the last of `known`, which must be numbered 1..N without gaps
// (else Internal). `schema` (may be empty for the default) is created if missing and must be
// the first entry of the connection's search_path. Returns the schema version afterwards.
// FailedPrecondition when the database already records a version above N. `now_ms` stamps the
// schema_migrations rows.
Result<int64_t> ApplyMigrations(Connection& conn, std::span<const Migration> known,
                                std::string_view schema, int64_t now_ms);

// OK for the default schema (empty) or 1..63 of [a-z0-9_] not starting with a digit: the names
// that need no quoting in SQL. InvalidArgument naming the schema otherwise.
Status ValidateSchemaName(std::string_view schema);

// A fresh connection with the embedded migrations applied: how every PostgreSQL-backed store
// opens. `connect.schema` is validated first; a connection or migration error comes back
// naming the schema. `clock`'s wall time stamps the migration rows.
struct MigratedConnection {
  std::unique_ptr<Connection> conn;
  int64_t schema_version = 0;
};
Result<MigratedConnection> OpenMigrated(const ConnectOptions& connect, const Clock& clock);

}  // namespace telos::store::postgres
