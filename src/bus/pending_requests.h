// Private to src/bus: the requests one bus is waiting to hear back about, and the reply
// subjects that carry their tokens. Both backends keep a PendingRequests under their own lock,
// so the bookkeeping and the ways a request ends are written once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "telos/base/status.h"

namespace telos::bus::internal {

using RequestClock = std::chrono::steady_clock;

// now + timeout, the timeout clamped to [0, kRequestTimeoutMsMax].
RequestClock::time_point RequestDeadline(std::chrono::milliseconds timeout);

// A reply subject is the requester's inbox prefix followed by the request's token.
std::string ReplySubject(std::string_view inbox_prefix, uint64_t token);
// The token of `subject`; nullopt unless it is `inbox_prefix` followed by digits.
std::optional<uint64_t> ReplyToken(std::string_view subject, std::string_view inbox_prefix);

// token -> {deadline, completion}, with the deadlines in order. Not thread-safe: the owner holds
// its own lock around every call. It never runs a completion: a request that ends here is handed
// to the owner's `complete`, which queues it to run later, unlocked.
class PendingRequests {
 public:
  using Done = std::function<void(Result<std::string>)>;
  // Called under the owner's lock: must only queue `done(result)`.
  using Complete = std::function<void(Done done, Result<std::string> result)>;

  explicit PendingRequests(Complete complete) : complete_(std::move(complete)) {}

  bool empty() const { return by_token_.empty(); }

  // Registers `done` and returns its token (never 0); or, with kPendingRequestsMax already
  // waiting, ends it with kResourceExhausted and returns 0. REQUIRES: done != nullptr.
  uint64_t Add(Done done, RequestClock::time_point deadline);
  // Removes request `token` and returns its completion, for the owner to run with the answer;
  // null if it already ended (answered, timed out or failed) or never was.
  Done Take(uint64_t token);
  // Ends request `token` with `status`, unless it already ended.
  void Fail(uint64_t token, Status status);
  // Ends every request with `status`.
  void FailAll(const Status& status);
  // Ends the requests whose deadline is at or before `now` with kDeadlineExceeded, earliest
  // first; false if there were none.
  bool FailExpired(RequestClock::time_point now);
  // The earliest deadline, if any request is waiting.
  std::optional<RequestClock::time_point> NextDeadline() const;

 private:
  struct Entry {
    RequestClock::time_point deadline;
    Done done;
  };

  const Complete complete_;
  std::unordered_map<uint64_t, Entry> by_token_;
  std::set<std::pair<RequestClock::time_point, uint64_t>> deadlines_;
  uint64_t next_token_ = 1;
};

}  // namespace telos::bus::internal
