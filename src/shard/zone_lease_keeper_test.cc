// ZoneLeaseKeeper on a MemoryDirectory under a ManualClock: every pass is a Tick() called by
// hand, and time moves only when the test advances it, so each lease decision is deterministic.
#include "telos/shard/zone_lease_keeper.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "telos/base/assert.h"
#include "telos/base/clock.h"
#include "telos/directory/forwarding_directory.h"
#include "telos/directory/memory_directory.h"

namespace telos::shard {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

constexpr int64_t kTtlMs = 15'000;
constexpr int64_t kFenceMs = kTtlMs / 6;

// Records what the keeper asked of the world host; StartZone fails for zones in `refuse`.
class FakeHost final : public ZoneHosting {
 public:
  struct Stop {
    std::string zone;
    std::string why;
  };
  Status StartZone(const std::string& zone, uint64_t epoch) override {
    starts.emplace_back(zone, epoch);
    start_threads.push_back(std::this_thread::get_id());
    if (refuse.contains(zone)) return Status::Internal("content for " + zone + " is broken");
    if (auto fence = durable_fence.find(zone);
        fence != durable_fence.end() && epoch <= fence->second) {
      floors[zone] = fence->second + 1;  // as a host finding the store's zone fence above it
      return Status::FailedPrecondition("zone fence above the granted epoch");
    }
    hosting.insert(zone);
    return Status::Ok();
  }
  void StopZone(const std::string& zone, const std::string& why) override {
    stops.push_back({zone, why});
    hosting.erase(zone);
  }
  void SuspendZone(const std::string& zone, const std::string&) override {
    suspends.push_back(zone);
  }
  Status ResumeZone(const std::string& zone, uint64_t epoch) override {
    resumes.emplace_back(zone, epoch);
    return Status::Ok();
  }
  std::vector<std::pair<std::string, uint64_t>> starts;
  std::vector<std::thread::id> start_threads;  // which thread made each start
  std::vector<Stop> stops;
  std::vector<std::string> suspends;
  std::vector<std::pair<std::string, uint64_t>> resumes;
  uint64_t EpochFloor(const std::string& zone) override {
    auto it = floors.find(zone);
    return it == floors.end() ? 0 : it->second;
  }
  std::set<std::string> hosting;
  std::set<std::string> refuse;
  std::map<std::string, uint64_t> durable_fence;  // epochs at or below are stale
  std::map<std::string, uint64_t> floors;
};

// A Directory that forwards to another and injects faults into lease renewals and claims. A
// renew may also take `renew_delay` of manual time, as a slow Redis would.
class FaultyDirectory final : public directory::ForwardingDirectory {
 public:
  FaultyDirectory(directory::Directory& inner, ManualClock& clock)
      : ForwardingDirectory(inner), clock_(clock) {}

  std::atomic<bool> fail_renew{false};
  std::atomic<bool> fail_claim{false};
  // What a failing call returns: kUnavailable (unreachable: the zone is suspended at its fence)
  // or kUnknownResult (sent, no answer: stopped).
  std::atomic<StatusCode> failure{StatusCode::kUnknownResult};
  Duration renew_delay{0};
  std::map<std::string, int> renew_calls;

  using directory::Directory::ClaimZone;
  Result<directory::LeaseGrant> ClaimZone(std::string_view zone, std::string_view id, int64_t ttl,
                                          uint64_t min_epoch) override {
    if (fail_claim) return Status(failure.load(), "injected: directory down");
    return ForwardingDirectory::ClaimZone(zone, id, ttl, min_epoch);
  }
  Result<directory::LeaseGrant> RenewZone(std::string_view zone, std::string_view id,
                                          uint64_t epoch, int64_t ttl) override {
    ++renew_calls[std::string(zone)];
    clock_.Advance(renew_delay);
    if (fail_renew) return Status(failure.load(), "injected: directory down");
    return ForwardingDirectory::RenewZone(zone, id, epoch, ttl);
  }

 private:
  ManualClock& clock_;
};

class ZoneLeaseKeeperTest : public ::testing::Test {
 protected:
  ZoneLeaseKeeperOptions Options(const std::string& id, const std::string& endpoint) {
    ZoneLeaseKeeperOptions o;
    o.shard_id = id;
    o.endpoint = endpoint;
    o.pool = {"town", "crypt", "arena", "town"};  // unsorted, with a duplicate
    o.lease_ttl_ms = kTtlMs;
    o.shard_ttl_ms = kTtlMs;
    return o;
  }
  std::unique_ptr<ZoneLeaseKeeper> Keeper(ZoneLeaseKeeperOptions options, FakeHost& host,
                                          directory::Directory* dir = nullptr) {
    return std::make_unique<ZoneLeaseKeeper>(std::move(options), dir ? *dir : dir_, host, clock_,
                                             log_, metrics_);
  }
  std::optional<directory::ZoneOwner> Owner(const std::string& zone) {
    auto owner = dir_.OwnerOfZone(zone);
    EXPECT_TRUE(owner.ok()) << owner.status().ToString();
    return owner.ok() ? *owner : std::nullopt;
  }
  // A, which has won the whole pool, and B, registered beside it and holding nothing yet.
  std::pair<std::unique_ptr<ZoneLeaseKeeper>, std::unique_ptr<ZoneLeaseKeeper>> HolderAndPeer(
      FakeHost& host_a, FakeHost& host_b) {
    auto a = Keeper(Options("A", "10.0.0.1:7000"), host_a);
    auto b = Keeper(Options("B", "10.0.0.2:7000"), host_b);
    RELEASE_ASSERT(a->Register().ok(), "A registers");
    a->Tick();
    RELEASE_ASSERT(b->Register().ok(), "B registers");
    return {std::move(a), std::move(b)};
  }
  void Advance(int64_t ms) { clock_.Advance(Millis(ms)); }
  int LogCount(const std::string& msg) const {
    const std::string text = log_text_.str();
    const std::string needle = "\"msg\":\"" + msg + "\"";
    int n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
      ++n;
    }
    return n;
  }

  ManualClock clock_;
  directory::MemoryDirectory dir_{clock_};
  std::ostringstream log_text_;
  Logger log_{"world", LogLevel::kInfo,
              std::make_shared<spdlog::sinks::ostream_sink_mt>(log_text_, /*force_flush=*/true)};
  Metrics metrics_;
};

TEST_F(ZoneLeaseKeeperTest, TwoKeepersSplitNothingTwiceAndTheStandbyAdoptsOrphans) {
  FakeHost host_a, host_b;
  auto a = Keeper(Options("A", "10.0.0.1:7000"), host_a);
  auto b = Keeper(Options("B", "10.0.0.2:7000"), host_b);
  ASSERT_TRUE(a->Register().ok());
  a->Tick();
  // Claimed in sorted order, each at the first epoch.
  EXPECT_THAT(host_a.starts, ElementsAre(Pair("arena", 1u), Pair("crypt", 1u), Pair("town", 1u)));
  EXPECT_THAT(a->held(), ElementsAre(Pair("arena", 1u), Pair("crypt", 1u), Pair("town", 1u)));
  EXPECT_FALSE(a->standby());

  ASSERT_TRUE(b->Register().ok());
  b->Tick();
  EXPECT_TRUE(b->standby());
  EXPECT_THAT(b->held(), IsEmpty());
  EXPECT_THAT(host_b.starts, IsEmpty());
  EXPECT_EQ(LogCount("won no zones: STANDBY"), 1);

  // A goes quiet (no ticks) past its leases; B keeps its passes going and adopts every zone.
  for (int64_t step : {kTtlMs / 3, kTtlMs / 3, kTtlMs / 3 - 1}) {
    Advance(step);
    b->Tick();
    EXPECT_TRUE(b->standby()) << "a live lease must not be taken";
  }
  EXPECT_EQ(LogCount("won no zones: STANDBY"), 1) << "logged once, not every pass";
  Advance(1);  // A's leases lapse now
  b->Tick();
  EXPECT_THAT(b->held(), ElementsAre(Pair("arena", 2u), Pair("crypt", 2u), Pair("town", 2u)));
  EXPECT_THAT(host_b.starts, ElementsAre(Pair("arena", 2u), Pair("crypt", 2u), Pair("town", 2u)));
  ASSERT_TRUE(Owner("town").has_value());
  EXPECT_EQ(Owner("town")->shard_id, "B");

  // A wakes up: every renew is refused, so it stops every zone and claims none back.
  a->Tick();
  ASSERT_EQ(host_a.stops.size(), 3u);
  for (const FakeHost::Stop& stop : host_a.stops) {
    EXPECT_THAT(stop.why, HasSubstr("failed_precondition")) << stop.zone;
  }
  EXPECT_THAT(host_a.hosting, IsEmpty());
  EXPECT_TRUE(a->standby());
  EXPECT_EQ(host_a.starts.size(), 3u);
  EXPECT_EQ(LogCount("won no zones: STANDBY"), 2) << "A became a standby";
  EXPECT_EQ(LogCount("lease lost: stopping zone"), 3);
  EXPECT_EQ(LogCount("claimed zone"), 6);
  // A's registration had lapsed too; its heartbeat registered it again.
  auto shards = dir_.ListShards();
  ASSERT_TRUE(shards.ok());
  EXPECT_EQ(shards->size(), 2u);
}

TEST_F(ZoneLeaseKeeperTest, DuplicateShardIdFromAnotherEndpointIsRefused) {
  FakeHost host_a, host_b;
  auto a = Keeper(Options("world-1", "10.0.0.1:7000"), host_a);
  auto impostor = Keeper(Options("world-1", "10.0.0.9:7000"), host_b);
  ASSERT_TRUE(a->Register().ok());
  const Status refused = impostor->Register();
  EXPECT_EQ(refused.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(refused.message(),
            "shard id world-1 is already registered by a live shard at 10.0.0.1:7000");
  // The same endpoint registering again only refreshes.
  EXPECT_TRUE(a->Register().ok());
  // Once the live holder lapses the id is free.
  Advance(kTtlMs + 1);
  EXPECT_TRUE(impostor->Register().ok());
}

TEST_F(ZoneLeaseKeeperTest, AnotherEndpointTakingOurIdStopsEveryZone) {
  FakeHost host, other;
  ZoneLeaseKeeperOptions o = Options("world-1", "10.0.0.1:7000");
  o.shard_ttl_ms = 3'000;  // the registration lapses long before the leases
  auto a = Keeper(o, host);
  ASSERT_TRUE(a->Register().ok());
  a->Tick();
  ASSERT_EQ(a->held().size(), 3u);
  Advance(3'001);
  ASSERT_TRUE(dir_.RegisterShard("world-1", "10.0.0.9:7000", kTtlMs).ok());
  a->Tick();
  EXPECT_TRUE(a->standby());
  EXPECT_EQ(host.stops.size(), 3u);
  EXPECT_THAT(host.hosting, IsEmpty());
  EXPECT_EQ(host.starts.size(), 3u) << "nothing is claimed under a taken id";
}

TEST_F(ZoneLeaseKeeperTest, UnconfirmableRenewalStopsTheZoneBeforeItsDeadline) {
  FakeHost host;
  FaultyDirectory faulty(dir_, clock_);
  ZoneLeaseKeeperOptions o = Options("A", "10.0.0.1:7000");
  o.pool = {"town"};
  auto a = Keeper(o, host, &faulty);
  ASSERT_TRUE(a->Register().ok());
  const Instant claimed_at = clock_.Now();
  a->Tick();
  ASSERT_THAT(a->held(), ElementsAre(Pair("town", 1u)));
  const Instant deadline = claimed_at + Millis(kTtlMs);

  faulty.fail_renew = true;
  Advance(kTtlMs / 3);
  a->Tick();
  Advance(kTtlMs / 3);
  a->Tick();
  EXPECT_THAT(host.stops, IsEmpty()) << "still well inside the lease";
  EXPECT_THAT(a->held(), ElementsAre(Pair("town", 1u)));

  // The last instant before the fence: kept.
  Advance(kTtlMs / 3 - kFenceMs - 1);
  a->Tick();
  EXPECT_THAT(host.stops, IsEmpty());
  // At the fence: stopped, while the directory still has the lease as A's.
  Advance(1);
  a->Tick();
  ASSERT_EQ(host.stops.size(), 1u);
  EXPECT_EQ(host.stops[0].zone, "town");
  EXPECT_EQ(host.stops[0].why, "lease not confirmable");
  EXPECT_LT(clock_.Now(), deadline);
  ASSERT_TRUE(Owner("town").has_value());
  EXPECT_EQ(Owner("town")->shard_id, "A") << "stopped before the lease could have expired";
  EXPECT_TRUE(a->standby());
  EXPECT_EQ(host.starts.size(), 1u) << "not claimed back in the pass that stopped it";
  EXPECT_EQ(LogCount("lease fence: stopping without drain"), 1);
}

// Single-shard mode: a directory that cannot be reached at all (nothing was sent, so nobody can
// have been granted the lease through it) suspends the zone at its fence instead of stopping
// it; the zone comes back at the same epoch once a renewal is confirmed again.
TEST_F(ZoneLeaseKeeperTest, UnreachableDirectorySuspendsTheZoneAtItsFenceAndResumesIt) {
  FakeHost host;
  FaultyDirectory faulty(dir_, clock_);
  faulty.failure = StatusCode::kUnavailable;
  ZoneLeaseKeeperOptions o = Options("A", "10.0.0.1:7000");
  o.pool = {"town"};
  auto a = Keeper(o, host, &faulty);
  ASSERT_TRUE(a->Register().ok());
  a->Tick();
  ASSERT_THAT(a->held(), ElementsAre(Pair("town", 1u)));

  faulty.fail_renew = true;
  faulty.fail_claim = true;
  Advance(kTtlMs / 3);
  a->Tick();
  Advance(kTtlMs / 3);
  a->Tick();
  EXPECT_THAT(host.suspends, IsEmpty()) << "still well inside the lease";
  Advance(kTtlMs / 3 - kFenceMs);  // at the fence, before the directory's deadline
  a->Tick();
  EXPECT_THAT(host.stops, IsEmpty()) << "an unreachable directory does not stop the zone";
  EXPECT_THAT(host.suspends, ElementsAre("town"));
  EXPECT_THAT(a->held(), IsEmpty());
  EXPECT_THAT(a->suspended(), ElementsAre(Pair("town", 1u)));
  EXPECT_FALSE(a->standby());
  EXPECT_EQ(LogCount("lease fence: directory unreachable, zone continues in single-shard mode"), 1);
  a->Tick();  // still unreachable: nothing changes, nothing is logged twice
  EXPECT_THAT(host.suspends, ElementsAre("town"));
  EXPECT_THAT(host.resumes, IsEmpty());

  faulty.fail_renew = false;
  faulty.fail_claim = false;
  a->Tick();  // the lease is still A's at epoch 1 (its deadline is ahead): confirmed, resumed
  EXPECT_THAT(host.resumes, ElementsAre(Pair("town", 1u)));
  EXPECT_THAT(a->held(), ElementsAre(Pair("town", 1u)));
  EXPECT_THAT(a->suspended(), IsEmpty());
  EXPECT_THAT(host.stops, IsEmpty());
  EXPECT_EQ(LogCount("lease confirmed again: zone leaves single-shard mode"), 1);
}

// A lease that lapsed while the directory was out of reach is won again (a new tenure) if it is
// still free; one a peer won meanwhile stops the suspended zone.
TEST_F(ZoneLeaseKeeperTest, SuspendedZoneIsReclaimedIfFreeAndStoppedIfAPeerWonIt) {
  FakeHost host, peer_host;
  FaultyDirectory faulty(dir_, clock_);
  faulty.failure = StatusCode::kUnavailable;
  ZoneLeaseKeeperOptions o = Options("A", "10.0.0.1:7000");
  o.pool = {"arena", "town"};
  auto a = Keeper(o, host, &faulty);
  ASSERT_TRUE(a->Register().ok());
  a->Tick();
  ASSERT_EQ(a->held().size(), 2u);
  faulty.fail_renew = true;
  faulty.fail_claim = true;
  for (int pass = 0; pass < 4; ++pass) {  // past every deadline: both leases lapse
    Advance(kTtlMs / 3);
    a->Tick();
  }
  ASSERT_EQ(a->suspended().size(), 2u);
  ASSERT_THAT(host.stops, IsEmpty());

  ZoneLeaseKeeperOptions peer = Options("B", "10.0.0.2:7000");
  peer.pool = {"town"};
  auto b = Keeper(peer, peer_host);
  ASSERT_TRUE(b->Register().ok());
  b->Tick();
  ASSERT_EQ(Owner("town")->shard_id, "B");

  faulty.fail_renew = false;
  faulty.fail_claim = false;
  a->Tick();
  ASSERT_EQ(host.resumes.size(), 1u);
  EXPECT_EQ(host.resumes[0].first, "arena");
  EXPECT_EQ(a->held().at("arena"), host.resumes[0].second);
  EXPECT_EQ(Owner("arena")->shard_id, "A");
  ASSERT_EQ(host.stops.size(), 1u);
  EXPECT_EQ(host.stops[0].zone, "town");
  EXPECT_EQ(host.stops[0].why, "lease taken by a peer while cut off from the directory");
  EXPECT_THAT(a->suspended(), IsEmpty());
  EXPECT_EQ(LogCount("lease lost while cut off from the directory: stopping zone"), 1);
}

// Each confirmed renewal moves the local deadline to (send time + granted TTL), so an outage
// that starts later is measured from the last confirmation, not from the claim.
TEST_F(ZoneLeaseKeeperTest, ConfirmedRenewalPushesTheFenceForward) {
  FakeHost host;
  FaultyDirectory faulty(dir_, clock_);
  ZoneLeaseKeeperOptions o = Options("A", "10.0.0.1:7000");
  o.pool = {"town"};
  auto a = Keeper(o, host, &faulty);
  ASSERT_TRUE(a->Register().ok());
  a->Tick();
  Advance(kTtlMs / 3);
  a->Tick();
  Advance(kTtlMs / 3);
  const Instant last_confirmed = clock_.Now();
  a->Tick();

  faulty.fail_renew = true;
  Advance(kTtlMs - kFenceMs - 1);  // past the claim's own deadline, inside the last renewal's
  a->Tick();
  EXPECT_THAT(host.stops, IsEmpty());
  Advance(1);
  a->Tick();
  ASSERT_EQ(host.stops.size(), 1u);
  EXPECT_EQ(clock_.Now(), last_confirmed + Millis(kTtlMs - kFenceMs));
}

// A directory that answers slowly must not keep a zone past its fence while the pass is busy
// renewing the zones before it.
TEST_F(ZoneLeaseKeeperTest, SlowRenewalsStillStopEveryZoneAtItsFence) {
  FakeHost host;
  FaultyDirectory faulty(dir_, clock_);
  ZoneLeaseKeeperOptions o = Options("A", "10.0.0.1:7000");
  o.pool = {"arena", "town"};
  auto a = Keeper(o, host, &faulty);
  ASSERT_TRUE(a->Register().ok());
  const Instant deadline = clock_.Now() + Millis(kTtlMs);
  a->Tick();
  ASSERT_EQ(a->held().size(), 2u);

  faulty.fail_renew = true;
  faulty.renew_delay = Millis(3'000);
  faulty.fail_claim = true;
  Advance(10'000);  // fences at 12.5 s; the first renew ends at 13 s
  a->Tick();
  ASSERT_EQ(host.stops.size(), 2u);
  EXPECT_EQ(faulty.renew_calls["arena"], 1);
  EXPECT_EQ(faulty.renew_calls["town"], 0) << "its fence passed while arena's renew hung";
  EXPECT_LT(clock_.Now(), deadline);
}

TEST_F(ZoneLeaseKeeperTest, StartZoneFailureReleasesTheLease) {
  FakeHost host, peer_host;
  host.refuse = {"crypt"};
  auto a = Keeper(Options("A", "10.0.0.1:7000"), host);
  ASSERT_TRUE(a->Register().ok());
  a->Tick();
  EXPECT_THAT(a->held(), ElementsAre(Pair("arena", 1u), Pair("town", 1u)));
  EXPECT_FALSE(Owner("crypt").has_value()) << "the lease went back at once";
  // A peer can take it straight away, at the next epoch.
  auto b = Keeper(Options("B", "10.0.0.2:7000"), peer_host);
  ASSERT_TRUE(b->Register().ok());
  b->Tick();
  EXPECT_THAT(b->held(), ElementsAre(Pair("crypt", 2u)));
}

// The directory lost its epochs (an empty Redis) while the store's zone fence kept the last
// tenure's: the zone refuses to start at the stale epoch, the lease goes back, and the next pass
// claims it again above the fence.
TEST_F(ZoneLeaseKeeperTest, AStaleEpochIsClaimedAgainAboveTheDurableFence) {
  FakeHost host;
  host.durable_fence["town"] = 8;
  ZoneLeaseKeeperOptions o = Options("A", "10.0.0.1:7000");
  o.pool = {"town"};
  auto a = Keeper(o, host);
  ASSERT_TRUE(a->Register().ok());
  a->Tick();
  EXPECT_THAT(a->held(), IsEmpty());
  EXPECT_THAT(host.hosting, IsEmpty());
  EXPECT_FALSE(Owner("town").has_value()) << "the refused tenure's lease was released";
  Advance(kTtlMs / 3);
  a->Tick();
  EXPECT_THAT(a->held(), ElementsAre(Pair("town", 9u)));
  EXPECT_THAT(host.hosting, ElementsAre("town"));
  EXPECT_EQ(Owner("town")->epoch, 9u);
}

// A standby does not wait for its next pass to adopt an orphan: it watches when the owner's
// lease would lapse and tries right after.
TEST_F(ZoneLeaseKeeperTest, AStandbyWatchesWhenAPeersLeaseWouldLapse) {
  FakeHost host, standby_host;
  ZoneLeaseKeeperOptions o = Options("A", "10.0.0.1:7000");
  o.pool = {"town"};
  auto a = Keeper(o, host);
  ASSERT_TRUE(a->Register().ok());
  const Instant granted = clock_.Now();
  a->Tick();
  ZoneLeaseKeeperOptions s = Options("B", "10.0.0.2:7000");
  s.pool = {"town"};
  auto b = Keeper(s, standby_host);
  ASSERT_TRUE(b->Register().ok());
  EXPECT_FALSE(b->EarliestWatchedExpiry().has_value());
  Advance(4'000);
  b->Tick();
  ASSERT_TRUE(b->EarliestWatchedExpiry().has_value());
  EXPECT_EQ(*b->EarliestWatchedExpiry(),
            granted + Millis(kTtlMs + ZoneLeaseKeeper::kExpiryMarginMs));
  // A renews: the next look moves the watch with it.
  Advance(1'000);
  const Instant renewed = clock_.Now();
  a->Tick();
  b->Tick();
  EXPECT_EQ(*b->EarliestWatchedExpiry(),
            renewed + Millis(kTtlMs + ZoneLeaseKeeper::kExpiryMarginMs));
  // A is gone: at the watched instant B wins the zone.
  clock_.Advance(*b->EarliestWatchedExpiry() - clock_.Now());
  b->Tick();
  EXPECT_THAT(b->held(), ElementsAre(Pair("town", 2u)));
  EXPECT_FALSE(b->EarliestWatchedExpiry().has_value());
}

TEST_F(ZoneLeaseKeeperTest, ReadoptionRestartsRenewal) {
  FakeHost host_a, host_b;
  ZoneLeaseKeeperOptions oa = Options("A", "10.0.0.1:7000");
  ZoneLeaseKeeperOptions ob = Options("B", "10.0.0.2:7000");
  oa.pool = ob.pool = {"town"};
  auto a = Keeper(oa, host_a);
  auto b = Keeper(ob, host_b);
  ASSERT_TRUE(a->Register().ok());
  ASSERT_TRUE(b->Register().ok());
  a->Tick();
  b->Tick();
  ASSERT_THAT(a->held(), ElementsAre(Pair("town", 1u)));

  // A -> B: A stalls past its lease; B adopts.
  Advance(kTtlMs + 1);
  b->Tick();
  ASSERT_THAT(b->held(), ElementsAre(Pair("town", 2u)));
  a->Tick();
  ASSERT_TRUE(a->standby());

  // B -> A: now B stalls; A adopts at a third epoch.
  Advance(kTtlMs + 1);
  a->Tick();
  ASSERT_THAT(a->held(), ElementsAre(Pair("town", 3u)));
  EXPECT_THAT(host_a.starts, ElementsAre(Pair("town", 1u), Pair("town", 3u)));

  // A renews the new tenure: many lease lengths later it still holds it, and B (now ticking
  // again) stops its stale copy and never wins it back.
  for (int i = 0; i < 12; ++i) {
    Advance(kTtlMs / 3);
    a->Tick();
    b->Tick();
  }
  ASSERT_TRUE(Owner("town").has_value());
  EXPECT_EQ(Owner("town")->shard_id, "A");
  EXPECT_EQ(Owner("town")->epoch, 3u);
  EXPECT_THAT(a->held(), ElementsAre(Pair("town", 3u)));
  EXPECT_EQ(host_a.stops.size(), 1u) << "only the A -> B move";
  EXPECT_TRUE(b->standby());
  EXPECT_EQ(host_b.stops.size(), 1u);
}

TEST_F(ZoneLeaseKeeperTest, StopWithReleaseFreesEveryZoneAndTheId) {
  FakeHost host_a, host_b;
  auto a = Keeper(Options("A", "10.0.0.1:7000"), host_a);
  ASSERT_TRUE(a->Register().ok());
  a->Tick();
  ASSERT_EQ(a->held().size(), 3u);
  a->Stop(/*release=*/true);
  EXPECT_TRUE(a->standby());
  EXPECT_THAT(host_a.stops, IsEmpty()) << "the owner stopped its zones before releasing";
  for (const char* zone : {"arena", "crypt", "town"}) EXPECT_FALSE(Owner(zone).has_value());
  auto shards = dir_.ListShards();
  ASSERT_TRUE(shards.ok());
  EXPECT_THAT(*shards, IsEmpty());

  // No lapse to wait for: a peer takes everything on its next pass.
  auto b = Keeper(Options("B", "10.0.0.2:7000"), host_b);
  ASSERT_TRUE(b->Register().ok());
  b->Tick();
  EXPECT_THAT(b->held(), ElementsAre(Pair("arena", 2u), Pair("crypt", 2u), Pair("town", 2u)));
}

TEST_F(ZoneLeaseKeeperTest, ForgetAfterAHandoffStopsNothing) {
  FakeHost host_a, host_b;
  ZoneLeaseKeeperOptions oa = Options("A", "10.0.0.1:7000");
  ZoneLeaseKeeperOptions ob = Options("B", "10.0.0.2:7000");
  oa.pool = ob.pool = {"town"};
  auto a = Keeper(oa, host_a);
  ASSERT_TRUE(a->Register().ok());
  a->Tick();
  auto moved = dir_.TransferZone("town", "A", 1, "B", kTtlMs);
  ASSERT_TRUE(moved.ok());
  a->Forget("town");
  EXPECT_TRUE(a->standby());
  Advance(kTtlMs / 3);
  a->Tick();
  EXPECT_THAT(host_a.stops, IsEmpty());
  EXPECT_TRUE(a->standby()) << "the peer's live lease is skipped";
  EXPECT_EQ(Owner("town")->shard_id, "B");
}

TEST_F(ZoneLeaseKeeperTest, ReportsOccupancyAndMetrics) {
  FakeHost host;
  auto a = Keeper(Options("A", "10.0.0.1:7000"), host);
  a->SetOccupancySource([] {
    return std::vector<directory::ZoneCount>{{"arena", 2}, {"town", 5}};
  });
  ASSERT_TRUE(a->Register().ok());
  a->Tick();
  auto occupancy = dir_.ListOccupancy();
  ASSERT_TRUE(occupancy.ok());
  ASSERT_EQ(occupancy->size(), 1u);
  EXPECT_EQ((*occupancy)[0].shard, "A");
  EXPECT_EQ((*occupancy)[0].Total(), 7);

  const std::string text = metrics_.RenderText();
  EXPECT_THAT(text, HasSubstr("telos_shard_zones_held 3"));
  EXPECT_THAT(text, HasSubstr("telos_shard_zone_claims_total 3"));
  EXPECT_THAT(text, HasSubstr("telos_shard_zone_losses_total 0"));
  EXPECT_EQ(LogCount("registered shard"), 1);
}

// The keeper's own thread, in real time (the one test here that needs it): when renewals stop
// being confirmed it wakes at the fence, between passes, and stops the zone while the directory
// still holds the lease as this shard's.
class FencedHost final : public ZoneHosting {
 public:
  explicit FencedHost(directory::Directory& dir) : dir_(dir) {}
  Status StartZone(const std::string&, uint64_t) override { return Status::Ok(); }
  void SuspendZone(const std::string&, const std::string&) override {}
  Status ResumeZone(const std::string&, uint64_t) override { return Status::Ok(); }
  void StopZone(const std::string& zone, const std::string& why) override {
    auto owner = dir_.OwnerOfZone(zone);
    std::lock_guard lock(mu_);
    stopped_ = why;
    still_ours_ = owner.ok() && owner->has_value() && (*owner)->shard_id == "A";
  }
  std::optional<std::string> stopped() const {
    std::lock_guard lock(mu_);
    return stopped_;
  }
  bool still_ours() const {
    std::lock_guard lock(mu_);
    return still_ours_;
  }

 private:
  directory::Directory& dir_;
  mutable std::mutex mu_;
  std::optional<std::string> stopped_;
  bool still_ours_ = false;
};

TEST(ZoneLeaseKeeperThread, StopsAnUnconfirmableZoneAtItsFenceBetweenPasses) {
  SystemClock clock;
  ManualClock unused;
  directory::MemoryDirectory dir(clock);
  FaultyDirectory faulty(dir, unused);
  FencedHost host(dir);
  Logger log("world", LogLevel::kError);
  Metrics metrics;
  ZoneLeaseKeeperOptions o;
  o.shard_id = "A";
  o.endpoint = "10.0.0.1:7000";
  o.pool = {"town"};
  o.lease_ttl_ms = 1'200;  // passes every 400 ms; fence 200 ms before the deadline
  o.shard_ttl_ms = 1'200;
  ZoneLeaseKeeper keeper(o, faulty, host, clock, log, metrics);
  ASSERT_TRUE(keeper.Register().ok());
  keeper.Start();
  const auto poll = [](auto pred, std::chrono::milliseconds within) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    while (!pred()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  };
  ASSERT_TRUE(poll([&] { return keeper.held().size() == 1; }, std::chrono::milliseconds(2'000)));
  faulty.fail_renew = true;
  faulty.fail_claim = true;
  ASSERT_TRUE(poll([&] { return host.stopped().has_value(); }, std::chrono::milliseconds(3'000)));
  keeper.Stop(/*release=*/false);
  EXPECT_EQ(host.stopped(), "lease not confirmable");
  EXPECT_TRUE(host.still_ours()) << "the zone ran on after its lease could have expired";
  EXPECT_TRUE(keeper.standby());
}

}  // namespace
}  // namespace telos::shard

namespace telos::shard {
namespace {

// A draining peer's Adopt arrives on a pool thread while this keeper's own thread runs its
// passes: the host is still driven from that one thread (ZoneHosting's contract), never from
// the caller's, so an adoption and a pass cannot start the zone at once.
TEST_F(ZoneLeaseKeeperTest, AnAdoptionIsCarriedOutByTheKeepersOwnThread) {
  FakeHost host_a, host_b;
  auto [a, b] = HolderAndPeer(host_a, host_b);
  b->Start();
  auto moved = dir_.TransferZone("town", "A", 1, "B", kTtlMs);
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  a->Forget("town");
  ASSERT_TRUE(b->Adopt("town", moved->epoch).ok());
  EXPECT_THAT(b->held(), Contains(Pair("town", moved->epoch)));
  b->Stop(/*release=*/false);  // joins the thread: the host's records are ours to read
  ASSERT_FALSE(host_b.start_threads.empty());
  for (const std::thread::id id : host_b.start_threads) {
    EXPECT_NE(id, std::this_thread::get_id()) << "the caller's thread drove the host";
  }
  EXPECT_EQ(
      std::set<std::thread::id>(host_b.start_threads.begin(), host_b.start_threads.end()).size(),
      1u);
  EXPECT_TRUE(host_b.hosting.contains("town"));
}

// Once the keeper has stopped (its shard is freezing its zones out), an adoption is refused: a
// zone started now would be neither drained nor saved by the stop.
TEST_F(ZoneLeaseKeeperTest, AnAdoptionAfterStopIsRefused) {
  FakeHost host_a, host_b;
  auto [a, b] = HolderAndPeer(host_a, host_b);
  b->Start();
  b->Stop(/*release=*/false);
  auto moved = dir_.TransferZone("town", "A", 1, "B", kTtlMs);
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_EQ(b->Adopt("town", moved->epoch).code(), StatusCode::kUnavailable);
  EXPECT_FALSE(host_b.hosting.contains("town"));
  EXPECT_THAT(b->held(), IsEmpty());
}

// A drain moves a lease in one fenced step; the peer adopts it at the new epoch, hosts the zone
// at once and renews it from then on, and nobody can adopt at a stale epoch.
TEST_F(ZoneLeaseKeeperTest, APeerAdoptsATransferredLeaseAndKeepsRenewingIt) {
  FakeHost host_a, host_b;
  auto [a, b] = HolderAndPeer(host_a, host_b);
  b->Tick();
  ASSERT_TRUE(b->standby());

  auto moved = dir_.TransferZone("town", "A", 1, "B", kTtlMs);
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  a->Forget("town");
  EXPECT_EQ(b->Adopt("town", moved->epoch - 1).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(b->Adopt("town", moved->epoch).ok());
  EXPECT_THAT(host_b.starts, ElementsAre(Pair("town", moved->epoch)));
  EXPECT_THAT(b->held(), ElementsAre(Pair("town", moved->epoch)));
  EXPECT_FALSE(b->standby());

  // Passes on both sides: B keeps the zone alive past its first TTL; A never claims it back.
  for (int i = 0; i < 6; ++i) {
    Advance(kTtlMs / 3);
    a->Tick();
    b->Tick();
  }
  EXPECT_EQ(Owner("town")->shard_id, "B");
  EXPECT_EQ(Owner("town")->epoch, moved->epoch);
  EXPECT_THAT(b->held(), ElementsAre(Pair("town", moved->epoch)));
  EXPECT_THAT(a->held(), ElementsAre(Pair("arena", 1u), Pair("crypt", 1u)));
}

}  // namespace
}  // namespace telos::shard
