#include "postgres/migrations.h"

#include <algorithm>
#include <chrono>
#include <string>

namespace telos::store::postgres {
namespace {

constexpr std::string_view kCreateMigrationsTable = R"sql(
CREATE TABLE IF NOT EXISTS schema_migrations (
  version BIGINT PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at_ms BIGINT NOT NULL
))sql";

// One lock per schema. Advisory locks are database-wide, so the key names the schema; a hash
// collision between two schemas only serializes their migrations, which is harmless.
constexpr std::string_view kLock = "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))";
constexpr std::string_view kSelectMaxVersion =
    "SELECT coalesce(max(version), 0) FROM schema_migrations";
constexpr std::string_view kInsertVersion =
    "INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES ($1, $2, $3)";

// One step under the lock: reads the applied version and, when one is pending, applies the next
// migration. Returns the version afterwards.
Result<int64_t> Step(Connection& conn, std::span<const Migration> known, std::string_view schema,
                     int64_t now_ms) {
  const int64_t newest_known = static_cast<int64_t>(known.size());
  Transaction txn(conn);
  TELOS_RETURN_IF_ERROR(txn.Begin());
  const std::string lock_key = "telos.schema_migrations:" + std::string(schema);
  auto locked =
      conn.Exec(kLock, Params().Add(lock_key), Access::kRead, "taking the migration lock");
  if (!locked.ok()) return locked.status();
  if (!schema.empty()) {
    // The schema was validated by the caller (lower-case letters, digits, '_'), so quoting it
    // by hand is exact.
    const std::string sql = "CREATE SCHEMA IF NOT EXISTS \"" + std::string(schema) + "\"";
    TELOS_RETURN_IF_ERROR(conn.ExecScript(sql, Access::kRead, "creating the schema"));
  }
  TELOS_RETURN_IF_ERROR(
      conn.ExecScript(kCreateMigrationsTable, Access::kRead, "creating schema_migrations"));
  auto max_row =
      conn.Exec(kSelectMaxVersion, Params(), Access::kRead, "reading the schema version");
  if (!max_row.ok()) return max_row.status();
  const int64_t applied = max_row->Int(0, 0);
  if (applied > newest_known) {
    return Status::FailedPrecondition(
        "the database schema is at version " + std::to_string(applied) +
        ", newer than this binary knows (" + std::to_string(newest_known) +
        "); refusing to open it. Run a newer telos, or restore a matching backup.");
  }
  if (applied == newest_known) {
    TELOS_RETURN_IF_ERROR(txn.Commit());
    return applied;
  }
  const Migration& next = known[static_cast<size_t>(applied)];
  const std::string label = "migration " + std::string(next.name);
  TELOS_RETURN_IF_ERROR(conn.ExecScript(next.sql, Access::kRead, label));
  auto inserted = conn.Exec(kInsertVersion, Params().Add(next.version).Add(next.name).Add(now_ms),
                            Access::kRead, label);
  if (!inserted.ok()) return inserted.status();
  TELOS_RETURN_IF_ERROR(txn.Commit());
  return next.version;
}

}  // namespace

Result<int64_t> ApplyMigrations(Connection& conn, std::span<const Migration> known,
                                std::string_view schema, int64_t now_ms) {
  for (size_t i = 0; i < known.size(); ++i) {
    if (known[i].version != static_cast<int64_t>(i) + 1) {
      return Status::Internal("migrations must be numbered 1..N without gaps; found " +
                              std::string(known[i].name) + " at position " + std::to_string(i + 1));
    }
  }
  const int64_t newest_known = static_cast<int64_t>(known.size());
  while (true) {
    auto version = Step(conn, known, schema, now_ms);
    if (!version.ok() || *version == newest_known) return version;
  }
}

Status ValidateSchemaName(std::string_view schema) {
  if (schema.empty()) return Status::Ok();
  const bool ok = schema.size() <= 63 && !(schema[0] >= '0' && schema[0] <= '9') &&
                  std::all_of(schema.begin(), schema.end(), [](char c) {
                    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
                  });
  if (ok) return Status::Ok();
  return Status::InvalidArgument("the PostgreSQL schema name '" + std::string(schema) +
                                 "' must be 1..63 lower-case letters, digits or '_', not "
                                 "starting with a digit");
}

Result<MigratedConnection> OpenMigrated(const ConnectOptions& connect, const Clock& clock) {
  TELOS_RETURN_IF_ERROR(ValidateSchemaName(connect.schema));
  auto conn = Connection::Open(connect);
  if (!conn.ok()) return conn.status();
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(clock.WallNow().time_since_epoch())
          .count();
  auto version = ApplyMigrations(**conn, EmbeddedMigrations(), connect.schema, now_ms);
  if (!version.ok()) {
    const std::string where =
        connect.schema.empty() ? "PostgreSQL" : "PostgreSQL schema " + connect.schema;
    return Status(version.status().code(), where + ": " + version.status().message());
  }
  return MigratedConnection{std::move(conn).value(), *version};
}

}  // namespace telos::store::postgres
