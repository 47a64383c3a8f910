// Status and Result<T>: the expected-failure path of every TelosMUD API.
//
// Expected failures (bad input, a dependency that is down, a lost lease, a lost race) are
// returned, never thrown. Bugs are assertions (assert.h). Both types are [[nodiscard]] so an
// ignored failure is a compile error under -Werror.
//
// Thread safety: values; copy freely across threads.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "telos/base/assert.h"

namespace telos {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // the caller's input is wrong; retrying will not help
  kNotFound,            // the thing asked about does not exist
  kAlreadyExists,       // a create found the thing already there
  kFailedPrecondition,  // the state does not allow this (not the owner, wrong epoch)
  kConflict,            // a compare-and-set lost a race; re-read and rebase
  kUnavailable,         // a dependency cannot be reached right now; retry later
  kDeadlineExceeded,    // took too long; the operation may or may not have happened
  kResourceExhausted,   // a limit was hit (limits.h); shed or back off
  kPermissionDenied,    // authenticated but not allowed, or authentication failed
  kUnknownResult,       // the operation may have been applied: fence before retrying
  kCancelled,           // the component is stopping
  kInternal,            // a broken invariant seen at a boundary
  // A user's own login no longer holds: the credentials a session presents (its login ticket,
  // the assertion it renews) are unknown, expired, forgotten by a restart, revoked by a password
  // change, not this session's, or forged. The same ones will never pass: the user must log in
  // again. Distinct from kPermissionDenied, which is also a refused *caller* (a service's
  // token, which a token roll may fix): a caller acts on this code, never on the message.
  // Appended, not inserted: codes travel as numbers (rpc/status_mapping.h, bus messages).
  kLoginExpired,
};

// The highest code: loops and decoders that range over every code stop here.
inline constexpr StatusCode kStatusCodeLast = StatusCode::kLoginExpired;

// Stable lower-case name of a code, e.g. "unavailable"; used in logs and JSON.
std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) {
    return {StatusCode::kInvalidArgument, std::move(m)};
  }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status FailedPrecondition(std::string m) {
    return {StatusCode::kFailedPrecondition, std::move(m)};
  }
  static Status Conflict(std::string m) { return {StatusCode::kConflict, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status DeadlineExceeded(std::string m) {
    return {StatusCode::kDeadlineExceeded, std::move(m)};
  }
  static Status ResourceExhausted(std::string m) {
    return {StatusCode::kResourceExhausted, std::move(m)};
  }
  static Status PermissionDenied(std::string m) {
    return {StatusCode::kPermissionDenied, std::move(m)};
  }
  static Status UnknownResult(std::string m) { return {StatusCode::kUnknownResult, std::move(m)}; }
  static Status Cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
  static Status LoginExpired(std::string m) { return {StatusCode::kLoginExpired, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "ok", or "<code>: <message>".
  std::string ToString() const;

  bool operator==(const Status&) const = default;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Either a T or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    RELEASE_ASSERT(!status_.ok(), "a Result built from a Status must carry an error");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  // REQUIRES: ok().
  T& value() & {
    RELEASE_ASSERT(ok(), status_.ToString());
    return *value_;
  }
  const T& value() const& {
    RELEASE_ASSERT(ok(), status_.ToString());
    return *value_;
  }
  T&& value() && {
    RELEASE_ASSERT(ok(), status_.ToString());
    return std::move(*value_);
  }
  T value_or(T fallback) const& { return ok() ? *value_ : std::move(fallback); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace telos

// Returns early from the enclosing function when `expr` (a Status) is not OK.
#define TELOS_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::telos::Status telos_status_ = (expr);        \
    if (!telos_status_.ok()) return telos_status_; \
  } while (false)
