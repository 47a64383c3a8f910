#include "sqlite/connection.h"

#include <string>

namespace telos::store::sqlite {

Status SqliteStatus(sqlite3* db, int rc, std::string_view what) {
  std::string message(what);
  message += ": ";
  message += (db != nullptr && sqlite3_errcode(db) == rc) ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  switch (rc) {
    case SQLITE_CONSTRAINT_UNIQUE:
    case SQLITE_CONSTRAINT_PRIMARYKEY: return Status::AlreadyExists(std::move(message));
    case SQLITE_CONSTRAINT_FOREIGNKEY: return Status::NotFound(std::move(message));
    default: break;
  }
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_PROTOCOL:
    case SQLITE_READONLY: return Status::Unavailable(std::move(message));
    case SQLITE_CONSTRAINT:
    case SQLITE_TOOBIG:
    case SQLITE_MISMATCH: return Status::InvalidArgument(std::move(message));
    default: return Status::Internal(std::move(message));
  }
}

Result<std::unique_ptr<Connection>> Connection::Open(const std::string& path,
                                                     int64_t busy_timeout_ms,
                                                     bool synchronous_full) {
  sqlite3* db = nullptr;
  // NOMUTEX: the owner serializes all use (see the header), so SQLite's own lock is redundant.
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status status = SqliteStatus(db, rc, "opening " + path);
    sqlite3_close(db);  // a handle is returned even on failure
    return Status::Unavailable(status.message());
  }
  std::unique_ptr<Connection> conn(new Connection(db));
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, static_cast<int>(busy_timeout_ms));
  TELOS_RETURN_IF_ERROR(conn->Exec("PRAGMA foreign_keys = ON", "enabling foreign keys"));

  // journal_mode answers with the mode in force; a file that cannot do WAL would silently stay
  // in rollback mode, so check. An in-memory database answers "memory", which is expected.
  auto mode = conn->Prepare("PRAGMA journal_mode = WAL");
  if (!mode.ok()) return mode.status();
  {
    Query query(*conn, *mode);
    auto row = query.Step("setting WAL mode");
    if (!row.ok()) return row.status();
    const std::string answer = *row ? query.Text(0) : "";
    if (answer != "wal" && !(path == ":memory:" && answer == "memory")) {
      return Status::Unavailable("cannot put " + path + " in WAL mode (journal_mode is '" + answer +
                                 "')");
    }
  }
  TELOS_RETURN_IF_ERROR(
      conn->Exec(synchronous_full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL",
                 "setting synchronous"));
  return conn;
}

Connection::~Connection() {
  for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
  sqlite3_close(db_);
}

Status Connection::Exec(std::string_view sql, std::string_view what) {
  const std::string text(sql);
  char* error = nullptr;
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error);
  if (rc == SQLITE_OK) return Status::Ok();
  Status status = SqliteStatus(db_, rc, what);
  if (error != nullptr) {
    status = Status(status.code(), std::string(what) + ": " + error);
    sqlite3_free(error);
  }
  return status;
}

Result<sqlite3_stmt*> Connection::Prepare(std::string_view sql) {
  auto it = statements_.find(std::string(sql));
  if (it != statements_.end()) return it->second;
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteStatus(db_, rc, "preparing a statement");
  statements_.emplace(std::string(sql), stmt);
  return stmt;
}

Query::~Query() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

Query& Query::Bind(int index, int64_t value) {
  // Binding a valid index of a live statement can only fail on out-of-memory, which the
  // following Step reports as well, so the code is not kept here.
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Query& Query::Bind(int index, std::string_view text) {
  sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  return *this;
}

Query& Query::BindBlob(int index, std::string_view bytes) {
  sqlite3_bind_blob64(stmt_, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT);
  return *this;
}

Result<bool> Query::Step(std::string_view what) {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteStatus(conn_.db(), rc, what);
}

Status Query::Run(std::string_view what) {
  auto row = Step(what);
  if (!row.ok()) return row.status();
  return Status::Ok();
}

int64_t Query::Int(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

std::string Query::Text(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  const int bytes = sqlite3_column_bytes(stmt_, column);
  return text == nullptr ? std::string() : std::string(text, static_cast<size_t>(bytes));
}

std::string Query::Blob(int column) const {
  const auto* bytes = static_cast<const char*>(sqlite3_column_blob(stmt_, column));
  const int size = sqlite3_column_bytes(stmt_, column);
  return bytes == nullptr ? std::string() : std::string(bytes, static_cast<size_t>(size));
}

Transaction::~Transaction() {
  if (open_) {
    // Best effort: if ROLLBACK itself fails the connection is already in trouble, and SQLite
    // rolls an unfinished transaction back when the connection closes.
    (void)conn_.Exec("ROLLBACK", "rolling back");
  }
}

Status Transaction::Begin() {
  TELOS_RETURN_IF_ERROR(conn_.Exec("BEGIN IMMEDIATE", "starting a write transaction"));
  open_ = true;
  return Status::Ok();
}

Status Transaction::Commit() {
  TELOS_RETURN_IF_ERROR(conn_.Exec("COMMIT", "committing"));
  open_ = false;
  return Status::Ok();
}

}  // namespace telos::store::sqlite
