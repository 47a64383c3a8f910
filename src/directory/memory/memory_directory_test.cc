// The Directory conformance suite on the in-memory backend, with a manual clock.
#include "telos/directory/memory_directory.h"

#include <chrono>

#include "conformance_test.h"
#include "telos/base/clock.h"

namespace telos::directory::testing {
namespace {

// The shared store is the only "server"; every client is the same instance, and a client's own
// clock has nowhere to go (no method takes a time).
class MemoryBackend {
 public:
  static constexpr int kConcurrencyThreads = 8;
  static constexpr int kConcurrencyRounds = 3'000;

  Status Ready() { return Status::Ok(); }
  Directory* Client() { return &dir_; }
  Directory* NewClient(const Clock* /*local_clock*/) { return &dir_; }
  int64_t ShortTtlMs() const { return 300; }
  int64_t LongTtlMs() const { return 60'000; }

  // Advances the directory's clock in 10 ms steps until pred holds.
  template <typename F>
  bool Eventually(F pred, int64_t within_ms) {
    for (int64_t waited = 0; waited <= within_ms; waited += kStepMs) {
      if (pred()) return true;
      clock_.Advance(Millis(kStepMs));
    }
    return false;
  }

 private:
  static constexpr int64_t kStepMs = 10;
  ManualClock clock_;
  MemoryDirectory dir_{clock_};
};

INSTANTIATE_TYPED_TEST_SUITE_P(Memory, DirectoryConformance, MemoryBackend);

// Expiry on the memory backend is exact: a lease granted for 300 ms is live at 299 ms and gone
// at 300 ms. (The Redis backend is checked for the same rule only loosely, in real time.)
TEST(MemoryDirectory, ExpiryBoundaryIsExact) {
  ManualClock clock;
  MemoryDirectory dir(clock);
  auto a = dir.ClaimZone("z", "A", 300);
  ASSERT_TRUE(a.ok());
  clock.Advance(Millis(299));
  EXPECT_EQ(dir.ClaimZone("z", "B", 300).status().code(), StatusCode::kConflict);
  auto owner = dir.OwnerOfZone("z");
  ASSERT_TRUE(owner.ok() && owner->has_value());
  EXPECT_EQ((*owner)->ttl_ms, 1);
  clock.Advance(Millis(1));
  auto b = dir.ClaimZone("z", "B", 300);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->epoch, 2u);
}

TEST(MemoryDirectory, RenewalAtATtlThirdKeepsTheLeaseAlive) {
  ManualClock clock;
  MemoryDirectory dir(clock);
  const int64_t ttl = kZoneLeaseTtlMsDefault;
  auto a = dir.ClaimZone("z", "A", ttl);
  ASSERT_TRUE(a.ok());
  for (int i = 0; i < 30; ++i) {
    clock.Advance(Millis(RenewIntervalMs(ttl)));
    auto renewed = dir.RenewZone("z", "A", a->epoch, ttl);
    ASSERT_TRUE(renewed.ok()) << i;
    EXPECT_EQ(dir.ClaimZone("z", "B", ttl).status().code(), StatusCode::kConflict);
  }
}

TEST(MemoryDirectory, OccupancyTimeIsTheClocksMilliseconds) {
  ManualClock clock;
  MemoryDirectory dir(clock);
  ASSERT_TRUE(dir.ReportOccupancy("s1", {{"z", 1}}).ok());
  const int64_t at = std::chrono::duration_cast<Millis>(clock.Now().time_since_epoch()).count();
  clock.Advance(Millis(1234));
  auto occ = dir.ListOccupancy();
  ASSERT_TRUE(occ.ok() && occ->size() == 1);
  EXPECT_EQ((*occ)[0].reported_at_ms, at);
  EXPECT_EQ((*occ)[0].age_ms, 1234);
}

}  // namespace
}  // namespace telos::directory::testing
