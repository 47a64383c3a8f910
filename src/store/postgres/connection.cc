#include "postgres/connection.h"

#include <poll.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <string>

namespace telos::store::postgres {
namespace {

// libpq messages end with a newline; Status messages do not.
std::string Trimmed(const char* text) {
  std::string out = text != nullptr ? text : "";
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::string Labelled(std::string_view what, std::string detail) {
  std::string message(what);
  message += ": ";
  message += detail.empty() ? "unknown error" : std::move(detail);
  return message;
}

}  // namespace

std::string Rows::Text(int row, int column) const {
  return std::string(PQgetvalue(result_.get(), row, column),
                     static_cast<size_t>(PQgetlength(result_.get(), row, column)));
}

int64_t Rows::Int(int row, int column) const {
  return std::strtoll(PQgetvalue(result_.get(), row, column), nullptr, 10);
}

bool Rows::Bool(int row, int column) const {
  return PQgetvalue(result_.get(), row, column)[0] == 't';
}

Status PostgresStatus(PGconn* conn, const PGresult* result, Access access, std::string_view what) {
  const bool lost = result == nullptr || PQstatus(conn) != CONNECTION_OK;
  std::string detail =
      Trimmed(result != nullptr ? PQresultErrorMessage(result) : PQerrorMessage(conn));
  if (detail.empty()) detail = Trimmed(PQerrorMessage(conn));
  if (lost) {
    std::string message = Labelled(what, "lost the connection to PostgreSQL: " + detail);
    if (access == Access::kWrite) {
      return Status::UnknownResult(std::move(message) + " (the write may have been applied)");
    }
    return Status::Unavailable(std::move(message));
  }
  const char* field = PQresultErrorField(result, PG_DIAG_SQLSTATE);
  const std::string sqlstate = field != nullptr ? field : "";
  std::string message = Labelled(what, detail + (sqlstate.empty() ? "" : " [" + sqlstate + "]"));
  if (sqlstate == "23505") return Status::AlreadyExists(std::move(message));
  if (sqlstate == "23503") return Status::NotFound(std::move(message));
  if (sqlstate == "57014") return Status::DeadlineExceeded(std::move(message));
  if (sqlstate == "40001" || sqlstate == "40P01" || sqlstate == "57P01" || sqlstate == "57P02" ||
      sqlstate == "57P03" || sqlstate.starts_with("08") || sqlstate.starts_with("53")) {
    return Status::Unavailable(std::move(message));
  }
  if (sqlstate.starts_with("23") || sqlstate.starts_with("22")) {
    return Status::InvalidArgument(std::move(message));
  }
  return Status::Internal(std::move(message));
}

Result<std::unique_ptr<Connection>> Connection::Open(const ConnectOptions& options) {
  // Parse first, so that a malformed conninfo is told apart from an unreachable server.
  char* parse_error = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(options.conninfo.c_str(), &parse_error);
  if (parsed == nullptr) {
    std::string detail = Trimmed(parse_error);
    PQfreemem(parse_error);
    return Status::InvalidArgument("the PostgreSQL conninfo cannot be parsed: " + detail);
  }
  PQconninfoFree(parsed);

  // libpq's connect_timeout is whole seconds (and at least 2); ours is enforced below, this one
  // only bounds each address libpq tries.
  const std::string timeout_s = std::to_string((options.connect_timeout_ms + 999) / 1000);
  // Later keywords override the URL's (expand_dbname=1 expands only "dbname").
  const char* keys[] = {"dbname",           "connect_timeout", "application_name",
                        "keepalives",       "keepalives_idle", "keepalives_interval",
                        "keepalives_count", "client_encoding", nullptr};
  const char* values[] = {
      options.conninfo.c_str(),
      timeout_s.c_str(),
      options.application_name.empty() ? nullptr : options.application_name.c_str(),
      "1",
      "10",
      "5",
      "3",
      "UTF8",
      nullptr};
  PGconn* conn = PQconnectStartParams(keys, values, /*expand_dbname=*/1);
  if (conn == nullptr) return Status::Unavailable("connecting to PostgreSQL: out of memory");
  auto fail = [&](std::string detail) -> Status {
    PQfinish(conn);
    return Status::Unavailable("connecting to PostgreSQL: " + detail);
  };
  if (PQstatus(conn) == CONNECTION_BAD) return fail(Trimmed(PQerrorMessage(conn)));

  // Drive the non-blocking handshake ourselves so the deadline is in milliseconds.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(options.connect_timeout_ms);
  PostgresPollingStatusType poll_status = PGRES_POLLING_WRITING;
  while (poll_status != PGRES_POLLING_OK) {
    if (poll_status == PGRES_POLLING_FAILED) return fail(Trimmed(PQerrorMessage(conn)));
    const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             deadline - std::chrono::steady_clock::now())
                             .count();
    if (left_ms <= 0) {
      return fail("no answer within " + std::to_string(options.connect_timeout_ms) + " ms");
    }
    pollfd fd{.fd = PQsocket(conn),
              .events = static_cast<short>(poll_status == PGRES_POLLING_READING ? POLLIN : POLLOUT),
              .revents = 0};
    const int ready = ::poll(&fd, 1, static_cast<int>(left_ms));
    if (ready == 0) continue;  // the deadline check above ends the loop
    if (ready < 0 && errno != EINTR) return fail("poll failed");
    poll_status = PQconnectPoll(conn);
  }

  // Server notices ("schema already exists, skipping") are not errors and must not reach
  // stderr; errors arrive through results.
  PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);
  std::unique_ptr<Connection> out(new Connection(conn));
  if (!options.schema.empty()) {
    char* quoted = PQescapeIdentifier(conn, options.schema.data(), options.schema.size());
    if (quoted == nullptr) return Status::InvalidArgument("bad schema name " + options.schema);
    const std::string sql = std::string("SET search_path TO ") + quoted;
    PQfreemem(quoted);
    TELOS_RETURN_IF_ERROR(out->ExecScript(sql, Access::kRead, "setting the search_path"));
  }
  if (options.statement_timeout_ms > 0) {
    TELOS_RETURN_IF_ERROR(
        out->ExecScript("SET statement_timeout = " + std::to_string(options.statement_timeout_ms),
                        Access::kRead, "setting the statement_timeout"));
  }
  return out;
}

Connection::~Connection() {
  PQfinish(conn_);
}

Result<Rows> Connection::Finish(PGresult* result, Access access, std::string_view what) {
  const ExecStatusType status = result != nullptr ? PQresultStatus(result) : PGRES_FATAL_ERROR;
  if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) return Rows(result);
  Status error = PostgresStatus(conn_, result, access, what);
  PQclear(result);
  return error;
}

Result<Rows> Connection::Exec(std::string_view sql, const Params& params, Access access,
                              std::string_view what) {
  const std::string key(sql);
  auto it = statements_.find(key);
  if (it == statements_.end()) {
    const std::string name = "s" + std::to_string(statements_.size() + 1);
    // Preparing writes nothing, so a failure here is never an unknown result.
    auto prepared =
        Finish(PQprepare(conn_, name.c_str(), key.c_str(), 0, nullptr), Access::kRead, what);
    if (!prepared.ok()) return prepared.status();
    it = statements_.emplace(key, name).first;
  }
  std::vector<const char*> values;
  values.reserve(params.values().size());
  for (const std::string& value : params.values()) values.push_back(value.c_str());
  PGresult* result = PQexecPrepared(conn_, it->second.c_str(), static_cast<int>(values.size()),
                                    values.data(), nullptr, nullptr, 0);
  return Finish(result, access, what);
}

Status Connection::ExecScript(std::string_view sql, Access access, std::string_view what) {
  const std::string text(sql);
  // PQexec returns the last statement's result; an error stops the script at that statement.
  auto done = Finish(PQexec(conn_, text.c_str()), access, what);
  return done.ok() ? Status::Ok() : done.status();
}

Transaction::~Transaction() {
  // Best effort: on a dead connection there is nothing to roll back, the server already did.
  if (open_) (void)conn_.ExecScript("ROLLBACK", Access::kRead, "rolling back");
}

Status Transaction::Begin() {
  TELOS_RETURN_IF_ERROR(conn_.ExecScript("BEGIN", Access::kRead, "beginning a transaction"));
  open_ = true;
  return Status::Ok();
}

Status Transaction::Commit() {
  // The commit is the moment of truth: a connection lost during it leaves the outcome unknown.
  open_ = false;
  return conn_.ExecScript("COMMIT", Access::kWrite, "committing");
}

}  // namespace telos::store::postgres
