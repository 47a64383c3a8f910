// telos::Mutex's run-time checks (the compile-time ones are the dev preset's -Wthread-safety):
// the lock order by rank across calls, a lock taken twice, a lock assumed held. They exist in
// debug builds only, so the tests that expect them to fire are skipped under NDEBUG.
#include "telos/base/mutex.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "telos/base/thread_annotations.h"

namespace telos {
namespace {

using std::chrono::milliseconds;

// Two ranked locks of the gate's order, each taken inside its own function, so only the rank
// check (not clang's) sees them nest.
struct Ordered {
  Mutex low{lock_rank::kGateSession};
  Mutex high{lock_rank::kGateBinding};
  int value GUARDED_BY(high) = 0;

  void TakeHigh() EXCLUDES(high) {
    MutexLock lock(high);
    ++value;
  }
  void TakeLow() EXCLUDES(low) { MutexLock lock(low); }
  void LowThenHigh() EXCLUDES(low, high) {
    MutexLock lock(low);
    TakeHigh();
  }
  void HighThenLow() EXCLUDES(low, high) {
    MutexLock lock(high);
    TakeLow();
  }
};

TEST(MutexTest, RankedLocksNestInTheirOrder) {
  Ordered ordered;
  ordered.LowThenHigh();
  MutexLock lock(ordered.high);
  EXPECT_EQ(ordered.value, 1);
}

TEST(MutexTest, ALockTakenAgainstItsRankStopsADebugBuild) {
#ifdef NDEBUG
  GTEST_SKIP() << "the rank check is a debug-build assertion";
#else
  Ordered ordered;
  EXPECT_DEATH(ordered.HighThenLow(), "out of lock order");
#endif
}

TEST(MutexTest, TwoLocksOfOneRankDoNotNest) {
#ifdef NDEBUG
  GTEST_SKIP() << "the rank check is a debug-build assertion";
#else
  Mutex first{lock_rank::kGateSession};
  Mutex second{lock_rank::kGateSession};
  EXPECT_DEATH(
      {
        MutexLock a(first);
        MutexLock b(second);
      },
      "out of lock order");
#endif
}

TEST(MutexTest, UnrankedLocksAreNotOrdered) {
  Mutex ranked{lock_rank::kShardStream};
  Mutex plain;
  MutexLock a(ranked);
  MutexLock b(plain);
}

TEST(MutexTest, ARankIsFreedWhenItsLockIs) {
  Ordered ordered;
  ordered.TakeHigh();  // held and let go: no longer counted
  ordered.LowThenHigh();
  {
    MutexLock lock(ordered.high);
    lock.Unlock();  // let go early
  }
  ordered.LowThenHigh();
  MutexLock lock(ordered.high);
  EXPECT_EQ(ordered.value, 3);
}

TEST(MutexTest, AssertHeldStopsADebugBuildWhenTheLockIsNotHeld) {
#ifdef NDEBUG
  GTEST_SKIP() << "AssertHeld checks in debug builds only";
#else
  Mutex mu;
  EXPECT_DEATH(mu.AssertHeld(), "assumed held");
  MutexLock lock(mu);
  mu.AssertHeld();
#endif
}

#ifndef NDEBUG
// Deliberately wrong, to see the run-time check: clang would refuse it at compile time.
void LockTwice(Mutex& mu) NO_THREAD_SAFETY_ANALYSIS {
  mu.Lock();
  mu.Lock();
}
#endif

TEST(MutexTest, TakingALockTwiceStopsADebugBuild) {
#ifdef NDEBUG
  GTEST_SKIP() << "the re-entry check is a debug-build assertion";
#else
  Mutex mu;
  EXPECT_DEATH(LockTwice(mu), "taken again");
#endif
}

TEST(MutexTest, TryLockFailsWhileAnotherThreadHolds) {
  Mutex mu;
  std::promise<void> held, release;
  std::thread holder([&] {
    MutexLock lock(mu);
    held.set_value();
    release.get_future().wait();
  });
  held.get_future().wait();
  EXPECT_FALSE(mu.TryLock());
  release.set_value();
  holder.join();
  if (mu.TryLock()) {
    mu.Unlock();
  } else {
    ADD_FAILURE() << "TryLock failed on a free mutex";
  }
}

struct Flag {
  Mutex mu{lock_rank::kWorldLink};
  CondVar changed;
  bool set GUARDED_BY(mu) = false;
};

TEST(MutexTest, CondVarWakesAWaiterAndKeepsTheLockAndItsRank) {
  Flag flag;
  std::thread setter([&] {
    MutexLock lock(flag.mu);
    flag.set = true;
    flag.changed.NotifyAll();
  });
  {
    MutexLock lock(flag.mu);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!flag.set && flag.changed.WaitUntil(flag.mu, deadline)) {
    }
    EXPECT_TRUE(flag.set);
    flag.mu.AssertHeld();  // held again after the wait
  }
  setter.join();
  // The wait gave the rank back with the lock: a lower-ranked lock may be taken again.
  Ordered ordered;
  ordered.LowThenHigh();
}

TEST(MutexTest, CondVarWaitUntilReportsTheDeadline) {
  Flag flag;
  MutexLock lock(flag.mu);
  const auto deadline = std::chrono::steady_clock::now() + milliseconds(20);
  bool notified = true;
  while (!flag.set && (notified = flag.changed.WaitUntil(flag.mu, deadline))) {
  }
  EXPECT_FALSE(notified);
  EXPECT_FALSE(flag.set);
  EXPECT_GE(std::chrono::steady_clock::now(), deadline);
}

}  // namespace
}  // namespace telos
