#include "telos/placement/map_fleet.h"

#include <gtest/gtest.h>

#include "test_candidates.h"

namespace telos::placement {
namespace {

using testing::MatchingCandidate;

Candidate Instance(std::string id, int32_t players, InstanceState state = InstanceState::kReady) {
  Candidate c = MatchingCandidate(std::move(id), players);
  c.state = state;
  return c;
}

class MapFleetTest : public ::testing::Test {
 protected:
  void Arrive(int count) {
    for (int i = 0; i < count; ++i) fleet_.Arrived();
  }
  void Wait(int64_t ms) { clock_.Advance(Millis(ms)); }

  ManualClock clock_;
  MapFleet fleet_{clock_, FleetConfig{}};
};

TEST_F(MapFleetTest, SpawnsWhenThereIsNoInstance) {
  FleetAction action = fleet_.Observe({});
  EXPECT_EQ(action.kind, FleetActionKind::kSpawn);
  EXPECT_EQ(action.reason, FleetReason::kNoInstance);
  // Draining and gone instances do not count.
  Wait(kDefaultSpawnDebounceMs);
  std::vector<Candidate> leaving = {Instance("a", 3, InstanceState::kDraining),
                                    Instance("b", 0, InstanceState::kGone)};
  EXPECT_EQ(fleet_.Observe(leaving).reason, FleetReason::kNoInstance);
}

TEST_F(MapFleetTest, SpawnsAreDebounced) {
  EXPECT_EQ(fleet_.Observe({}).kind, FleetActionKind::kSpawn);
  Wait(kDefaultSpawnDebounceMs - 1);
  EXPECT_EQ(fleet_.Observe({}).kind, FleetActionKind::kNone);
  Wait(1);
  EXPECT_EQ(fleet_.Observe({}).kind, FleetActionKind::kSpawn);
}

TEST_F(MapFleetTest, SpawnsWhenEveryInstanceIsAtItsSoftCap) {
  std::vector<Candidate> instances = {Instance("a", 100), Instance("b", 99)};
  EXPECT_EQ(fleet_.Observe(instances).kind, FleetActionKind::kNone);
  instances[1].player_count = 100;
  const FleetAction action = fleet_.Observe(instances);
  EXPECT_EQ(action.kind, FleetActionKind::kSpawn);
  EXPECT_EQ(action.reason, FleetReason::kAllAtSoftCap);
}

TEST_F(MapFleetTest, AStartingInstanceIsRoomOnItsWay) {
  std::vector<Candidate> instances = {Instance("a", 100),
                                      Instance("b", 0, InstanceState::kStarting)};
  EXPECT_EQ(fleet_.Observe(instances).kind, FleetActionKind::kNone);
}

TEST_F(MapFleetTest, TheRateIsMeasuredOverTheSpanTheArrivalsCover) {
  // Ten a second for one second: 50 expected over the five-second lead, not 10/60 of that.
  for (int i = 0; i < 10; ++i) {
    fleet_.Arrived();
    Wait(100);
  }
  EXPECT_EQ(fleet_.ProjectedArrivals(), 50);
  std::vector<Candidate> roomy = {Instance("a", 49)};  // 51 free
  EXPECT_EQ(fleet_.Observe(roomy).kind, FleetActionKind::kNone);
  std::vector<Candidate> tight = {Instance("a", 51)};  // 49 free
  const FleetAction action = fleet_.Observe(tight);
  EXPECT_EQ(action.kind, FleetActionKind::kSpawn);
  EXPECT_EQ(action.reason, FleetReason::kProjectedArrivals);
  EXPECT_EQ(action.projected_arrivals, 50);
  EXPECT_EQ(action.free_slots, 49);
}

TEST_F(MapFleetTest, APartyInOneInstantIsNotAnInfiniteRate) {
  Arrive(8);
  // Eight over the one-second floor, projected over five seconds.
  EXPECT_EQ(fleet_.ProjectedArrivals(), 40);
  std::vector<Candidate> instances = {Instance("a", 50)};
  EXPECT_EQ(fleet_.Observe(instances).kind, FleetActionKind::kNone);
}

TEST_F(MapFleetTest, TheRateDecaysAndOldArrivalsAreForgotten) {
  Arrive(30);
  EXPECT_EQ(fleet_.ProjectedArrivals(), 150);
  Wait(10'000);
  EXPECT_EQ(fleet_.ProjectedArrivals(), 15);
  Wait(kDefaultRateWindowMs);
  EXPECT_EQ(fleet_.ProjectedArrivals(), 0);
}

TEST_F(MapFleetTest, NeverSpawnsBeyondTheMaximum) {
  FleetConfig config;
  config.instances_max = 2;
  MapFleet fleet(clock_, config);
  std::vector<Candidate> instances = {Instance("a", 100), Instance("b", 100)};
  EXPECT_EQ(fleet.Observe(instances).kind, FleetActionKind::kNone);
}

class MergeTest : public MapFleetTest {
 protected:
  std::vector<Candidate> quiet_ = {Instance("a", 20), Instance("b", 10), Instance("c", 60)};
};

TEST_F(MergeTest, DrainsTheEmptiestAfterTwoHaveBeenQuietForTheDwell) {
  EXPECT_EQ(fleet_.Observe(quiet_).kind, FleetActionKind::kNone);
  Wait(kDefaultMergeDwellMs - 1);
  EXPECT_EQ(fleet_.Observe(quiet_).kind, FleetActionKind::kNone);
  Wait(1);
  const FleetAction action = fleet_.Observe(quiet_);
  EXPECT_EQ(action.kind, FleetActionKind::kDrain);
  EXPECT_EQ(action.reason, FleetReason::kMerge);
  EXPECT_EQ(action.instance_id, "b");
  EXPECT_EQ(fleet_.merge_in_flight(), "b");
}

TEST_F(MergeTest, OneQuietInstanceIsNotEnough) {
  quiet_[0].player_count = 25;  // exactly a quarter is not below it
  fleet_.Observe(quiet_);
  Wait(kDefaultMergeDwellMs * 2);
  EXPECT_EQ(fleet_.Observe(quiet_).kind, FleetActionKind::kNone);
}

TEST_F(MergeTest, GoingBusyRestartsAnInstancesDwell) {
  fleet_.Observe(quiet_);
  Wait(kDefaultMergeDwellMs / 2);
  quiet_[0].player_count = 30;
  fleet_.Observe(quiet_);
  quiet_[0].player_count = 20;
  fleet_.Observe(quiet_);
  Wait(kDefaultMergeDwellMs / 2);
  EXPECT_EQ(fleet_.Observe(quiet_).kind, FleetActionKind::kNone);
  Wait(kDefaultMergeDwellMs / 2);
  EXPECT_EQ(fleet_.Observe(quiet_).kind, FleetActionKind::kDrain);
}

TEST_F(MergeTest, OneMergeInFlightAndTheDwellSurvivesItsCompletion) {
  quiet_.push_back(Instance("d", 5));
  fleet_.Observe(quiet_);
  Wait(kDefaultMergeDwellMs);
  FleetAction first = fleet_.Observe(quiet_);
  ASSERT_EQ(first.kind, FleetActionKind::kDrain);
  EXPECT_EQ(first.instance_id, "d");

  // While d drains, no second merge, however long it takes.
  quiet_[3].state = InstanceState::kDraining;
  Wait(kDefaultMergeDwellMs);
  EXPECT_EQ(fleet_.Observe(quiet_).kind, FleetActionKind::kNone);
  quiet_[3].state = InstanceState::kGone;
  quiet_[3].player_count = 0;
  quiet_[1].player_count = 15;  // d's players moved to b
  // Finished: a and b have been quiet for well over the dwell, so the next merge is immediate.
  const FleetAction second = fleet_.Observe(quiet_);
  EXPECT_EQ(second.kind, FleetActionKind::kDrain);
  EXPECT_EQ(second.instance_id, "b");
}

TEST_F(MergeTest, AnInstanceThatStopsBeingReportedEndsTheMerge) {
  fleet_.Observe(quiet_);
  Wait(kDefaultMergeDwellMs);
  ASSERT_EQ(fleet_.Observe(quiet_).kind, FleetActionKind::kDrain);
  quiet_.erase(quiet_.begin() + 1);
  EXPECT_EQ(fleet_.Observe(quiet_).kind, FleetActionKind::kNone);
  EXPECT_TRUE(fleet_.merge_in_flight().empty());
}

TEST_F(MergeTest, NeverDrainsBelowTheMinimum) {
  FleetConfig config;
  config.instances_min = 3;
  MapFleet fleet(clock_, config);
  fleet.Observe(quiet_);
  Wait(kDefaultMergeDwellMs);
  EXPECT_EQ(fleet.Observe(quiet_).kind, FleetActionKind::kNone);
}

TEST_F(MergeTest, DoesNotGiveBackRoomTheArrivalsNeed) {
  fleet_.Observe(quiet_);
  Wait(kDefaultMergeDwellMs);
  // Projected 35 x 5 = 175 arrivals; the three have 80 + 90 + 40 = 210 free, 120 without b.
  Arrive(35);
  const FleetAction action = fleet_.Observe(quiet_);
  EXPECT_EQ(action.kind, FleetActionKind::kNone);
  EXPECT_EQ(action.projected_arrivals, 175);
}

TEST(FleetConfigTest, ValidatesEveryField) {
  EXPECT_TRUE(ValidateFleetConfig(FleetConfig{}).ok());
  FleetConfig floor_over_window;
  floor_over_window.rate_span_floor_ms = floor_over_window.rate_window_ms + 1;
  EXPECT_FALSE(ValidateFleetConfig(floor_over_window).ok());
  FleetConfig min_over_max;
  min_over_max.instances_min = 5;
  min_over_max.instances_max = 4;
  const Status status = ValidateFleetConfig(min_over_max);
  EXPECT_EQ(status.message(), "fleet: instances_max = 4 must be between 5 and 256");
  FleetConfig negative;
  negative.merge_dwell_ms = -1;
  EXPECT_FALSE(ValidateFleetConfig(negative).ok());
}

TEST(FleetActionTest, DescribesItselfInOneLine) {
  FleetAction drain;
  drain.kind = FleetActionKind::kDrain;
  drain.reason = FleetReason::kMerge;
  drain.instance_id = "b";
  drain.free_slots = 120;
  EXPECT_EQ(drain.Describe(), "drain b (merge): 0 arrivals expected over the lead time, 120 free");
}

}  // namespace
}  // namespace telos::placement
