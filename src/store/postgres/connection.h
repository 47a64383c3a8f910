// A thin RAII layer over one libpq connection (private to src/store).
//
// Connection owns the PGconn and remembers which statements it has prepared (keyed by their SQL
// text, named s1, s2, ... on this connection), so a hot query is parsed and planned once per
// connection. Parameters travel as text and results come back as text. libpq results and
// SQLSTATEs become Status here and nowhere else (see PostgresStatus). Transaction is
// BEGIN .. COMMIT with a rollback if the scope is left early.
//
// A connection whose socket died says so through broken(); the owner then drops it and opens a
// new one (PostgresStore reconnects lazily). Prepared statements die with their connection.
//
// Thread safety: none. The owner serializes every use of a Connection (PostgresStore does it
// with one mutex).
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "telos/base/status.h"

namespace telos::store::postgres {

struct ConnectOptions {
  std::string conninfo;  // a postgresql:// URL or "key=value" pairs
  std::string schema;    // empty: the server's default search_path
  std::string application_name;
  int64_t connect_timeout_ms = 0;    // > 0
  int64_t statement_timeout_ms = 0;  // 0: none
};

// Whether a statement changes data: if the connection dies while a write is in flight, the
// write may or may not have committed (UnknownResult); a read that dies is just Unavailable.
enum class Access { kRead, kWrite };

// Text parameters of one statement, $1 first.
class Params {
 public:
  Params& Add(std::string_view text) {
    values_.emplace_back(text);
    return *this;
  }
  Params& Add(int64_t value) {
    values_.push_back(std::to_string(value));
    return *this;
  }
  Params& Add(bool value) {
    values_.emplace_back(value ? "t" : "f");
    return *this;
  }
  Params& Add(const char* text) { return Add(std::string_view(text)); }
  const std::vector<std::string>& values() const { return values_; }

 private:
  std::vector<std::string> values_;
};

// The rows of one result. Columns and rows are 0-based.
class Rows {
 public:
  explicit Rows(PGresult* result) : result_(result, &PQclear) {}
  int size() const { return PQntuples(result_.get()); }
  int columns() const { return PQnfields(result_.get()); }
  bool empty() const { return size() == 0; }
  std::string Text(int row, int column) const;
  int64_t Int(int row, int column) const;
  bool Bool(int row, int column) const;

 private:
  std::unique_ptr<PGresult, void (*)(PGresult*)> result_;
};

class Connection {
 public:
  // Connects within options.connect_timeout_ms (judged by the steady clock: libpq's own
  // connect_timeout has one-second granularity), then sets the session's search_path and
  // statement_timeout. Unavailable when the server cannot be reached or refuses us in time;
  // InvalidArgument when the conninfo cannot be parsed.
  static Result<std::unique_ptr<Connection>> Open(const ConnectOptions& options);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs `sql` as a prepared statement (prepared on first use on this connection).
  Result<Rows> Exec(std::string_view sql, const Params& params, Access access,
                    std::string_view what);
  // Runs one or more statements without parameters through the simple query protocol.
  Status ExecScript(std::string_view sql, Access access, std::string_view what);

  // True once the socket is known to be dead; the connection is then useless.
  bool broken() const { return PQstatus(conn_) != CONNECTION_OK; }
  // The server process serving this connection (for tests and logs).
  int backend_pid() const { return PQbackendPID(conn_); }

 private:
  explicit Connection(PGconn* conn) : conn_(conn) {}
  // Turns a finished PGresult into Rows or an error Status.
  Result<Rows> Finish(PGresult* result, Access access, std::string_view what);

  PGconn* conn_;
  std::unordered_map<std::string, std::string> statements_;  // SQL text -> statement name
};

// Maps a failed result to a Status: no result or a dead connection -> Unavailable (a read) or
// UnknownResult (a write, which may have committed); class 08 (connection), 53 (resources),
// 57P01..57P03 (shutdown) -> Unavailable; 57014 (statement timeout) -> DeadlineExceeded;
// 23505 unique -> AlreadyExists; 23503 foreign key -> NotFound; other class 23 and class 22
// (bad data) -> InvalidArgument; 40001/40P01 (serialization, deadlock) -> Unavailable, since
// nothing was applied and a retry may succeed; anything else -> Internal.
Status PostgresStatus(PGconn* conn, const PGresult* result, Access access, std::string_view what);

// BEGIN .. COMMIT; the destructor rolls back a transaction that was begun and not committed.
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

}  // namespace telos::store::postgres
