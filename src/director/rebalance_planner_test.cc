// PlanRebalance case by case: which move it picks and why, and every rule that stops a move.
#include "telos/director/rebalance_planner.h"

#include <algorithm>
#include <string>

#include <gtest/gtest.h>

namespace telos::director {
namespace {

constexpr int64_t kMinuteMs = 60'000;

RebalanceConfig Config(int64_t margin = 10, int64_t in_flight_max = 4) {
  RebalanceConfig config;
  config.margin_players = margin;
  config.moves_in_flight_max = in_flight_max;
  return config;
}

RebalancePlan Plan(const RebalanceInput& input, const RebalanceConfig& config = Config()) {
  Result<RebalancePlan> plan = PlanRebalance(input, config);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return plan.ok() ? std::move(plan).value() : RebalancePlan{};
}

// Shard a holds 100 + 40 + 10 players, b holds 20, c is an empty standby.
RebalanceInput Skewed() {
  RebalanceInput input;
  input.now_ms = 60 * kMinuteMs;
  input.shards = {{"a", false}, {"b", false}, {"c", false}};
  input.zones = {{"town", "a", 100}, {"forest", "a", 40}, {"cave", "a", 10}, {"keep", "b", 20}};
  return input;
}

TEST(RebalancePlannerTest, MovesTheZoneThatCutsTheGapMostFromTheFullestToTheEmptiest) {
  const RebalancePlan plan = Plan(Skewed(), Config(10, 1));
  ASSERT_EQ(plan.moves.size(), 1u);
  const PlannedMove& move = plan.moves[0];
  // Gap a-c is 150: town (100) leaves them 50 apart (cut 100); forest (40) leaves 70 (cut 80).
  EXPECT_EQ(move.zones, std::vector<std::string>{"town"});
  EXPECT_EQ(move.from, "a");
  EXPECT_EQ(move.to, "c");
  EXPECT_EQ(move.players, 100);
  const MoveExplanation& why = move.why;
  EXPECT_EQ(why.source_players_before, 150);
  EXPECT_EQ(why.source_players_after, 50);
  EXPECT_EQ(why.target_players_before, 0);
  EXPECT_EQ(why.target_players_after, 100);
  EXPECT_EQ(why.gap_before, 150);
  EXPECT_EQ(why.gap_after, 50);
  EXPECT_EQ(why.cut, 100);
  EXPECT_EQ(why.spread_before, 150);
  EXPECT_EQ(why.spread_after, 80);  // c 100, b 20
  EXPECT_EQ(why.source_reason, SourceReason::kFullest);
  EXPECT_EQ(why.units_considered, 3);
  EXPECT_EQ(why.units_locked, 0);
  EXPECT_EQ(why.target_reason, TargetReason::kLeastLoaded);
  EXPECT_EQ(plan.stop, PlanStop::kInFlightFull);
  EXPECT_NE(move.text.find("move zone town, 100 players, from a (150 -> 50) to c (0 -> 100)"),
            std::string::npos)
      << move.text;
  EXPECT_NE(move.text.find("cut 100 > margin 10"), std::string::npos) << move.text;
}

TEST(RebalancePlannerTest, PlansSeveralMovesAndPassesAFullShardWithNothingToMove) {
  const RebalancePlan plan = Plan(Skewed());
  // town a -> c leaves a 50, b 20, c 100. c is now fullest but its only zone is the one just
  // planned, so the next move comes from a: cave (10) to b cuts the a-b gap 30 -> 10. Then the
  // a-b gap (40 - 30) is too small for forest, and the plan stops with a spread of 70.
  ASSERT_EQ(plan.moves.size(), 2u);
  EXPECT_EQ(plan.moves[0].zones, std::vector<std::string>{"town"});
  EXPECT_EQ(plan.moves[1].zones, std::vector<std::string>{"cave"});
  EXPECT_EQ(plan.moves[1].from, "a");
  EXPECT_EQ(plan.moves[1].to, "b");
  EXPECT_EQ(plan.moves[1].why.source_reason, SourceReason::kFullestWithMovableUnit);
  EXPECT_EQ(plan.moves[1].why.fuller_shards_passed, 1);
  EXPECT_EQ(plan.moves[1].why.cut, 20);
  EXPECT_EQ(plan.stop, PlanStop::kNoMoveCutsEnough);
  EXPECT_EQ(plan.spread_before, 150);
  EXPECT_EQ(plan.spread_after, 70);
  EXPECT_EQ(plan.loads_before,
            (std::vector<ShardLoadView>{{"a", false, 150}, {"b", false, 20}, {"c", false, 0}}));
  EXPECT_EQ(plan.loads_after,
            (std::vector<ShardLoadView>{{"a", false, 40}, {"b", false, 30}, {"c", false, 100}}));
}

TEST(RebalancePlannerTest, NoMoveUnlessItCutsTheGapByMoreThanTheMargin) {
  RebalanceInput input;
  input.shards = {{"a", false}, {"b", false}};
  input.zones = {{"z1", "a", 30}, {"z2", "a", 30}, {"z3", "b", 40}};
  // Gap 20: moving a 30-player zone leaves it 40 the other way; nothing cuts.
  RebalancePlan plan = Plan(input, Config(0));
  EXPECT_TRUE(plan.moves.empty());
  EXPECT_EQ(plan.stop, PlanStop::kNoMoveCutsEnough);

  // Gap 60 with a margin of 60: the best cut (60, a 30-player zone) does not exceed it.
  input.zones = {{"z1", "a", 30}, {"z2", "a", 30}};
  plan = Plan(input, Config(60));
  EXPECT_TRUE(plan.moves.empty());
  EXPECT_EQ(plan.stop, PlanStop::kBalanced);
  plan = Plan(input, Config(59));
  EXPECT_EQ(plan.moves.size(), 1u);

  // A zone of margin/2 players never moves on its own: its cut is at most twice its weight.
  input.zones = {{"z1", "a", 5}, {"z2", "a", 5}, {"z3", "a", 5}, {"z4", "a", 5}};
  plan = Plan(input, Config(10));
  EXPECT_TRUE(plan.moves.empty());
  EXPECT_EQ(plan.stop, PlanStop::kNoMoveCutsEnough);
}

TEST(RebalancePlannerTest, NeverTargetsADrainingShard) {
  RebalanceInput input = Skewed();
  input.shards[2].draining = true;  // c, the empty one, is rolling
  const RebalancePlan plan = Plan(input, Config(10, 1));
  ASSERT_EQ(plan.moves.size(), 1u);
  EXPECT_EQ(plan.moves[0].to, "b");
  EXPECT_EQ(plan.moves[0].why.draining_shards_skipped, 1);
  EXPECT_EQ(plan.spread_before, 130);  // a 150 - b 20; c is left out
  EXPECT_NE(plan.moves[0].text.find("1 draining skipped"), std::string::npos);
}

TEST(RebalancePlannerTest, LeavesADrainingShardsZonesToTheDrain) {
  RebalanceInput input = Skewed();
  input.shards[0].draining = true;  // a, the full one
  const RebalancePlan plan = Plan(input);
  // b (20) and c (0): the only movable zone, keep, would just swap them.
  EXPECT_TRUE(plan.moves.empty());
  EXPECT_EQ(plan.stop, PlanStop::kNoMoveCutsEnough);

  input.shards = {{"a", true}, {"b", false}};
  EXPECT_EQ(Plan(input).stop, PlanStop::kTooFewShards);
}

TEST(RebalancePlannerTest, StopsAtTheInFlightBoundAndCountsAGroupsZonesAsOneMove) {
  RebalanceInput input = Skewed();
  input.colocation_groups = {{"dungeon", {"d1", "d2"}}};
  input.zones.push_back({"d1", "a", 5});
  input.zones.push_back({"d2", "a", 5});
  input.in_flight = {{"d1", "a", "b"}, {"d2", "a", "b"}};
  RebalancePlan plan = Plan(input, Config(10, 2));
  EXPECT_EQ(plan.moves_in_flight, 1);
  EXPECT_EQ(plan.zones_in_flight, 2);
  ASSERT_EQ(plan.moves.size(), 1u);
  EXPECT_EQ(plan.stop, PlanStop::kInFlightFull);

  plan = Plan(input, Config(10, 1));
  EXPECT_TRUE(plan.moves.empty());
  EXPECT_EQ(plan.stop, PlanStop::kInFlightFull);
}

// Group names are free text: two groups may share one, or share a zone's id. Their in-flight
// moves are still separate moves, each counted against the bound.
TEST(RebalancePlannerTest, InFlightMovesOfGroupsAreCountedApartWhateverTheirNames) {
  RebalanceInput input = Skewed();
  input.zones.push_back({"d1", "a", 5});
  input.zones.push_back({"d2", "a", 5});
  input.zones.push_back({"e1", "a", 5});
  input.zones.push_back({"e2", "a", 5});
  input.colocation_groups = {{"dungeon", {"d1", "d2"}}, {"dungeon", {"e1", "e2"}}};
  input.in_flight = {{"d1", "a", "b"}, {"d2", "a", "b"}, {"e1", "a", "b"}, {"e2", "a", "b"}};
  RebalancePlan plan = Plan(input, Config(10, 2));
  EXPECT_EQ(plan.moves_in_flight, 2);
  EXPECT_TRUE(plan.moves.empty());
  EXPECT_EQ(plan.stop, PlanStop::kInFlightFull);

  // A group named like a zone outside it.
  input.colocation_groups = {{"cave", {"d1", "d2"}}};
  input.in_flight = {{"d1", "a", "b"}, {"d2", "a", "b"}, {"cave", "a", "b"}};
  plan = Plan(input, Config(10, 2));
  EXPECT_EQ(plan.moves_in_flight, 2);
  EXPECT_TRUE(plan.moves.empty());
  EXPECT_EQ(plan.stop, PlanStop::kInFlightFull);
}

TEST(RebalancePlannerTest, CountsInFlightPlayersOnTheirTarget) {
  RebalanceInput input = Skewed();
  input.in_flight = {{"town", "a", "c"}};
  const RebalancePlan plan = Plan(input, Config(10, 2));
  EXPECT_EQ(plan.loads_before,
            (std::vector<ShardLoadView>{{"a", false, 50}, {"b", false, 20}, {"c", false, 100}}));
  // c is full with the arriving town, which is locked in flight, so the next move is cave from
  // a to b, not another one onto c.
  ASSERT_EQ(plan.moves.size(), 1u);
  EXPECT_EQ(plan.moves[0].zones, std::vector<std::string>{"cave"});
  EXPECT_EQ(plan.moves[0].from, "a");
  EXPECT_EQ(plan.moves[0].to, "b");
}

TEST(RebalancePlannerTest, AZoneCoolsDownAfterItMoved) {
  RebalanceInput input;
  input.now_ms = 60 * kMinuteMs;
  input.shards = {{"a", false}, {"b", false}};
  input.zones = {{"town", "a", 100}};
  input.last_moved = {{"town", input.now_ms - 5 * kMinuteMs + 1}};
  RebalancePlan plan = Plan(input);
  EXPECT_TRUE(plan.moves.empty());
  EXPECT_EQ(plan.zones_cooling_down, 1);
  EXPECT_EQ(plan.stop, PlanStop::kNoMoveCutsEnough);

  input.last_moved = {{"town", input.now_ms - 5 * kMinuteMs}};
  plan = Plan(input, Config(10));
  // 100 players alone: moving them only swaps the shards (cut 0).
  EXPECT_TRUE(plan.moves.empty());
  input.zones.push_back({"inn", "a", 60});
  plan = Plan(input);
  ASSERT_EQ(plan.moves.size(), 1u);
  EXPECT_EQ(plan.moves[0].zones, std::vector<std::string>{"inn"});  // gap 160 -> 40
  EXPECT_EQ(plan.zones_cooling_down, 0);
}

TEST(RebalancePlannerTest, AColocationGroupMovesAsOneUnit) {
  RebalanceInput input;
  input.shards = {{"a", false}, {"b", false}};
  input.zones = {{"crypt1", "a", 30}, {"crypt2", "a", 20}, {"town", "a", 80}, {"inn", "a", 8}};
  input.colocation_groups = {{"crypt", {"crypt2", "crypt1"}}};
  const RebalancePlan plan = Plan(input, Config(10, 1));
  // Gap 138: town (80) cuts it to 22, the group (50 together) only to 38: town goes.
  ASSERT_EQ(plan.moves.size(), 1u);
  EXPECT_EQ(plan.moves[0].zones, std::vector<std::string>{"town"});

  // Gap 98 with a 40-player town: the group cuts it to 2, town to 18.
  input.zones[2].players = 40;
  const RebalancePlan second = Plan(input, Config(10, 1));
  ASSERT_EQ(second.moves.size(), 1u);
  EXPECT_EQ(second.moves[0].zones, (std::vector<std::string>{"crypt1", "crypt2"}));
  EXPECT_EQ(second.moves[0].players, 50);
  EXPECT_EQ(second.moves[0].why.colocation_group, "crypt");
  EXPECT_NE(second.moves[0].text.find("move zones crypt1, crypt2 (colocation group crypt)"),
            std::string::npos)
      << second.moves[0].text;

  // The group alone on a (50 players): moving it whole only swaps the shards, and it is never
  // split, although crypt1 alone would cut the gap 50 -> 10.
  RebalanceInput alone = input;
  alone.zones = {{"crypt1", "a", 30}, {"crypt2", "a", 20}};
  const RebalancePlan kept = Plan(alone, Config(10, 1));
  EXPECT_TRUE(kept.moves.empty());
  EXPECT_EQ(kept.stop, PlanStop::kNoMoveCutsEnough);

  // One zone of the group cooling down holds the whole group.
  input.now_ms = kMinuteMs;
  input.last_moved = {{"crypt2", 0}};
  const RebalancePlan held = Plan(input, Config(10, 1));
  for (const PlannedMove& move : held.moves) {
    EXPECT_EQ(std::count(move.zones.begin(), move.zones.end(), "crypt1"), 0);
  }
}

TEST(RebalancePlannerTest, TheSameInputInAnyOrderGivesTheSamePlan) {
  RebalanceInput input = Skewed();
  input.shards.push_back({"d", false});
  input.zones.push_back({"road", "d", 45});
  input.zones.push_back({"mine", "b", 33});
  input.colocation_groups = {{"", {"mine", "keep"}}};
  const RebalancePlan first = Plan(input);
  std::reverse(input.shards.begin(), input.shards.end());
  std::reverse(input.zones.begin(), input.zones.end());
  std::reverse(input.colocation_groups[0].zones.begin(), input.colocation_groups[0].zones.end());
  const RebalancePlan second = Plan(input);
  ASSERT_EQ(first.moves.size(), second.moves.size());
  for (size_t i = 0; i < first.moves.size(); ++i) {
    EXPECT_EQ(first.moves[i].text, second.moves[i].text);
  }
  EXPECT_EQ(first.loads_after, second.loads_after);
  EXPECT_EQ(first.Describe(), second.Describe());
}

TEST(RebalancePlannerTest, ZonesWithoutALiveOwnerAreLeftToClaimFromPool) {
  RebalanceInput input = Skewed();
  input.zones.push_back({"orphan", "gone", 500});
  const RebalancePlan plan = Plan(input);
  EXPECT_EQ(plan.zones_unplaced, 1);
  EXPECT_EQ(plan.spread_before, 150);
  for (const PlannedMove& move : plan.moves) EXPECT_NE(move.zones.front(), "orphan");
  EXPECT_NE(plan.Describe().find("1 without a live owner"), std::string::npos);
}

// The source of an in-flight move died: its zone has no live owner, so it is not on its way to
// the target (the drain that would have taken it there will not run) and its players are not
// counted there; it waits for claim-from-pool like any other zone without a live owner.
TEST(RebalancePlannerTest, AZoneInFlightFromADeadShardIsLeftToClaimFromPool) {
  RebalanceInput input = Skewed();
  input.zones.push_back({"orphan", "gone", 500});
  input.in_flight = {{"orphan", "gone", "c"}};
  const RebalancePlan plan = Plan(input, Config(10, 2));
  EXPECT_EQ(plan.zones_unplaced, 1);
  EXPECT_EQ(plan.moves_in_flight, 1);  // its directive is still live
  EXPECT_EQ(plan.loads_before,
            (std::vector<ShardLoadView>{{"a", false, 150}, {"b", false, 20}, {"c", false, 0}}));
  EXPECT_EQ(plan.spread_before, 150);
  // c is the emptiest shard, so the next move goes there.
  ASSERT_FALSE(plan.moves.empty());
  EXPECT_EQ(plan.moves[0].to, "c");
}

TEST(RebalancePlannerTest, RefusesInputThatBreaksItsRules) {
  RebalanceInput input = Skewed();
  input.zones.push_back({"town", "b", 1});
  EXPECT_EQ(PlanRebalance(input, Config()).status().code(), StatusCode::kInvalidArgument);

  input = Skewed();
  input.colocation_groups = {{"x", {"town", "cave"}}, {"y", {"cave"}}};
  EXPECT_EQ(PlanRebalance(input, Config()).status().code(), StatusCode::kInvalidArgument);

  input = Skewed();
  input.shards.push_back({"a", true});
  EXPECT_EQ(PlanRebalance(input, Config()).status().code(), StatusCode::kInvalidArgument);

  input = Skewed();
  input.zones[0].players = -1;
  EXPECT_EQ(PlanRebalance(input, Config()).status().code(), StatusCode::kInvalidArgument);

  EXPECT_FALSE(ValidateRebalanceConfig(Config(-1)).ok());
  EXPECT_FALSE(ValidateRebalanceConfig(Config(10, 0)).ok());
  EXPECT_FALSE(ValidateRebalanceConfig(Config(10, limits::kDirectorMovesInFlightMax + 1)).ok());
  EXPECT_TRUE(ValidateRebalanceConfig(RebalanceConfig{}).ok());
}

}  // namespace
}  // namespace telos::director
