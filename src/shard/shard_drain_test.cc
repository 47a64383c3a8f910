// ShardDrain on a MemoryDirectory under a ManualClock, with a real lease keeper and WorldHost
// (zones on one manual executor the test pumps) and a recording DrainHandOver in place of the
// gRPC calls: each held zone's lease moves to the peer in one fenced step, the peer is asked to
// adopt it, the zone's and the lobby's players are handed over, reservations are released, and
// the deadline is judged on the injected clock.
#include "telos/shard/shard_drain.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <chrono>
#include <future>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "telos/directory/memory_directory.h"
#include "tenure_test_util.h"

namespace telos::shard {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::UnorderedElementsAre;

constexpr int64_t kTtlMs = 15'000;

using testing_util::HostHosting;

// Records what the drain asks of the shard; hands players over at once unless told to hold.
class RecordingHandOver final : public DrainHandOver {
 public:
  void BeginDrain() override {
    std::lock_guard lock(mu_);
    began = true;
  }
  Status CallAdopt(const directory::ZoneOwner& to, const std::string& zone,
                   uint64_t epoch) override {
    std::lock_guard lock(mu_);
    adopts.push_back(to.shard_id + " " + zone + "@" + std::to_string(epoch));
    if (on_adopt) return on_adopt(to, zone, epoch);
    return adopt_status;
  }
  void HandOver(std::vector<world::PlayerTransfer> players, directory::ZoneOwner to,
                std::function<void(size_t, size_t)> done) override {
    std::unique_lock lock(mu_);
    for (const auto& player : players) handed.push_back(player.state.name + "->" + to.shard_id);
    if (hold) {
      held_done.push_back([done, n = players.size()] { done(n, 0); });
      return;
    }
    const bool all_reclaimed = reclaim;
    lock.unlock();
    if (all_reclaimed) {
      done(0, players.size());
    } else {
      done(players.size(), 0);
    }
  }

  std::mutex mu_;
  bool hold = false;
  bool reclaim = false;  // the peer takes none of the players
  bool began = false;
  Status adopt_status;  // what every CallAdopt answers, unless on_adopt is set
  std::function<Status(const directory::ZoneOwner&, const std::string&, uint64_t)> on_adopt;
  std::vector<std::string> adopts, handed;
  std::vector<std::function<void()>> held_done;
};

class ShardDrainTest : public ::testing::Test {
 protected:
  ShardDrainTest() {
    host_ = testing_util::MakeHost(world_, clock_, log_, metrics_, persistence_);
    hosting_ = std::make_unique<HostHosting>(*host_);
    ZoneLeaseKeeperOptions o;
    o.shard_id = "A";
    o.endpoint = "a.test:7000";
    o.pool = {"town"};
    o.lease_ttl_ms = kTtlMs;
    o.shard_ttl_ms = kTtlMs;
    keeper_ = std::make_unique<ZoneLeaseKeeper>(o, directory_, *hosting_, clock_, log_, metrics_);
    RELEASE_ASSERT(host_->StartZone(world_.pack->start_room.zone).ok(), "lobby");
    RELEASE_ASSERT(keeper_->Register().ok(), "register");
    keeper_->Tick();  // wins town at epoch 1
    world_.executor.RunReady();
    drain_ = std::make_unique<ShardDrain>(
        ShardDrainOptions{.shard_id = "A",
                          .lobby_zone = world_.pack->start_room.zone,
                          .lease_ttl_ms = kTtlMs,
                          .deadline_ms = 45'000,
                          .endpoint = "a.test:7000"},
        directory_, *keeper_, *host_, hand_over_, clock_, log_, metrics_);
  }
  ~ShardDrainTest() override {
    (void)host_->StopAllZones(std::chrono::milliseconds(0), nullptr);
    world_.executor.RunReady();
  }

  // Runs the drain on another thread while this one pumps the zones (and, with `advance`,
  // moves the manual clock a second at a time) until it returns.
  DrainResult RunDrain(bool advance = false) {
    auto running = std::async(std::launch::async, [this] { return drain_->Run(); });
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (running.wait_for(std::chrono::milliseconds(1)) != std::future_status::ready) {
      world_.executor.RunReady();
      if (advance) clock_.Advance(std::chrono::seconds(1));
      RELEASE_ASSERT(std::chrono::steady_clock::now() < limit, "the drain did not return");
    }
    return running.get();
  }

  // The drain's log lines, for the tests that judge what it said.
  std::string LogText() {
    log_sink_->flush();
    return log_stream_.str();
  }

  ManualClock clock_;
  std::ostringstream log_stream_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> log_sink_ =
      std::make_shared<spdlog::sinks::ostream_sink_mt>(log_stream_);
  Logger log_{"shard_drain_test", LogLevel::kWarn, log_sink_};
  Metrics metrics_;
  directory::MemoryDirectory directory_{clock_};
  testing_util::TestWorld world_{clock_};
  testing_util::NoPersistence persistence_;
  std::unique_ptr<world::WorldHost> host_;
  std::unique_ptr<HostHosting> hosting_;
  std::unique_ptr<ZoneLeaseKeeper> keeper_;
  RecordingHandOver hand_over_;
  std::unique_ptr<ShardDrain> drain_;
};

TEST_F(ShardDrainTest, EachZoneMovesToThePeerInOneFencedStepAndItsPlayersFollow) {
  ASSERT_TRUE(directory_.RegisterShard("B", "b.test:7000", kTtlMs).ok());
  ASSERT_TRUE(testing_util::LoginAt(*host_, "Ada", "town:north_gate").ok());
  ASSERT_TRUE(testing_util::LoginAt(*host_, "Bo", world_.pack->start_room.ToString()).ok());
  world_.executor.RunReady();

  const DrainResult result = RunDrain();
  EXPECT_TRUE(result.complete);
  EXPECT_EQ(result.zones_moved, 1u);
  EXPECT_EQ(result.redirected, 2u);
  EXPECT_EQ(result.reclaimed, 0u);
  EXPECT_TRUE(hand_over_.began);
  // The lease went straight from A's tenure 1 to B's tenure 2: never ownerless.
  auto owner = directory_.OwnerOfZone("town");
  ASSERT_TRUE(owner.ok() && owner->has_value());
  EXPECT_EQ((*owner)->shard_id, "B");
  EXPECT_EQ((*owner)->epoch, 2u);
  EXPECT_THAT(hand_over_.adopts, ElementsAre("B town@2"));
  EXPECT_THAT(hand_over_.handed, UnorderedElementsAre("Ada->B", "Bo->B"));
  EXPECT_TRUE(keeper_->held().empty());
  EXPECT_TRUE(host_->RunningZones().empty());
  EXPECT_EQ(*directory_.ReservedSum("B"), 0) << "the drain's reservations outlived it";
}

TEST_F(ShardDrainTest, WithoutALivePeerNothingMovesAndThePlayersStay) {
  ASSERT_TRUE(testing_util::LoginAt(*host_, "Ada", "town:north_gate").ok());
  world_.executor.RunReady();
  const DrainResult result = RunDrain();
  EXPECT_FALSE(result.complete);
  EXPECT_EQ(result.zones_moved, 0u);
  EXPECT_EQ(result.zones_left, 1u);
  EXPECT_EQ(keeper_->held().size(), 1u);
  EXPECT_TRUE(hand_over_.handed.empty());
  auto owner = directory_.OwnerOfZone("town");
  ASSERT_TRUE(owner.ok() && owner->has_value());
  EXPECT_EQ((*owner)->shard_id, "A");
}

// The peer never settles the hand-over: the drain gives up at the zones' deadline on the
// injected clock, says what was left, and still releases its reservations.
TEST_F(ShardDrainTest, AHandOverThatNeverSettlesEndsAtTheDeadline) {
  ASSERT_TRUE(directory_.RegisterShard("B", "b.test:7000", 600'000).ok());
  hand_over_.hold = true;
  const DrainResult result = RunDrain(/*advance=*/true);
  EXPECT_FALSE(result.complete);
  EXPECT_EQ(result.zones_left, 2u);  // town and the lobby
  // Each zone's own 30 s deadline ends the waiting before the 45 s outer one.
  EXPECT_EQ(result.zones_timed_out, 2u);
  EXPECT_GE(result.took_ms, 30'000);
  EXPECT_LT(result.took_ms, 45'000);
  EXPECT_EQ(*directory_.ReservedSum("B"), 0);
  // A late settlement after the drain returned touches nothing that is gone.
  for (auto& done : hand_over_.held_done) done();
}

// An Adopt that timed out at the caller may have been carried out all the same (the peer's
// keeper may still be starting the zone): it is not a refusal. The drain says "maybe applied",
// counts it, and the zone's players follow the lease as if it had been adopted.
TEST_F(ShardDrainTest, AnAdoptionWithoutAnAnswerInTimeIsMaybeAppliedNotRefused) {
  ASSERT_TRUE(directory_.RegisterShard("B", "b.test:7000", kTtlMs).ok());
  ASSERT_TRUE(testing_util::LoginAt(*host_, "Ada", "town:north_gate").ok());
  world_.executor.RunReady();
  hand_over_.adopt_status = Status::DeadlineExceeded("adopt at b.test:7000: no answer in time");

  const DrainResult result = RunDrain();
  EXPECT_TRUE(result.complete);
  EXPECT_EQ(result.zones_moved, 1u);
  EXPECT_EQ(result.zones_adoption_unknown, 1u);
  EXPECT_THAT(hand_over_.adopts, ElementsAre("B town@2"));
  EXPECT_THAT(hand_over_.handed, ElementsAre("Ada->B"));
  const std::string log = LogText();
  EXPECT_THAT(log, HasSubstr("maybe applied"));
  EXPECT_THAT(log, Not(HasSubstr("refused"))) << log;
}

// A peer that answers no has refused: said so, and not counted as maybe adopted.
TEST_F(ShardDrainTest, AnAdoptionThePeerRefusesIsARefusal) {
  ASSERT_TRUE(directory_.RegisterShard("B", "b.test:7000", kTtlMs).ok());
  hand_over_.adopt_status = Status::FailedPrecondition("shard B is draining: it adopts no zones");

  const DrainResult result = RunDrain();
  EXPECT_EQ(result.zones_moved, 1u);
  EXPECT_EQ(result.zones_adoption_unknown, 0u);
  const std::string log = LogText();
  EXPECT_THAT(log, HasSubstr("peer refused to adopt the zone"));
  EXPECT_THAT(log, Not(HasSubstr("maybe applied"))) << log;
}

// The peer chosen turned out to be draining (its mark came after this drain read the shards):
// it passed the lease on to C and answered Conflict ("moved"). The drain re-reads the zone's
// owner and the players follow the zone to C, not to the peer that no longer has it.
TEST_F(ShardDrainTest, APeerThatPassesTheZoneOnIsFollowedToItsNewOwner) {
  ASSERT_TRUE(directory_.RegisterShard("B", "b.test:7000", kTtlMs).ok());
  ASSERT_TRUE(directory_.RegisterShard("C", "c.test:7000", kTtlMs).ok());
  ASSERT_TRUE(directory_.ReportOccupancy("C", {{"forest", 40}}).ok());  // B (empty) is chosen
  ASSERT_TRUE(testing_util::LoginAt(*host_, "Ada", "town:north_gate").ok());
  world_.executor.RunReady();
  hand_over_.on_adopt = [this](const directory::ZoneOwner& to, const std::string& zone,
                               uint64_t epoch) {
    auto passed = directory_.TransferZone(zone, to.shard_id, epoch, "C", kTtlMs);
    RELEASE_ASSERT(passed.ok(), passed.status().ToString());
    return Status::Conflict("zone " + zone + " moved to C: shard B is draining");
  };

  const DrainResult result = RunDrain();
  EXPECT_TRUE(result.complete);
  EXPECT_EQ(result.zones_moved, 1u);
  EXPECT_EQ(result.zones_adoption_unknown, 0u);
  EXPECT_EQ(result.reclaimed, 0u);
  EXPECT_THAT(hand_over_.adopts, ElementsAre("B town@2"));
  EXPECT_THAT(hand_over_.handed, Contains("Ada->C"));
  EXPECT_THAT(hand_over_.handed, Not(Contains("Ada->B")));
  auto owner = directory_.OwnerOfZone("town");
  ASSERT_TRUE(owner.ok() && owner->has_value());
  EXPECT_EQ((*owner)->shard_id, "C");
  const std::string log = LogText();
  EXPECT_THAT(log, Not(HasSubstr("refused"))) << log;
}

// A peer that is itself draining would refuse the Adopt, stranding the lease until it lapsed:
// its draining mark keeps it from being chosen, even when it is the lightest.
TEST_F(ShardDrainTest, APeerThatIsItselfDrainingIsNeverTheTarget) {
  ASSERT_TRUE(directory_.RegisterShard("B", "b.test:7000", kTtlMs).ok());
  ASSERT_TRUE(directory_.RegisterShard("C", "c.test:7000", kTtlMs).ok());
  ASSERT_TRUE(directory_.ReportOccupancy("C", {{"forest", 40}}).ok());  // B (empty) is lighter
  ASSERT_TRUE(directory_.MarkShardDraining("B", "b.test:7000", 60'000).ok());
  ASSERT_TRUE(testing_util::LoginAt(*host_, "Ada", "town:north_gate").ok());
  world_.executor.RunReady();

  const DrainResult result = RunDrain();
  EXPECT_TRUE(result.complete);
  EXPECT_THAT(hand_over_.adopts, ElementsAre("C town@2"));
  EXPECT_THAT(hand_over_.handed, ElementsAre("Ada->C"));
  auto owner = directory_.OwnerOfZone("town");
  ASSERT_TRUE(owner.ok() && owner->has_value());
  EXPECT_EQ((*owner)->shard_id, "C");
}

// Two shards of a rolling restart drain at once: A marks itself draining before it picks, so
// B's drain, picking now, does not choose A even though A is the lightest.
TEST_F(ShardDrainTest, TwoShardsDrainingAtOnceNeverPickEachOther) {
  ASSERT_TRUE(directory_.RegisterShard("B", "b.test:7000", kTtlMs).ok());
  ASSERT_TRUE(directory_.RegisterShard("C", "c.test:7000", kTtlMs).ok());
  ASSERT_TRUE(directory_.ReportOccupancy("C", {{"forest", 40}}).ok());
  ASSERT_TRUE(directory_.MarkShardDraining("B", "b.test:7000", 60'000).ok());  // B drains too
  const DrainResult result = RunDrain();
  EXPECT_TRUE(result.complete);
  EXPECT_THAT(hand_over_.adopts, ElementsAre("C town@2"));
  auto shards = directory_.ListShards();
  ASSERT_TRUE(shards.ok());
  ASSERT_EQ(shards->size(), 3u);
  EXPECT_TRUE((*shards)[0].draining) << "A marked itself draining";
  directory::DrainTargetRequest b_asks;
  b_asks.exclude = {"B"};
  b_asks.amount = 1;
  auto b_pick = directory_.SelectDrainTarget(b_asks);
  ASSERT_TRUE(b_pick.ok()) << b_pick.status().ToString();
  EXPECT_EQ(b_pick->reservation.target, "C");
}

// The leader director names the targets when it answers; its choice wins over the selector's.
TEST_F(ShardDrainTest, TheDirectorsTargetIsUsedWhenItAnswers) {
  ASSERT_TRUE(directory_.RegisterShard("B", "b.test:7000", kTtlMs).ok());
  ASSERT_TRUE(directory_.RegisterShard("C", "c.test:7000", kTtlMs).ok());
  ASSERT_TRUE(directory_.ReportOccupancy("C", {{"forest", 40}}).ok());  // the selector says B
  std::vector<DrainZoneLoad> asked;
  drain_->SetTargetAsk([&](const std::vector<DrainZoneLoad>& zones, int64_t ttl_ms) {
    asked = zones;
    EXPECT_EQ(ttl_ms, 45'000 + limits::kShardDrainPresenceReflectMs);
    return Result<std::vector<DirectedTarget>>(std::vector<DirectedTarget>{{"town", "C", "r-1"}});
  });
  const DrainResult result = RunDrain();
  EXPECT_TRUE(result.complete);
  EXPECT_EQ(result.zones_directed, 1u);
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].zone, "town");
  EXPECT_THAT(hand_over_.adopts, ElementsAre("C town@2"));
}

// No director answering is not a failure: the drain chooses alone.
TEST_F(ShardDrainTest, WithoutADirectorTheDrainChoosesAlone) {
  ASSERT_TRUE(directory_.RegisterShard("B", "b.test:7000", kTtlMs).ok());
  drain_->SetTargetAsk([](const std::vector<DrainZoneLoad>&, int64_t) {
    return Result<std::vector<DirectedTarget>>(Status::DeadlineExceeded("no director answered"));
  });
  const DrainResult result = RunDrain();
  EXPECT_TRUE(result.complete);
  EXPECT_EQ(result.zones_directed, 0u);
  EXPECT_THAT(hand_over_.adopts, ElementsAre("B town@2"));
}

// Players a refused adoption leaves behind are counted under their fault.
TEST_F(ShardDrainTest, ReclaimedPlayersAreCountedByFault) {
  ASSERT_TRUE(directory_.RegisterShard("B", "b.test:7000", kTtlMs).ok());
  ASSERT_TRUE(testing_util::LoginAt(*host_, "Ada", "town:north_gate").ok());
  world_.executor.RunReady();
  hand_over_.adopt_status = Status::FailedPrecondition("shard B is draining: it adopts no zones");
  hand_over_.reclaim = true;
  const DrainResult result = RunDrain();
  EXPECT_EQ(result.reclaimed, 1u);
  auto& refused = metrics_.Counter("shard_drain_reclaimed_total", "", {{"fault", "adopt_refused"}});
  auto& handoff = metrics_.Counter("shard_drain_reclaimed_total", "", {{"fault", "handoff"}});
  EXPECT_EQ(refused.Value(), 1.0);
  EXPECT_EQ(handoff.Value(), 0.0);
  EXPECT_THAT(LogText(), HasSubstr("zone needs (re)assignment"));
}

}  // namespace
}  // namespace telos::shard
