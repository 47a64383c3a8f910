// Clock: the only source of time for game and distributed logic.
//
// Two readings: Now() is monotonic (timeouts, heartbeats, leases judged locally); WallNow() is
// calendar time (logs, timestamps shown to people). Production wires SystemClock once in main;
// tests and simulations use ManualClock and advance it by hand, so a run is reproducible.
//
// Thread safety: every method of both implementations may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>

namespace telos {

using Duration = std::chrono::nanoseconds;
using Millis = std::chrono::milliseconds;
// A point on the monotonic time line. Its epoch is arbitrary: compare and subtract only.
using Instant = std::chrono::steady_clock::time_point;
using WallTime = std::chrono::system_clock::time_point;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Instant Now() const = 0;
  virtual WallTime WallNow() const = 0;
};

class SystemClock final : public Clock {
 public:
  Instant Now() const override { return std::chrono::steady_clock::now(); }
  WallTime WallNow() const override { return std::chrono::system_clock::now(); }
};

// Time moves only when Advance() or Set() is called. Starts at a fixed, non-zero instant so
// that "zero" is never mistaken for "unset".
class ManualClock final : public Clock {
 public:
  ManualClock() = default;
  explicit ManualClock(Duration start) : now_ns_(start.count()) {}

  Instant Now() const override { return Instant(Duration(now_ns_.load())); }
  WallTime WallNow() const override {
    return WallTime(std::chrono::duration_cast<WallTime::duration>(Duration(now_ns_.load())) +
                    kWallOffset);
  }

  // REQUIRES: d >= 0. Time never runs backwards.
  void Advance(Duration d);

 private:
  // 2026-01-01T00:00:00Z, so wall readings look like real dates in test output.
  static constexpr std::chrono::seconds kWallOffset{1767225600};
  std::atomic<Duration::rep> now_ns_{std::chrono::hours(1) / Duration(1)};
};

// Milliseconds between two instants (b - a), rounded down.
inline int64_t ElapsedMs(Instant a, Instant b) {
  return std::chrono::duration_cast<Millis>(b - a).count();
}

}  // namespace telos
