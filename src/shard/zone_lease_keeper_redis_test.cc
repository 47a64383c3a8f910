// ZoneLeaseKeeper against a real Redis (RedisDirectory), with real threads and real time: short
// leases (600 ms), a keeper that dies without releasing, and a standby that must adopt its
// zones within a lease TTL plus a second.
//
// Needs TELOS_REDIS (eval "$(scripts/services env)"). Without it every test here fails: an
// integration test that silently skips proves nothing. Each test works under its own random key
// namespace and deletes it afterwards.
#include <hiredis/hiredis.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "telos/directory/forwarding_directory.h"
#include "telos/directory/redis_directory.h"
#include "telos/shard/zone_lease_keeper.h"

namespace telos::shard {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;
using ::testing::ElementsAre;
using ::testing::Pair;

constexpr int64_t kTtlMs = 600;

std::string RandomNamespace() {
  std::random_device rd;
  std::mt19937_64 gen((uint64_t{rd()} << 32) ^ rd());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "test-keeper-";
  for (int i = 0; i < 16; ++i) out += kHex[gen() % 16];
  return out;
}

Result<directory::RedisOptions> OptionsFromEnv() {
  const char* url = std::getenv("TELOS_REDIS");
  if (url == nullptr || *url == '\0') {
    return Status::FailedPrecondition(
        "TELOS_REDIS is not set: start the services and run eval \"$(scripts/services env)\"");
  }
  return directory::RedisOptionsFromUrl(url);
}

// Deletes every key under "{ns}:" with a plain hiredis connection.
void DeleteNamespace(const directory::RedisOptions& o, const std::string& ns) {
  timeval tv{1, 0};
  redisContext* ctx = redisConnectWithTimeout(o.host.c_str(), o.port, tv);
  if (ctx == nullptr) return;
  if (ctx->err == 0) {
    const std::string pattern = "{" + ns + "}:*";
    std::string cursor = "0";
    do {
      auto* r = static_cast<redisReply*>(
          redisCommand(ctx, "SCAN %s MATCH %s COUNT 1000", cursor.c_str(), pattern.c_str()));
      if (r == nullptr) break;
      if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
        freeReplyObject(r);
        break;
      }
      cursor.assign(r->element[0]->str, r->element[0]->len);
      for (size_t i = 0; i < r->element[1]->elements; ++i) {
        const redisReply* key = r->element[1]->element[i];
        auto* d = static_cast<redisReply*>(redisCommand(ctx, "DEL %b", key->str, key->len));
        if (d != nullptr) freeReplyObject(d);
      }
      freeReplyObject(r);
    } while (cursor != "0");
  }
  redisFree(ctx);
}

template <typename F>
bool PollUntil(F pred, milliseconds within) {
  const auto deadline = steady_clock::now() + within;
  while (true) {
    if (pred()) return true;
    if (steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(5));
  }
}

// The world host, called from a keeper's thread and read from the test's.
class FakeHost final : public ZoneHosting {
 public:
  Status StartZone(const std::string& zone, uint64_t epoch) override {
    std::lock_guard lock(mu_);
    hosting_[zone] = epoch;
    return Status::Ok();
  }
  void StopZone(const std::string& zone, const std::string& why) override {
    std::lock_guard lock(mu_);
    hosting_.erase(zone);
    stops_.push_back(zone + ": " + why);
  }
  void SuspendZone(const std::string& zone, const std::string& why) override {
    std::lock_guard lock(mu_);
    stops_.push_back(zone + " suspended: " + why);
  }
  Status ResumeZone(const std::string& zone, uint64_t epoch) override {
    std::lock_guard lock(mu_);
    hosting_[zone] = epoch;
    return Status::Ok();
  }
  std::map<std::string, uint64_t> hosting() const {
    std::lock_guard lock(mu_);
    return hosting_;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, uint64_t> hosting_;
  std::vector<std::string> stops_;
};

// Forwards to a directory and keeps the longest a renewal took, wall-clock, caller's view (the
// wait for a connection included).
class TimedRenewals final : public directory::ForwardingDirectory {
 public:
  using ForwardingDirectory::ForwardingDirectory;
  Result<directory::LeaseGrant> RenewZone(std::string_view zone, std::string_view shard_id,
                                          uint64_t epoch, int64_t ttl_ms) override {
    const auto started = steady_clock::now();
    auto grant = ForwardingDirectory::RenewZone(zone, shard_id, epoch, ttl_ms);
    const int64_t took_ms =
        std::chrono::duration_cast<milliseconds>(steady_clock::now() - started).count();
    std::lock_guard lock(mu_);
    ++renewals_;
    if (!grant.ok()) ++failed_;
    longest_ms_ = std::max(longest_ms_, took_ms);
    return grant;
  }
  int renewals() const {
    std::lock_guard lock(mu_);
    return renewals_;
  }
  int failed() const {
    std::lock_guard lock(mu_);
    return failed_;
  }
  int64_t longest_ms() const {
    std::lock_guard lock(mu_);
    return longest_ms_;
  }

 private:
  mutable std::mutex mu_;
  int renewals_ = 0;
  int failed_ = 0;
  int64_t longest_ms_ = 0;
};

class ZoneLeaseKeeperRedisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(options_.ok()) << options_.status().ToString();
    options_->key_namespace = namespace_;
    // Keep every call well inside the 100 ms fence margin of a 600 ms lease.
    options_->connect_timeout_ms = 100;
    options_->command_timeout_ms = 80;
    options_->reconnect_backoff_max_ms = 100;
    directory::RedisDirectory probe(*options_, clock_);
    ASSERT_TRUE(probe.Ping().ok()) << "Redis at TELOS_REDIS does not answer";
  }
  void TearDown() override {
    if (options_.ok()) DeleteNamespace(*options_, namespace_);
  }

  // One keeper with its own directory connection (the keeper's thread owns it).
  struct Shard {
    std::unique_ptr<directory::RedisDirectory> dir;
    FakeHost host;
    Logger log{"world", LogLevel::kWarn};
    Metrics metrics;
    std::unique_ptr<ZoneLeaseKeeper> keeper;
    std::atomic<int> passes{0};
  };
  std::unique_ptr<Shard> NewShard(const std::string& id) {
    auto s = std::make_unique<Shard>();
    s->dir = std::make_unique<directory::RedisDirectory>(*options_, clock_);
    ZoneLeaseKeeperOptions o;
    o.shard_id = id;
    o.endpoint = id + ".test:7000";
    o.pool = {"town", "arena", "crypt"};
    o.lease_ttl_ms = kTtlMs;
    o.shard_ttl_ms = kTtlMs;
    s->keeper = std::make_unique<ZoneLeaseKeeper>(o, *s->dir, s->host, clock_, s->log, s->metrics);
    // The occupancy source runs once per pass: a pass counter the test can wait on.
    Shard* raw = s.get();
    s->keeper->SetOccupancySource([raw] {
      raw->passes.fetch_add(1);
      return std::vector<directory::ZoneCount>{};
    });
    return s;
  }

  SystemClock clock_;
  std::string namespace_ = RandomNamespace();
  Result<directory::RedisOptions> options_ = OptionsFromEnv();
};

TEST_F(ZoneLeaseKeeperRedisTest, StandbyAdoptsZonesOfAKeeperThatDied) {
  auto a = NewShard("A");
  auto b = NewShard("B");
  ASSERT_TRUE(a->keeper->Register().ok());
  a->keeper->Start();
  ASSERT_TRUE(PollUntil([&] { return a->keeper->held().size() == 3; }, milliseconds(2'000)));

  ASSERT_TRUE(b->keeper->Register().ok());
  b->keeper->Start();
  // Several of B's passes, each over A's renewed leases: B stays a standby.
  ASSERT_TRUE(PollUntil([&] { return b->passes.load() >= 4; }, milliseconds(3'000)));
  EXPECT_TRUE(b->keeper->standby());
  EXPECT_THAT(a->keeper->held(),
              ElementsAre(Pair("arena", 1u), Pair("crypt", 1u), Pair("town", 1u)));

  // A's thread dies without releasing anything.
  a->keeper->Stop(/*release=*/false);
  const auto died = steady_clock::now();
  ASSERT_TRUE(
      PollUntil([&] { return b->keeper->held().size() == 3; }, milliseconds(kTtlMs + 1'000)))
      << "B did not adopt the orphaned zones within TTL + 1 s";
  const auto adopted_ms =
      std::chrono::duration_cast<milliseconds>(steady_clock::now() - died).count();
  EXPECT_THAT(b->keeper->held(),
              ElementsAre(Pair("arena", 2u), Pair("crypt", 2u), Pair("town", 2u)));
  EXPECT_EQ(b->host.hosting(), b->keeper->held());
  RecordProperty("adopted_after_ms", std::to_string(adopted_ms));

  // B renews what it adopted: several lease lengths later it still holds every zone.
  const int passes = b->passes.load();
  ASSERT_TRUE(PollUntil([&] { return b->passes.load() >= passes + 9; }, milliseconds(3'000)));
  EXPECT_THAT(b->keeper->held(),
              ElementsAre(Pair("arena", 2u), Pair("crypt", 2u), Pair("town", 2u)));

  b->keeper->Stop(/*release=*/true);
  directory::RedisDirectory check(*options_, clock_);
  for (const char* zone : {"arena", "crypt", "town"}) {
    auto owner = check.OwnerOfZone(zone);
    ASSERT_TRUE(owner.ok()) << owner.status().ToString();
    EXPECT_FALSE(owner->has_value()) << zone;
  }
}

TEST_F(ZoneLeaseKeeperRedisTest, ReleasedZonesAreTakenAtThePeersNextPass) {
  auto a = NewShard("A");
  auto b = NewShard("B");
  ASSERT_TRUE(a->keeper->Register().ok());
  a->keeper->Start();
  ASSERT_TRUE(PollUntil([&] { return a->keeper->held().size() == 3; }, milliseconds(2'000)));
  ASSERT_TRUE(b->keeper->Register().ok());
  b->keeper->Start();
  ASSERT_TRUE(PollUntil([&] { return b->passes.load() >= 2; }, milliseconds(2'000)));
  ASSERT_TRUE(b->keeper->standby());

  a->keeper->Stop(/*release=*/true);
  // No lapse to wait out: one pass interval (TTL/3) plus slack.
  ASSERT_TRUE(
      PollUntil([&] { return b->keeper->held().size() == 3; }, milliseconds(kTtlMs / 3 + 300)));
  EXPECT_THAT(b->keeper->held(),
              ElementsAre(Pair("arena", 2u), Pair("crypt", 2u), Pair("town", 2u)));
  b->keeper->Stop(/*release=*/true);
}

// Spec 000: a renewal must never wait behind other traffic past the local fence. One directory
// instance carries everything a busy shard sends, as in `telos world`: here threads write
// placement records back to back (a placement writer draining its queue) and more list a
// 3,000-player roster (reads of tens of milliseconds: /api/cluster, `who`) while the keeper
// renews on the same instance. Every renewal still completes within TTL/6, the margin of the
// local fence. On one shared connection the renewals waited 330-380 ms behind the queue.
TEST_F(ZoneLeaseKeeperRedisTest, RenewalsNeverWaitBehindASaturatedDirectory) {
  directory::RedisDirectory shared(*options_, clock_);
  TimedRenewals timed(shared);
  FakeHost host;
  Logger log{"world", LogLevel::kWarn};
  Metrics metrics;
  ZoneLeaseKeeperOptions o;
  o.shard_id = "A";
  o.endpoint = "A.test:7000";
  o.pool = {"town", "arena", "crypt"};
  o.lease_ttl_ms = kTtlMs;
  o.shard_ttl_ms = kTtlMs;
  ZoneLeaseKeeper keeper(o, timed, host, clock_, log, metrics);
  ASSERT_TRUE(keeper.Register().ok());
  keeper.Start();
  ASSERT_TRUE(PollUntil([&] { return keeper.held().size() == 3; }, milliseconds(2'000)));

  // A roster as a busy fleet has: listing it (an operator's /api/cluster, `who`) is a slow read.
  constexpr int kPresent = 3'000;
  for (int i = 0; i < kPresent; ++i) {
    ASSERT_TRUE(shared.SetPresence("p" + std::to_string(i), "gate-1", "A", 60'000).ok());
  }
  constexpr int kWriters = 2, kReaders = 6;
  std::atomic<bool> stop{false};
  std::atomic<int64_t> written{0}, listed{0};
  std::vector<std::thread> load;
  for (int w = 0; w < kWriters; ++w) {
    load.emplace_back([&, w] {
      directory::Placement placement{"town", 1, "nonce", "A"};
      for (int64_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        const std::string player = "p" + std::to_string(w) + "-" + std::to_string(i % 5'000);
        placement.epoch = static_cast<uint64_t>(i + 1);
        if (shared.RegisterPlacement(player, placement).ok()) written.fetch_add(1);
      }
    });
  }
  for (int r = 0; r < kReaders; ++r) {
    load.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        if (shared.ListPresence().ok()) listed.fetch_add(1);
      }
    });
  }
  const int renewals_before = timed.renewals();
  // A dozen renewals of each zone (one pass every TTL/3), all under the load.
  const bool renewed = PollUntil([&] { return timed.renewals() >= renewals_before + 36; },
                                 milliseconds(kTtlMs * 12 + 2'000));
  stop = true;
  for (auto& thread : load) thread.join();
  keeper.Stop(/*release=*/true);

  ASSERT_TRUE(renewed) << timed.renewals() - renewals_before << " renewals under load";
  // The shared connection was busy the whole time (its own callers queue on it).
  EXPECT_GE(written.load(), 100) << "the writes did not run: the test proves nothing";
  EXPECT_GE(listed.load(), 30) << "the slow reads did not run: the test proves nothing";
  EXPECT_EQ(timed.failed(), 0);
  EXPECT_LE(timed.longest_ms(), kTtlMs / 6) << "a renewal waited behind the other writes";
  EXPECT_EQ(host.hosting().size(), 3u) << "a zone was stopped: its renewal came too late";
  RecordProperty("longest_renewal_ms", std::to_string(timed.longest_ms()));
  RecordProperty("placements_written", std::to_string(written.load()));
  RecordProperty("rosters_listed", std::to_string(listed.load()));
}

}  // namespace
}  // namespace telos::shard
