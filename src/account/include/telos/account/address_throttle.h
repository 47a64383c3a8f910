// AddressThrottle: slows password guessing from one network address.
//
// Each failed login from an address is remembered for `window`; once `failures_max` of them
// are inside the window, further attempts from that address are refused until the oldest
// ages out. Memory is bounded: at most limits::kThrottledAddressesMax addresses are tracked,
// and when full the one with the oldest activity is forgotten first.
//
// Thread safety: every method may be called from any thread (one small mutex).
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

class AddressThrottle {
 public:
  AddressThrottle(const Clock& clock, size_t failures_max, Duration window);

  // OK, or ResourceExhausted with the wait in the message.
  Status Check(std::string_view address);
  void RecordFailure(std::string_view address);

 private:
  void Prune(std::deque<Instant>& failures, Instant now) const;

  const Clock& clock_;
  const size_t failures_max_;
  const Duration window_;
  std::mutex mu_;
  std::map<std::string, std::deque<Instant>, std::less<>> failures_;  // guarded by mu_
};

}  // namespace telos::account
