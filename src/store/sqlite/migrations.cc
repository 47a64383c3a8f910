#include "sqlite/migrations.h"

#include <string>

namespace telos::store::sqlite {
namespace {

constexpr std::string_view kCreateMigrationsTable = R"sql(
CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at_ms INTEGER NOT NULL
) STRICT)sql";

constexpr std::string_view kSelectMaxVersion =
    "SELECT coalesce(max(version), 0) FROM schema_migrations";
constexpr std::string_view kSelectVersion = "SELECT 1 FROM schema_migrations WHERE version = ?1";
constexpr std::string_view kInsertVersion =
    "INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES (?1, ?2, ?3)";

Status ApplyOne(Connection& conn, const Migration& migration, int64_t now_ms) {
  const std::string label = "migration " + std::string(migration.name);
  Transaction txn(conn);
  TELOS_RETURN_IF_ERROR(txn.Begin());
  // Another process may have applied it between our check and our write lock.
  auto select = conn.Prepare(kSelectVersion);
  if (!select.ok()) return select.status();
  {
    Query query(conn, *select);
    auto row = query.Bind(1, migration.version).Step(label);
    if (!row.ok()) return row.status();
    if (*row) return Status::Ok();  // the transaction rolls back: nothing to do
  }
  TELOS_RETURN_IF_ERROR(conn.Exec(migration.sql, label));
  auto insert = conn.Prepare(kInsertVersion);
  if (!insert.ok()) return insert.status();
  {
    Query query(conn, *insert);
    TELOS_RETURN_IF_ERROR(
        query.Bind(1, migration.version).Bind(2, migration.name).Bind(3, now_ms).Run(label));
  }
  return txn.Commit();
}

}  // namespace

Result<int64_t> AppliedSchemaVersion(Connection& conn) {
  TELOS_RETURN_IF_ERROR(conn.Exec(kCreateMigrationsTable, "creating schema_migrations"));
  auto select = conn.Prepare(kSelectMaxVersion);
  if (!select.ok()) return select.status();
  Query query(conn, *select);
  auto row = query.Step("reading the schema version");
  if (!row.ok()) return row.status();
  return *row ? query.Int(0) : int64_t{0};
}

Result<int64_t> ApplyMigrations(Connection& conn, std::span<const Migration> known,
                                int64_t now_ms) {
  for (size_t i = 0; i < known.size(); ++i) {
    if (known[i].version != static_cast<int64_t>(i) + 1) {
      return Status::Internal("migrations must be numbered 1..N without gaps; found " +
                              std::string(known[i].name) + " at position " + std::to_string(i + 1));
    }
  }
  const int64_t newest_known = static_cast<int64_t>(known.size());

  auto applied = AppliedSchemaVersion(conn);
  if (!applied.ok()) return applied.status();
  if (*applied > newest_known) {
    return Status::FailedPrecondition(
        "the database schema is at version " + std::to_string(*applied) +
        ", newer than this binary knows (" + std::to_string(newest_known) +
        "); refusing to open it. Run a newer telos, or restore a matching backup.");
  }
  for (const Migration& migration : known) {
    if (migration.version <= *applied) continue;
    TELOS_RETURN_IF_ERROR(ApplyOne(conn, migration, now_ms));
  }
  return AppliedSchemaVersion(conn);
}

}  // namespace telos::store::sqlite
