#include "pending_requests.h"

#include <algorithm>
#include <vector>

#include "telos/bus/bus.h"

namespace telos::bus::internal {

RequestClock::time_point RequestDeadline(std::chrono::milliseconds timeout) {
  return RequestClock::now() + std::clamp(timeout, std::chrono::milliseconds(0),
                                          std::chrono::milliseconds(kRequestTimeoutMsMax));
}

std::string ReplySubject(std::string_view inbox_prefix, uint64_t token) {
  return std::string(inbox_prefix) + std::to_string(token);
}

std::optional<uint64_t> ReplyToken(std::string_view subject, std::string_view inbox_prefix) {
  if (!subject.starts_with(inbox_prefix)) return std::nullopt;
  uint64_t token = 0;
  for (const char c : subject.substr(inbox_prefix.size())) {
    if (c < '0' || c > '9') return std::nullopt;
    token = token * 10 + static_cast<uint64_t>(c - '0');
  }
  return token;
}

uint64_t PendingRequests::Add(Done done, RequestClock::time_point deadline) {
  if (by_token_.size() >= kPendingRequestsMax) {
    complete_(std::move(done),
              Status::ResourceExhausted("too many requests waiting for an answer"));
    return 0;
  }
  const uint64_t token = next_token_++;
  by_token_.emplace(token, Entry{deadline, std::move(done)});
  deadlines_.emplace(deadline, token);
  return token;
}

PendingRequests::Done PendingRequests::Take(uint64_t token) {
  auto it = by_token_.find(token);
  if (it == by_token_.end()) return nullptr;
  deadlines_.erase({it->second.deadline, token});
  Done done = std::move(it->second.done);
  by_token_.erase(it);
  return done;
}

void PendingRequests::Fail(uint64_t token, Status status) {
  if (Done done = Take(token)) complete_(std::move(done), std::move(status));
}

void PendingRequests::FailAll(const Status& status) {
  auto all = std::move(by_token_);
  by_token_.clear();
  deadlines_.clear();
  for (auto& [token, entry] : all) complete_(std::move(entry.done), status);
}

bool PendingRequests::FailExpired(RequestClock::time_point now) {
  std::vector<Done> expired;
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    expired.push_back(Take(deadlines_.begin()->second));
  }
  for (Done& done : expired) {
    complete_(std::move(done), Status::DeadlineExceeded("nobody answered the request in time"));
  }
  return !expired.empty();
}

std::optional<RequestClock::time_point> PendingRequests::NextDeadline() const {
  if (deadlines_.empty()) return std::nullopt;
  return deadlines_.begin()->first;
}

}  // namespace telos::bus::internal
