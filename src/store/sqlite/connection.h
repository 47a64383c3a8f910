// A thin RAII layer over one sqlite3 connection (private to src/store).
//
// Connection owns the handle and a cache of prepared statements keyed by their SQL text, so a
// hot query is compiled once. Query binds, steps and resets a cached statement; Transaction is
// BEGIN IMMEDIATE .. COMMIT with a rollback if the scope is left early. SQLite result codes
// become Status here and nowhere else (see SqliteStatus).
//
// Thread safety: none. The owner serializes every use of a Connection and of the objects it
// hands out (SqliteStore does it with one mutex).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "telos/base/status.h"

// Prepares (or fetches from the cache) `sql` and declares a Query named `var` over it; returns
// the error from the enclosing function when preparing fails.
#define TELOS_SQL_QUERY(var, conn, sql)             \
  auto var##_stmt = (conn).Prepare(sql);            \
  if (!var##_stmt.ok()) return var##_stmt.status(); \
  ::telos::store::sqlite::Query var((conn), *var##_stmt)

namespace telos::store::sqlite {

// Maps a result code to a Status: busy/locked/I-O trouble -> Unavailable; unique or primary
// key violations -> AlreadyExists; foreign key violations -> NotFound; other constraints ->
// InvalidArgument; anything else -> Internal. `what` says which operation failed.
Status SqliteStatus(sqlite3* db, int rc, std::string_view what);

class Connection {
 public:
  // Opens (creating) the file with extended result codes, the busy timeout, foreign keys, and
  // WAL journaling for files. `synchronous_full` picks PRAGMA synchronous=FULL over NORMAL.
  static Result<std::unique_ptr<Connection>> Open(const std::string& path, int64_t busy_timeout_ms,
                                                  bool synchronous_full);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  sqlite3* db() const { return db_; }

  // Runs one or more statements without parameters or results.
  Status Exec(std::string_view sql, std::string_view what);

  // The cached statement for `sql` (compiled on first use).
  Result<sqlite3_stmt*> Prepare(std::string_view sql);

 private:
  explicit Connection(sqlite3* db) : db_(db) {}
  sqlite3* db_;
  std::unordered_map<std::string, sqlite3_stmt*> statements_;
};

// One execution of a cached statement. Parameters are 1-based, columns 0-based. The statement
// is reset and its bindings cleared when the Query goes away, so the cache can hand it out again.
class Query {
 public:
  Query(Connection& conn, sqlite3_stmt* stmt) : conn_(conn), stmt_(stmt) {}
  ~Query();
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;

  Query& Bind(int index, int64_t value);
  Query& Bind(int index, std::string_view text);
  // Bytes for a BLOB column (a STRICT table refuses text there).
  Query& BindBlob(int index, std::string_view bytes);

  // True when a row is ready, false when the statement is done.
  Result<bool> Step(std::string_view what);
  // Steps a statement that returns no rows.
  Status Run(std::string_view what);

  int64_t Int(int column) const;
  std::string Text(int column) const;
  std::string Blob(int column) const;

 private:
  Connection& conn_;
  sqlite3_stmt* stmt_;
};

// BEGIN IMMEDIATE takes the write lock up front, so a read-modify-write can never be refused
// half way through with SQLITE_BUSY on upgrading a read lock.
class Transaction {
 public:
  explicit Transaction(Connection& conn) : conn_(conn) {}
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  Status Begin();
  Status Commit();

 private:
  Connection& conn_;
  bool open_ = false;
};

}  // namespace telos::store::sqlite
