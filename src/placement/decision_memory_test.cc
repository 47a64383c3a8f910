#include "telos/placement/decision_memory.h"

#include <gtest/gtest.h>

#include "telos/base/random.h"

namespace telos::placement {
namespace {

Explanation Decided(PlayerId player, Outcome outcome, std::string instance = "inst-a") {
  Explanation e;
  e.player = player;
  e.map = "arena";
  e.outcome = outcome;
  if (outcome == Outcome::kPlaced) e.instance_id = std::move(instance);
  return e;
}

TEST(DecisionMemoryTest, NothingHeldIsNotTheSameAsRefused) {
  ManualClock clock;
  DecisionMemory memory(clock, 4);
  EXPECT_EQ(memory.Recall(5).kind, RecallKind::kNothingHeld);
  EXPECT_FALSE(memory.Recall(5).held());

  memory.Record(Decided(5, Outcome::kRefused));
  memory.Record(Decided(6, Outcome::kPlaced));
  const Recollection refused = memory.Recall(5);
  EXPECT_TRUE(refused.held());
  EXPECT_EQ(refused.kind, RecallKind::kRefused);
  EXPECT_EQ(memory.Recall(6).kind, RecallKind::kPlaced);
  EXPECT_EQ(memory.Recall(6).explanation.instance_id, "inst-a");
  EXPECT_EQ(memory.Recall(7).kind, RecallKind::kNothingHeld);
  EXPECT_EQ(RecallKindName(RecallKind::kNothingHeld), "nothing_held");
}

TEST(DecisionMemoryTest, KeepsOnlyTheLastDecisionPerPlayerStampedByTheClock) {
  ManualClock clock;
  DecisionMemory memory(clock, 4);
  memory.Record(Decided(5, Outcome::kRefused));
  const WallTime first = memory.Recall(5).decided_at;
  clock.Advance(std::chrono::seconds(30));
  memory.Record(Decided(5, Outcome::kPlaced, "inst-b"));
  EXPECT_EQ(memory.size(), 1u);
  const Recollection latest = memory.Recall(5);
  EXPECT_EQ(latest.kind, RecallKind::kPlaced);
  EXPECT_EQ(latest.explanation.instance_id, "inst-b");
  EXPECT_EQ(latest.decided_at - first, std::chrono::seconds(30));
}

TEST(DecisionMemoryTest, ForgetsTheOldestFirstWhenFull) {
  ManualClock clock;
  DecisionMemory memory(clock, 3);
  for (PlayerId p : {1, 2, 3}) memory.Record(Decided(p, Outcome::kPlaced));
  memory.Record(Decided(1, Outcome::kRefused));  // 1 is now the newest
  memory.Record(Decided(4, Outcome::kPlaced));   // forgets 2
  EXPECT_EQ(memory.size(), 3u);
  EXPECT_EQ(memory.forgotten(), 1u);
  EXPECT_EQ(memory.Recall(2).kind, RecallKind::kNothingHeld);
  EXPECT_EQ(memory.Recall(1).kind, RecallKind::kRefused);
  EXPECT_TRUE(memory.Recall(3).held());
  EXPECT_TRUE(memory.Recall(4).held());
}

TEST(DecisionMemoryTest, StaysWithinItsBoundUnderALongRun) {
  constexpr uint64_t kSeed = 0x5eed'0009;
  constexpr size_t kCapacity = 500;
  constexpr int kDecisions = 40'000;
  constexpr PlayerId kPlayers = 5'000;
  ManualClock clock;
  Random random(kSeed);
  DecisionMemory memory(clock, kCapacity);
  std::vector<PlayerId> recent;
  for (int i = 0; i < kDecisions; ++i) {
    const auto player = static_cast<PlayerId>(random.Uniform(1, kPlayers));
    memory.Record(Decided(player, random.Chance(0.1) ? Outcome::kRefused : Outcome::kPlaced));
    clock.Advance(Millis(10));
    ASSERT_LE(memory.size(), kCapacity) << "seed " << kSeed << " decision " << i;
    if (i >= kDecisions - 50) recent.push_back(player);
  }
  EXPECT_EQ(memory.size(), kCapacity);
  EXPECT_GT(memory.forgotten(), 0u);
  for (PlayerId player : recent) EXPECT_TRUE(memory.Recall(player).held()) << player;
}

}  // namespace
}  // namespace telos::placement
