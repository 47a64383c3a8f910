// DirectiveExecutor and the one-zone drain on two in-process shards (A and B: each a WorldHost
// with zones on its own manual executor, a real lease keeper, a ShardDrain and an executor) over
// one MemoryDirectory under a ManualClock. The peers reach each other directly: an Adopt is the
// other keeper's Adopt, a hand-over admits the frozen players into the other host.
#include "telos/shard/directive_executor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <future>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "telos/directory/memory_directory.h"
#include "tenure_test_util.h"

namespace telos::shard {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kTtlMs = 15'000;
constexpr char kScope[] = "director";

struct Side;

// The drain's fleet side, reaching the other shard in this process.
class PeerHandOver final : public DrainHandOver {
 public:
  void BeginDrain() override {}
  Status CallAdopt(const directory::ZoneOwner& to, const std::string& zone,
                   uint64_t epoch) override;
  void HandOver(std::vector<world::PlayerTransfer> players, directory::ZoneOwner to,
                std::function<void(size_t, size_t)> done) override;
  Side* peer = nullptr;
};

struct Side {
  Side(const std::string& id, const Clock& clock, directory::Directory& directory, Logger& log)
      : world(clock), shard_id(id) {
    host = testing_util::MakeHost(world, clock, log, metrics, persistence);
    hosting = std::make_unique<testing_util::HostHosting>(*host);
    ZoneLeaseKeeperOptions o;
    o.shard_id = id;
    o.endpoint = id + ".test:7000";
    o.pool = {"town"};
    o.lease_ttl_ms = kTtlMs;
    o.shard_ttl_ms = kTtlMs;
    keeper = std::make_unique<ZoneLeaseKeeper>(o, directory, *hosting, clock, log, metrics);
    drain =
        std::make_unique<ShardDrain>(ShardDrainOptions{.shard_id = id,
                                                       .lobby_zone = world.pack->start_room.zone,
                                                       .lease_ttl_ms = kTtlMs,
                                                       .deadline_ms = limits::kShardDrainDeadlineMs,
                                                       .endpoint = o.endpoint},
                                     directory, *keeper, *host, hand_over, clock, log, metrics);
    executor = std::make_unique<DirectiveExecutor>(DirectiveExecutorOptions{.shard_id = id},
                                                   directory, *keeper, *drain, log, metrics);
    RELEASE_ASSERT(host->StartZone(world.pack->start_room.zone).ok(), "lobby");
    RELEASE_ASSERT(keeper->Register().ok(), "register");
  }
  ~Side() {
    (void)host->StopAllZones(std::chrono::milliseconds(0), nullptr);
    world.executor.RunReady();
  }
  bool Runs(const std::string& zone) const { return host->FindZone(zone) != nullptr; }

  Metrics metrics;
  testing_util::TestWorld world;
  testing_util::NoPersistence persistence;
  std::string shard_id;
  std::unique_ptr<world::WorldHost> host;
  std::unique_ptr<testing_util::HostHosting> hosting;
  std::unique_ptr<ZoneLeaseKeeper> keeper;
  PeerHandOver hand_over;
  std::unique_ptr<ShardDrain> drain;
  std::unique_ptr<DirectiveExecutor> executor;
};

Status PeerHandOver::CallAdopt(const directory::ZoneOwner&, const std::string& zone,
                               uint64_t epoch) {
  return peer->keeper->Adopt(zone, epoch);
}

void PeerHandOver::HandOver(std::vector<world::PlayerTransfer> players, directory::ZoneOwner,
                            std::function<void(size_t, size_t)> done) {
  size_t redirected = 0, reclaimed = 0;
  for (auto& player : players) {
    if (peer->host->Admit(std::move(player)).ok()) {
      ++redirected;
    } else {
      ++reclaimed;
    }
  }
  done(redirected, reclaimed);
}

// Resident memory of this process, in bytes.
int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

class DirectiveExecutorTest : public ::testing::Test {
 protected:
  DirectiveExecutorTest() {
    a_.hand_over.peer = &b_;
    b_.hand_over.peer = &a_;
    Pass();  // A wins town at epoch 1; B watches it
    auto lead = directory_.Campaign(kScope, "d1", limits::kDirectoryTtlMsMax);
    RELEASE_ASSERT(lead.ok(), "campaign");
    term_ = lead->epoch;
  }

  // One keeper pass on each shard, then whatever their zones have due.
  void Pass() {
    a_.keeper->Tick();
    b_.keeper->Tick();
    Pump();
  }
  // Runs what the zones have due now, their heartbeats (and a stopped zone's last one) included.
  void Pump() {
    a_.world.executor.RunDue();
    b_.world.executor.RunDue();
  }
  // Lets `ms` of time pass a keeper interval at a time, both keepers renewing as they would.
  void Let(int64_t ms) {
    for (int64_t t = 0; t < ms; t += kTtlMs / 3) {
      clock_.Advance(std::chrono::milliseconds(kTtlMs / 3));
      Pass();
    }
  }
  // Runs `side`'s executor pass on another thread while this one pumps the zones.
  size_t PollPumped(Side& side) {
    auto running = std::async(std::launch::async, [&side] { return side.executor->Poll(); });
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (running.wait_for(std::chrono::milliseconds(1)) != std::future_status::ready) {
      Pump();
      RELEASE_ASSERT(std::chrono::steady_clock::now() < limit, "the poll did not return");
    }
    Pump();
    return running.get();
  }
  // The leader asks `from` to move `zone` to `to`.
  void Direct(const std::string& zone, const std::string& from, const std::string& to,
              int64_t ttl_ms = directory::kDirectiveTtlMsDefault) {
    ASSERT_TRUE(directory_.IssueDirective(kScope, term_, zone, from, to, ttl_ms).ok());
  }
  std::optional<directory::ZoneOwner> Owner(const std::string& zone) {
    auto owner = directory_.OwnerOfZone(zone);
    RELEASE_ASSERT(owner.ok(), "owner");
    return *owner;
  }
  std::string LogText() {
    log_sink_->flush();
    return log_stream_.str();
  }

  ManualClock clock_;
  std::ostringstream log_stream_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> log_sink_ =
      std::make_shared<spdlog::sinks::ostream_sink_mt>(log_stream_);
  Logger log_{"directive_executor_test", LogLevel::kInfo, log_sink_};
  directory::MemoryDirectory directory_{clock_};
  Side a_{"A", clock_, directory_, log_};
  Side b_{"B", clock_, directory_, log_};
  uint64_t term_ = 0;
};

TEST_F(DirectiveExecutorTest, ActsOnItsDirectiveCompletesItAndTearsTheZoneDown) {
  ASSERT_TRUE(a_.Runs("town"));
  ASSERT_TRUE(testing_util::LoginAt(*a_.host, "Ada", "town:north_gate").ok());
  Pump();
  std::weak_ptr<world::Zone> town_on_a = a_.host->FindZone("town");
  Direct("town", "A", "B");

  EXPECT_EQ(PollPumped(a_), 1u);
  // One fenced flip straight to B, the player handed over in place.
  auto owner = Owner("town");
  ASSERT_TRUE(owner.has_value());
  EXPECT_EQ(owner->shard_id, "B");
  EXPECT_EQ(owner->epoch, 2u);
  EXPECT_TRUE(b_.Runs("town"));
  EXPECT_EQ(b_.host->ZoneOf("Ada"), std::optional<std::string>("town"));
  // Completed, and the zone cooled down.
  EXPECT_TRUE(directory_.ListDirectives("A")->empty());
  EXPECT_GT(*directory_.CooldownRemainingMs("town"), 0);
  EXPECT_THAT(LogText(), HasSubstr("placement: rebalance drain recommended"));
  // Torn down on A: not running, not held (nothing renews it), and the zone object — its
  // heartbeat and Lua VM with it — is freed once its last queued beat has run.
  EXPECT_FALSE(a_.Runs("town"));
  EXPECT_FALSE(a_.keeper->held().contains("town"));
  Let(2 * kTtlMs);
  EXPECT_TRUE(town_on_a.expired()) << "the emptied zone was not reclaimed";
  EXPECT_FALSE(a_.Runs("town"));
  owner = Owner("town");
  ASSERT_TRUE(owner.has_value());
  EXPECT_EQ(owner->shard_id, "B");
  EXPECT_EQ(owner->epoch, 2u) << "B renews it; A never took it back";
}

TEST_F(DirectiveExecutorTest, IgnoresAndPrunesExpiredFencedAndStaleDirectives) {
  // Expired before the shard looked: never acted on.
  Direct("town", "A", "B", /*ttl_ms=*/100);
  clock_.Advance(std::chrono::milliseconds(200));
  EXPECT_EQ(PollPumped(a_), 0u);
  EXPECT_EQ(Owner("town")->shard_id, "A");

  // A zone the shard does not hold, and one naming the shard itself: pruned, nothing moves.
  Direct("nowhere", "A", "B");
  Direct("town", "A", "A");
  EXPECT_EQ(PollPumped(a_), 0u);
  EXPECT_TRUE(directory_.ListDirectives("A")->empty());
  EXPECT_EQ(Owner("town")->shard_id, "A");

  // Another shard's directive is neither acted on nor retired by A.
  Direct("town", "B", "A");
  EXPECT_EQ(PollPumped(a_), 0u);
  EXPECT_EQ(directory_.ListDirectives("B")->size(), 1u);
  ASSERT_TRUE(directory_.CompleteDirective("town", "B").ok());

  // Written by a leader that has since been deposed: fenced, pruned, not obeyed.
  Direct("town", "A", "B");
  ASSERT_TRUE(directory_.Resign(kScope, "d1", term_).ok());
  ASSERT_TRUE(directory_.Campaign(kScope, "d2", limits::kDirectoryTtlMsMax).ok());
  EXPECT_EQ(PollPumped(a_), 0u);
  EXPECT_TRUE(directory_.ListDirectives("A")->empty());
  EXPECT_EQ(Owner("town")->shard_id, "A");
  EXPECT_TRUE(a_.Runs("town"));
  EXPECT_THAT(LogText(), HasSubstr("fenced"));
}

// A target that is draining is refused before anything changes: the zone stays where it is.
TEST_F(DirectiveExecutorTest, ADrainingTargetIsRefusedAndTheZoneStays) {
  ASSERT_TRUE(directory_.MarkShardDraining("B", "B.test:7000", 60'000).ok());
  Direct("town", "A", "B");
  EXPECT_EQ(PollPumped(a_), 0u);
  EXPECT_TRUE(directory_.ListDirectives("A")->empty());
  EXPECT_EQ(Owner("town")->shard_id, "A");
  EXPECT_TRUE(a_.Runs("town"));
  EXPECT_TRUE(a_.keeper->held().contains("town"));
}

// A long-lived shard after 50 moves away and back hosts exactly its zones: zone objects and Lua
// VMs stay flat, resident memory does not grow without bound, and every re-adoption restarts
// renewal (the lease outlives several TTLs on A at the epoch it was adopted at).
TEST_F(DirectiveExecutorTest, FiftyMovesAwayAndBackLeaveTheShardHostingExactlyItsZones) {
  ASSERT_TRUE(testing_util::LoginAt(*a_.host, "Ada", "town:north_gate").ok());
  Pump();
  const int64_t zones_at_start = world::WorldHost::LiveZones();
  const int64_t vms_at_start = world::WorldHost::LiveLuaVms();
  int64_t resident_early = 0;
  for (int round = 0; round < 50; ++round) {
    Direct("town", "A", "B");
    ASSERT_EQ(PollPumped(a_), 1u) << "round " << round;
    ASSERT_EQ(Owner("town")->shard_id, "B");
    Direct("town", "B", "A");
    ASSERT_EQ(PollPumped(b_), 1u) << "round " << round;
    const uint64_t epoch = Owner("town")->epoch;
    ASSERT_EQ(epoch, 3u + 2u * static_cast<uint64_t>(round));
    // Renewal restarted: after two TTLs the lease is still A's, at the adopted epoch.
    Let(2 * kTtlMs);
    auto owner = Owner("town");
    ASSERT_TRUE(owner.has_value()) << "round " << round << ": nobody renewed the re-adopted zone";
    ASSERT_EQ(owner->shard_id, "A");
    ASSERT_EQ(owner->epoch, epoch);
    // Exactly its zones: the lobby and town here, the lobby alone on B.
    std::vector<std::string> expected_on_a = {a_.world.pack->start_room.zone, "town"};
    std::sort(expected_on_a.begin(), expected_on_a.end());
    ASSERT_EQ(a_.host->RunningZones(), expected_on_a) << "round " << round;
    ASSERT_EQ(b_.host->RunningZones(), (std::vector<std::string>{b_.world.pack->start_room.zone}));
    ASSERT_EQ(a_.keeper->held().size(), 1u);
    ASSERT_TRUE(b_.keeper->held().empty());
    ASSERT_EQ(world::WorldHost::LiveZones(), zones_at_start) << "round " << round;
    ASSERT_EQ(world::WorldHost::LiveLuaVms(), vms_at_start) << "round " << round;
    ASSERT_EQ(a_.host->ZoneOf("Ada"), std::optional<std::string>("town"));
    if (round == 9) resident_early = ResidentBytes();
  }
  // Forty more round trips may not add more than a little: a leak of one zone's worth per move
  // (its VM and tables) would show long before this.
  EXPECT_LT(ResidentBytes() - resident_early, int64_t{32} << 20);
}

}  // namespace
}  // namespace telos::shard
