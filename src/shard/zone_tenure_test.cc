// ZoneTenure on the embedded store (SQLite in memory) and a WorldHost on a manual executor: a
// won lease raises the store's zone fence before the zone runs, a fence found above the granted
// epoch refuses the start and sets the keeper's floor, a lost lease evacuates the zone's
// players, and a resumed one raises the fence to its epoch.
#include "telos/shard/zone_tenure.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "telos/base/assert.h"
#include "telos/base/clock.h"
#include "telos/base/metrics.h"
#include "telos/store/sqlite_store.h"
#include "telos/world/character_state.h"
#include "telos/world/content.h"
#include "telos/world/executor.h"
#include "tenure_test_util.h"

namespace telos::shard {
namespace {

class ZoneTenureTest : public ::testing::Test {
 protected:
  ZoneTenureTest() {
    auto opened = store::SqliteStore::Open({.path = ":memory:"}, clock_);
    RELEASE_ASSERT(opened.ok(), opened.status().ToString());
    db_ = std::move(opened).value();
    persistence_ = std::make_unique<StorePersistence>(db_->characters(), metrics_, log_);
    persistence_->Start();
    host_ = testing_util::MakeHost(world_, clock_, log_, metrics_, *persistence_);
    tenure_ = std::make_unique<ZoneTenure>(
        ZoneTenureDeps{.host = host_.get(),
                       .persistence = persistence_.get(),
                       .characters = &db_->characters(),
                       .log = &log_,
                       .shard_id = "A",
                       .store_up = [this] { return store_up_; },
                       .evacuate =
                           [this](std::vector<world::PlayerTransfer> players) {
                             for (auto& player : players) evacuated_.push_back(player.state.name);
                           }});
  }
  ~ZoneTenureTest() override {
    (void)host_->StopAllZones(std::chrono::milliseconds(0), nullptr);
    world_.executor.RunReady();
    persistence_->Stop();
  }

  // The zone's durable fence as it stands (raising to 1 changes nothing once it is higher).
  int64_t FenceOf(const std::string& zone) {
    auto fence = db_->characters().RaiseZoneFence(zone, 1, "probe");
    RELEASE_ASSERT(fence.ok(), fence.status().ToString());
    return *fence;
  }
  bool Running(const std::string& zone) {
    const auto zones = host_->RunningZones();
    return std::find(zones.begin(), zones.end(), zone) != zones.end();
  }

  ManualClock clock_;
  Logger log_{"zone_tenure_test", LogLevel::kError};
  Metrics metrics_;
  testing_util::TestWorld world_{clock_};
  std::unique_ptr<store::SqliteStore> db_;
  std::unique_ptr<StorePersistence> persistence_;
  std::unique_ptr<world::WorldHost> host_;
  std::unique_ptr<ZoneTenure> tenure_;
  bool store_up_ = true;
  std::vector<std::string> evacuated_;
};

TEST_F(ZoneTenureTest, ANewTenureRaisesTheStoreFenceBeforeTheZoneRuns) {
  ASSERT_TRUE(tenure_->StartZone("town", 3).ok());
  EXPECT_TRUE(Running("town"));
  EXPECT_EQ(FenceOf("town"), 3);
  EXPECT_EQ(tenure_->EpochFloor("town"), 0u);
}

// The directory lost its epochs (an empty Redis granted epoch 5) while the store remembers a
// tenure at 7: the zone must not run at 5, and the keeper claims again from 8.
TEST_F(ZoneTenureTest, AFenceAboveTheGrantedEpochRefusesTheStartAndSetsTheFloor) {
  ASSERT_TRUE(db_->characters().RaiseZoneFence("town", 7, "B").ok());
  const Status refused = tenure_->StartZone("town", 5);
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition) << refused.ToString();
  EXPECT_FALSE(Running("town"));
  EXPECT_EQ(tenure_->EpochFloor("town"), 8u);
  ASSERT_TRUE(tenure_->StartZone("town", 8).ok());
  EXPECT_TRUE(Running("town"));
  EXPECT_EQ(FenceOf("town"), 8);
}

TEST_F(ZoneTenureTest, AStoreKnownDownStartsTheZoneWithoutWaitingOnTheFence) {
  store_up_ = false;
  ASSERT_TRUE(tenure_->StartZone("town", 4).ok());
  EXPECT_TRUE(Running("town"));
  EXPECT_EQ(FenceOf("town"), 1) << "the fence was raised through a store known down";
}

TEST_F(ZoneTenureTest, ALostLeaseStopsTheZoneAndEvacuatesItsPlayers) {
  ASSERT_TRUE(tenure_->StartZone("town", 2).ok());
  world_.executor.RunReady();
  ASSERT_TRUE(testing_util::LoginAt(*host_, "Ada", "town:north_gate").ok());
  world_.executor.RunReady();
  tenure_->StopZone("town", "lease lost");
  world_.executor.RunReady();
  EXPECT_FALSE(Running("town"));
  EXPECT_EQ(evacuated_, std::vector<std::string>{"Ada"});
}

TEST_F(ZoneTenureTest, AResumedLeaseRaisesTheFenceAndAStaleOneIsRefused) {
  ASSERT_TRUE(tenure_->StartZone("town", 2).ok());
  tenure_->SuspendZone("town", "directory unreachable");
  ASSERT_TRUE(tenure_->ResumeZone("town", 3).ok());
  EXPECT_EQ(FenceOf("town"), 3);
  EXPECT_EQ(tenure_->ResumeZone("town", 2).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(tenure_->EpochFloor("town"), 4u);
}

}  // namespace
}  // namespace telos::shard
