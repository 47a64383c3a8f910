#include "telos/account/address_throttle.h"

#include <algorithm>

#include "telos/base/limits.h"

namespace telos::account {

AddressThrottle::AddressThrottle(const Clock& clock, size_t failures_max, Duration window)
    : clock_(clock), failures_max_(failures_max), window_(window) {}

void AddressThrottle::Prune(std::deque<Instant>& failures, Instant now) const {
  while (!failures.empty() && now - failures.front() >= window_) failures.pop_front();
}

Status AddressThrottle::Check(std::string_view address) {
  const Instant now = clock_.Now();
  std::lock_guard lock(mu_);
  auto it = failures_.find(address);
  if (it == failures_.end()) return Status::Ok();
  Prune(it->second, now);
  if (it->second.empty()) {
    failures_.erase(it);
    return Status::Ok();
  }
  if (it->second.size() < failures_max_) return Status::Ok();
  const auto wait = window_ - (now - it->second.front());
  const auto wait_s = std::chrono::duration_cast<std::chrono::seconds>(wait).count() + 1;
  return Status::ResourceExhausted("Too many failed logins from your address; try again in " +
                                   std::to_string(wait_s) + " seconds.");
}

void AddressThrottle::RecordFailure(std::string_view address) {
  const Instant now = clock_.Now();
  std::lock_guard lock(mu_);
  auto it = failures_.find(address);
  if (it == failures_.end()) {
    if (failures_.size() >= limits::kThrottledAddressesMax) {
      // Forget the address whose latest failure is oldest (entries are never empty).
      const auto victim = std::min_element(
          failures_.begin(), failures_.end(),
          [](const auto& a, const auto& b) { return a.second.back() < b.second.back(); });
      failures_.erase(victim);
    }
    it = failures_.emplace(std::string(address), std::deque<Instant>{}).first;
  }
  Prune(it->second, now);
  it->second.push_back(now);
  if (it->second.size() > failures_max_) it->second.pop_front();
}

}  // namespace telos::account
