// The explorer walked over small maps given as adjacency lists.
#include "explorer.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace telos::sim {
namespace {

using Map = std::vector<std::vector<int32_t>>;  // room -> the room each exit leads to

// Walks `steps` steps from room 0 and returns the rooms stood in, in order.
std::vector<int32_t> Walk(const Map& map, int steps, uint64_t seed) {
  Random random(seed);
  Explorer explorer;
  int32_t here = 0;
  std::vector<int32_t> path{here};
  explorer.Arrived(here, map[here].size());
  for (int i = 0; i < steps; ++i) {
    const int exit = explorer.Next(random);
    if (exit < 0) break;
    EXPECT_LT(static_cast<size_t>(exit), map[here].size());
    here = map[here][static_cast<size_t>(exit)];
    path.push_back(here);
    explorer.Arrived(here, map[here].size());
  }
  return path;
}

// Like the lobby: rooms 0-5 are two loops joined at 0, and the one way on is a corridor 0-6-7-8-9
// ending in a dead end.
const Map kLoopsThenCorridor = {
    {1, 3, 6},                  // 0: the hub
    {0, 2},    {1, 0},          // loop 0-1-2
    {0, 4},    {3, 5}, {4, 0},  // loop 0-3-4-5
    {0, 7},    {6, 8}, {7, 9}, {8},
};

TEST(Explorer, LeavesLoopsAndReachesTheDeadEndOfTheCorridor) {
  // Every exit is tried once before any is taken twice, and the way to the nearest untried exit
  // is the shortest known one; 10 rooms and 20 exits take far fewer than 40 steps.
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const auto path = Walk(kLoopsThenCorridor, 40, seed);
    EXPECT_NE(std::find(path.begin(), path.end(), 9), path.end()) << "seed " << seed;
    const std::set<int32_t> seen(path.begin(), path.end());
    EXPECT_EQ(seen.size(), kLoopsThenCorridor.size()) << "seed " << seed;
  }
}

TEST(Explorer, NeverRetakesAnExitWhileTheRoomHasAnUntriedOne) {
  Random random(7);
  Explorer explorer;
  explorer.Arrived(0, 3);
  std::set<int> taken;
  for (int i = 0; i < 3; ++i) {
    const int exit = explorer.Next(random);
    EXPECT_TRUE(taken.insert(exit).second) << "exit " << exit << " taken twice";
    explorer.Arrived(0, 3);  // every exit loops back here
  }
  // All three tried, all leading here: nothing left to explore, so any exit will do.
  const int exit = explorer.Next(random);
  EXPECT_GE(exit, 0);
  EXPECT_LT(exit, 3);
}

TEST(Explorer, HeadsBackByTheKnownWayToTheNearestUntriedExit) {
  // 0 has exits to 1 and 2; 1 is a dead end. After 0 -> 1, the only way on is back to 0.
  const Map map = {{1, 2}, {0}, {0}};
  Random random(1);
  Explorer explorer;
  explorer.Arrived(0, 2);
  int exit = explorer.Next(random);
  const int32_t first = map[0][static_cast<size_t>(exit)];
  explorer.Arrived(first, map[first].size());
  exit = explorer.Next(random);  // the dead end's (or 2's) only exit, back to 0
  EXPECT_EQ(exit, 0);
  explorer.Arrived(0, 2);
  exit = explorer.Next(random);
  EXPECT_EQ(map[0][static_cast<size_t>(exit)], first == 1 ? 2 : 1) << "took the tried exit again";
}

TEST(Explorer, TheWayBackIsKnownWithoutTakingIt) {
  Random random(4);
  Explorer explorer;
  explorer.Arrived(0, 1);
  ASSERT_EQ(explorer.Next(random), 0);
  explorer.Arrived(1, 2, /*back_exit=*/1);  // exit 1 of room 1 is the opposite of the step
  EXPECT_EQ(explorer.LedTo(0, 0), 1);
  EXPECT_EQ(explorer.LedTo(1, 1), 0);
  EXPECT_EQ(explorer.Next(random), 0) << "the only untried exit";
}

TEST(Explorer, AStepThatEndedElsewhereTeachesNothing) {
  Random random(2);
  Explorer learns;
  learns.Arrived(0, 1);
  ASSERT_EQ(learns.Next(random), 0);
  learns.Arrived(4, 2);
  EXPECT_EQ(learns.LedTo(0, 0), 4);
  // The same step, but the bot fled (or died) on the way: exit 0 of room 0 stays untried.
  Explorer flees;
  flees.Arrived(0, 1);
  ASSERT_EQ(flees.Next(random), 0);
  flees.Displaced();
  flees.Arrived(7, 2);
  EXPECT_EQ(flees.LedTo(0, 0), Explorer::kUnknownRoom);
  EXPECT_EQ(flees.rooms_known(), 2u);
}

TEST(Explorer, AnUnnamedRoomOrOneWithoutExits) {
  Random random(3);
  Explorer explorer;
  explorer.Arrived(Explorer::kUnknownRoom, 4);
  for (int i = 0; i < 20; ++i) {
    const int exit = explorer.Next(random);
    EXPECT_GE(exit, 0);
    EXPECT_LT(exit, 4);
    explorer.Arrived(Explorer::kUnknownRoom, 4);
  }
  EXPECT_EQ(explorer.rooms_known(), 0u);
  explorer.Arrived(5, 0);
  EXPECT_EQ(explorer.Next(random), -1);
}

}  // namespace
}  // namespace telos::sim
