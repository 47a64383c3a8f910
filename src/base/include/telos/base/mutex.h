// Mutex, MutexLock and CondVar: std::mutex and friends with Clang's thread-safety annotations
// (telos/base/thread_annotations.h), so that the members a lock guards and the functions that
// need it are checked at compile time. libstdc++'s own types carry no annotations, which makes
// every GUARDED_BY on them a comment the compiler cannot read.
//
//   mutable Mutex mu_;
//   int count_ GUARDED_BY(mu_) = 0;
//   void Bump() EXCLUDES(mu_) { MutexLock lock(mu_); ++count_; }
//   void BumpLocked() REQUIRES(mu_) { ++count_; }
//
// Code the analysis cannot follow — a lambda run by a helper that already holds the lock — says
// so with `mu_.AssertHeld()`, which in debug builds also checks that this thread is the holder.
//
// Lock order. ACQUIRED_BEFORE/ACQUIRED_AFTER let clang check an order where two locks nest in
// one function (or under a REQUIRES), but not a lock taken inside a callee, least of all behind
// a virtual call into another module. So a Mutex may also carry a rank (lock_rank below, the
// one list of them): debug builds then stop with an assertion when a thread takes a ranked
// mutex while it holds one of the same or a higher rank, whichever calls led there. Every test
// run in the dev preset checks the order that way across calls. Unranked mutexes (rank 0) are
// not checked.
//
// Thread safety: a Mutex is, of course, for use from any thread. Not recursive: taking it again
// on the thread that holds it deadlocks (debug builds stop with an assertion instead).
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "telos/base/assert.h"
#include "telos/base/thread_annotations.h"

namespace telos {

// Every ranked mutex, in the order they may nest: a thread holding one may take only those
// below it in this list. The gate's order is explained in telos/gate/gate.h.
namespace lock_rank {
inline constexpr int kUnranked = 0;
inline constexpr int kGateSession = 1;  // a gate session's login dialogue
inline constexpr int kGateRoster = 2;   // the gate's bindings, sessions and claims
inline constexpr int kGateBinding = 3;  // one character's binding to its session
inline constexpr int kWorldLink = 4;    // FleetWorldLink's session table
inline constexpr int kShardStream = 5;  // one Play stream's write queue
inline constexpr int kMax = 5;
}  // namespace lock_rank

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  // REQUIRES: 0 <= rank <= lock_rank::kMax.
  explicit Mutex(int rank) : rank_(rank) {
    RELEASE_ASSERT(rank >= 0 && rank <= lock_rank::kMax, "a lock rank outside lock_rank");
  }
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() {
    ASSERT(!HeldByMe(), "a telos::Mutex taken again by the thread that holds it");
    ASSERT(!HoldsRankAtOrAbove(rank_), "a telos::Mutex taken out of lock order (lock_rank)");
    mu_.lock();
    MarkHeld();
  }
  void Unlock() RELEASE() {
    ASSERT(HeldByMe(), "a telos::Mutex released by a thread that does not hold it");
    MarkFree();
    mu_.unlock();
  }
  // Never waits, so it cannot deadlock whatever else is held: the order is not checked.
  [[nodiscard]] bool TryLock() TRY_ACQUIRE(true) {
    if (!mu_.try_lock()) return false;
    MarkHeld();
    return true;
  }
  // Tells the analysis this thread holds the mutex; checked in debug builds.
  void AssertHeld() const ASSERT_CAPABILITY(this) {
    ASSERT(HeldByMe(), "a telos::Mutex assumed held by a thread that does not hold it");
  }

 private:
  friend class CondVar;

#ifdef NDEBUG
  void MarkHolder(bool) {}
  void MarkHeld() {}
  void MarkFree() {}
  bool HeldByMe() const {
    return true;
  }
  static bool HoldsRankAtOrAbove(int) {
    return false;
  }
#else
  // How many mutexes of each rank this thread holds (a CondVar wait keeps counting its mutex:
  // the thread takes nothing else until it holds it again).
  static std::array<uint32_t, lock_rank::kMax + 1>& HeldRanks() {
    thread_local std::array<uint32_t, lock_rank::kMax + 1> held{};
    return held;
  }
  static bool HoldsRankAtOrAbove(int rank) {
    if (rank == lock_rank::kUnranked) return false;
    const auto& held = HeldRanks();
    for (int r = rank; r <= lock_rank::kMax; ++r) {
      if (held[static_cast<size_t>(r)] != 0) return true;
    }
    return false;
  }
  void MarkHolder(bool held) {
    holder_.store(held ? std::this_thread::get_id() : std::thread::id(), std::memory_order_relaxed);
  }
  void MarkHeld() {
    MarkHolder(true);
    if (rank_ != lock_rank::kUnranked) ++HeldRanks()[static_cast<size_t>(rank_)];
  }
  void MarkFree() {
    if (rank_ != lock_rank::kUnranked) --HeldRanks()[static_cast<size_t>(rank_)];
    MarkHolder(false);
  }
  bool HeldByMe() const {
    return holder_.load(std::memory_order_relaxed) == std::this_thread::get_id();
  }
  // Written only by the holder, so a thread reading its own id here really holds the mutex.
  std::atomic<std::thread::id> holder_;
#endif
  const int rank_ = lock_rank::kUnranked;
  std::mutex mu_;
};

// Holds a Mutex for a scope. Unlock() lets go early (before a callback that must run unlocked);
// the destructor then does nothing.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~MutexLock() RELEASE() {
    if (locked_) mu_.Unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() RELEASE() {
    locked_ = false;
    mu_.Unlock();
  }

 private:
  Mutex& mu_;
  bool locked_ = true;
};

// A condition variable over a telos::Mutex. Waits are written as loops in the caller, where the
// analysis sees the lock held while the condition is read:
//   while (pending_ > 0) done_.Wait(mu_);
class CondVar {
 public:
  // Releases `mu` until notified (or spuriously woken), then holds it again.
  void Wait(Mutex& mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock = Adopt(mu);
    cv_.wait(lock);
    Readopt(mu, lock);
  }
  // As Wait, but gives up at `deadline`: false if it returned because the deadline passed.
  template <typename TimePoint>
  bool WaitUntil(Mutex& mu, const TimePoint& deadline) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock = Adopt(mu);
    const bool notified = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    Readopt(mu, lock);
    return notified;
  }
  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

 private:
  // The wait releases the mutex and takes it again; its rank stays counted meanwhile.
  static std::unique_lock<std::mutex> Adopt(Mutex& mu) {
    mu.AssertHeld();
    mu.MarkHolder(false);
    return std::unique_lock<std::mutex>(mu.mu_, std::adopt_lock);
  }
  static void Readopt(Mutex& mu, std::unique_lock<std::mutex>& lock) {
    lock.release();  // the caller's MutexLock owns it again
    mu.MarkHolder(true);
  }

  std::condition_variable cv_;
};

}  // namespace telos
