// InputRateLimiter: a token bucket for lines a player sends (private to the net module).
// A session may send `burst` lines at once, then `per_second` lines per second on average.
// Not thread-safe: each session owns one and uses it on its strand.
#pragma once

#include <algorithm>
#include <chrono>

#include "telos/base/clock.h"

namespace telos::net {

class InputRateLimiter {
 public:
  InputRateLimiter(double per_second, double burst, Instant now)
      : per_second_(per_second), burst_(burst), tokens_(burst), last_(now) {}

  // True if a line may pass now (and spends a token).
  bool Take(Instant now) {
    const double elapsed_s = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    tokens_ = std::min(burst_, tokens_ + elapsed_s * per_second_);
    if (tokens_ < 1.0) return false;
    tokens_ -= 1.0;
    return true;
  }
  // True once the bucket has refilled to half: time to tell a throttled player again.
  bool Recovered() const { return tokens_ >= burst_ / 2; }

 private:
  double per_second_;
  double burst_;
  double tokens_;
  Instant last_;
};

}  // namespace telos::net
