#include "telos/account/address_throttle.h"

#include <algorithm>

#include "telos/base/assert.h"
#include "telos/base/limits.h"

namespace telos::account {

std::string TryAgainIn(Duration wait) {
  // Rounded up: "try again in 0 seconds" would invite a retry that is still refused.
  const int64_t seconds =
      std::max<int64_t>(1, std::chrono::ceil<std::chrono::seconds>(wait).count());
  if (seconds < 120) return "try again in " + std::to_string(seconds) + " seconds.";
  const int64_t minutes = std::chrono::ceil<std::chrono::minutes>(wait).count();
  return "try again in " + std::to_string(minutes) + " minutes.";
}

void EventWindow::Prune(Instant now, Duration window) {
  while (!events_.empty() && now - events_.front() >= window) events_.pop_front();
}

bool EventWindow::Full(Instant now, size_t events_max, Duration window) {
  Prune(now, window);
  return events_.size() >= events_max;
}

Duration EventWindow::WaitAt(Instant now, Duration window) const {
  return window - (now - events_.front());
}

void EventWindow::Add(Instant now, size_t events_max, Duration window) {
  Prune(now, window);
  events_.push_back(now);
  if (events_.size() > events_max) events_.pop_front();
}

AddressThrottle::AddressThrottle(const Clock& clock, size_t failures_max, Duration window,
                                 std::string refusal)
    : clock_(clock), events_max_(failures_max), window_(window), refusal_(std::move(refusal)) {
  // With no event allowed there would be no oldest event to wait for.
  RELEASE_ASSERT(events_max_ >= 1, "AddressThrottle needs failures_max >= 1");
}

Status AddressThrottle::CheckLocked(std::string_view address, Instant now) {
  auto it = events_.find(address);
  if (it == events_.end()) return Status::Ok();
  const bool full = it->second.Full(now, events_max_, window_);
  if (it->second.empty()) {
    events_.erase(it);
    return Status::Ok();
  }
  if (!full) return Status::Ok();
  return Status::ResourceExhausted(refusal_ + "; " + TryAgainIn(it->second.WaitAt(now, window_)));
}

void AddressThrottle::RecordLocked(std::string_view address, Instant now) {
  auto it = events_.find(address);
  if (it == events_.end()) {
    if (events_.size() >= limits::kThrottledAddressesMax) {
      // Forget the address whose latest event is oldest (windows are never empty).
      const auto victim = std::min_element(
          events_.begin(), events_.end(),
          [](const auto& a, const auto& b) { return a.second.latest() < b.second.latest(); });
      events_.erase(victim);
    }
    it = events_.emplace(std::string(address), EventWindow{}).first;
  }
  it->second.Add(now, events_max_, window_);
}

Status AddressThrottle::Check(std::string_view address) {
  const Instant now = clock_.Now();
  std::lock_guard lock(mu_);
  return CheckLocked(address, now);
}

void AddressThrottle::RecordFailure(std::string_view address) {
  const Instant now = clock_.Now();
  std::lock_guard lock(mu_);
  RecordLocked(address, now);
}

Status AddressThrottle::Admit(std::string_view address) {
  const Instant now = clock_.Now();
  std::lock_guard lock(mu_);
  TELOS_RETURN_IF_ERROR(CheckLocked(address, now));
  RecordLocked(address, now);
  return Status::Ok();
}

RateWindow::RateWindow(const Clock& clock, size_t events_max, Duration window, std::string refusal)
    : clock_(clock), events_max_(events_max), window_(window), refusal_(std::move(refusal)) {
  RELEASE_ASSERT(events_max_ >= 1, "RateWindow needs events_max >= 1");
}

Status RateWindow::CheckLocked(Instant now) {
  if (!events_.Full(now, events_max_, window_)) return Status::Ok();
  return Status::ResourceExhausted(refusal_ + "; " + TryAgainIn(events_.WaitAt(now, window_)));
}

Status RateWindow::Check() {
  const Instant now = clock_.Now();
  std::lock_guard lock(mu_);
  return CheckLocked(now);
}

Status RateWindow::Admit() {
  const Instant now = clock_.Now();
  std::lock_guard lock(mu_);
  TELOS_RETURN_IF_ERROR(CheckLocked(now));
  events_.Add(now, events_max_, window_);
  return Status::Ok();
}

}  // namespace telos::account
