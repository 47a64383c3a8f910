#include <gtest/gtest.h>

#include <set>

#include "telos/base/clock.h"
#include "telos/base/random.h"

namespace telos {
namespace {

TEST(ManualClockTest, MovesOnlyWhenAdvanced) {
  ManualClock clock;
  const Instant a = clock.Now();
  EXPECT_EQ(clock.Now(), a);
  clock.Advance(Millis(250));
  EXPECT_EQ(ElapsedMs(a, clock.Now()), 250);
  EXPECT_EQ(clock.WallNow() - std::chrono::milliseconds(250),
            WallTime(std::chrono::duration_cast<WallTime::duration>(a.time_since_epoch())) +
                std::chrono::seconds(1767225600));
}

TEST(ManualClockDeathTest, RefusesToRunBackwards) {
  ManualClock clock;
  EXPECT_DEATH(clock.Advance(Millis(-1)), "never runs backwards");
}

TEST(RandomTest, SameSeedSameSequence) {
  Random a(1234), b(1234), c(4321);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const int64_t x = a.Uniform(1, 1000);
    EXPECT_EQ(x, b.Uniform(1, 1000));
    differs |= x != c.Uniform(1, 1000);
  }
  EXPECT_TRUE(differs);
}

TEST(RandomTest, UniformStaysInRangeAndCoversIt) {
  Random r(7);
  std::set<int64_t> seen;
  for (int i = 0; i < 2000; ++i) {
    const int64_t x = r.Uniform(-3, 3);
    ASSERT_GE(x, -3);
    ASSERT_LE(x, 3);
    seen.insert(x);
  }
  EXPECT_EQ(seen.size(), 7u);
}

TEST(RandomTest, ChanceHonoursItsBounds) {
  Random r(9);
  int hits = 0;
  for (int i = 0; i < 1000; ++i) {
    EXPECT_FALSE(r.Chance(0.0));
    EXPECT_TRUE(r.Chance(1.0));
    hits += r.Chance(0.5) ? 1 : 0;
  }
  EXPECT_GT(hits, 400);
  EXPECT_LT(hits, 600);
}

}  // namespace
}  // namespace telos
