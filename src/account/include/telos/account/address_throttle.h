// Sliding-window rate limits for the login screens: AddressThrottle counts events per network
// address, RateWindow counts them for everyone at once.
//
// AddressThrottle slows password guessing from one address (failed logins and unknown-account
// answers alike) and, in a second instance, account creation from one address. Each event is
// remembered for `window`; once `events_max` of them are inside the window, the address is
// refused until the oldest ages out. Memory is bounded: at most limits::kThrottledAddressesMax
// addresses are tracked, and when full the one with the oldest activity is forgotten first.
//
// RateWindow is the same window without the address: the server-wide bound on new accounts.
//
// Check() only looks; Admit() looks and records in one step, so concurrent callers cannot all
// pass a check before any of them is counted. Refusals are ResourceExhausted with a sentence a
// player can act on: `refusal` followed by "; try again in N seconds." (TryAgainIn).
//
// Time comes from the Clock (ManualClock in tests). Thread safety: every method may be called
// from any thread (one small mutex per instance).
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "telos/base/clock.h"
#include "telos/base/status.h"

namespace telos::account {

// "try again in 58 seconds." below two minutes, "try again in 12 minutes." above (rounded up),
// so an hour-long window does not read as thousands of seconds.
std::string TryAgainIn(Duration wait);

// The events of one key inside a window; at most `events_max` are kept, since older ones cannot
// change an answer. Not thread-safe: its owner locks.
class EventWindow {
 public:
  // True when `events_max` events are inside the window at `now`.
  bool Full(Instant now, size_t events_max, Duration window);
  // How long until the oldest event ages out. REQUIRES: !empty().
  Duration WaitAt(Instant now, Duration window) const;
  void Add(Instant now, size_t events_max, Duration window);
  bool empty() const { return events_.empty(); }
  Instant latest() const { return events_.back(); }

 private:
  void Prune(Instant now, Duration window);
  std::deque<Instant> events_;
};

class AddressThrottle {
 public:
  AddressThrottle(const Clock& clock, size_t failures_max, Duration window,
                  std::string refusal = "Too many failed logins from your address");

  // OK, or ResourceExhausted with the wait in the message.
  Status Check(std::string_view address);
  // Records an event (a failed login, an unknown account, an account created).
  void RecordFailure(std::string_view address);
  // Check() and, when OK, RecordFailure() under one lock.
  Status Admit(std::string_view address);

 private:
  Status CheckLocked(std::string_view address, Instant now);
  void RecordLocked(std::string_view address, Instant now);

  const Clock& clock_;
  const size_t events_max_;
  const Duration window_;
  const std::string refusal_;
  std::mutex mu_;
  std::map<std::string, EventWindow, std::less<>> events_;  // guarded by mu_; never empty windows
};

class RateWindow {
 public:
  RateWindow(const Clock& clock, size_t events_max, Duration window, std::string refusal);

  Status Check();
  // Check() and, when OK, records one event, under one lock.
  Status Admit();

 private:
  Status CheckLocked(Instant now);

  const Clock& clock_;
  const size_t events_max_;
  const Duration window_;
  const std::string refusal_;
  std::mutex mu_;
  EventWindow events_;  // guarded by mu_
};

}  // namespace telos::account
