// RedisCheckpointStore against a real Redis (label `integration`): the CheckpointStore
// conformance suite plus what is specific to Redis (key layout, TTL, script reload, outages).
//
// The server comes from TELOS_REDIS (eval "$(scripts/services env)"); without it every test
// FAILS, never skips. Each test works in its own random key namespace and deletes its keys.

#include "telos/store/redis_checkpoint_store.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint_conformance.h"
#include "telos/base/assert.h"

namespace telos::store {
namespace {

// The options of the test server, or nullopt after recording a failure.
std::optional<RedisCheckpointStoreOptions> ServerOptions() {
  const char* url = std::getenv("TELOS_REDIS");
  if (url == nullptr || *url == '\0') {
    ADD_FAILURE() << "TELOS_REDIS is not set: run eval \"$(scripts/services env)\" "
                     "(Redis integration tests fail rather than skip without a server)";
    return std::nullopt;
  }
  auto options = RedisCheckpointStoreOptionsFromUrl(url);
  if (!options.ok()) {
    ADD_FAILURE() << "TELOS_REDIS: " << options.status().ToString();
    return std::nullopt;
  }
  return *options;
}

std::string RandomNamespace() {
  std::random_device device;
  std::mt19937_64 rng((static_cast<uint64_t>(device()) << 32) ^ device());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string ns = "telos-test-";
  for (int i = 0; i < 16; ++i) ns += kHex[rng() % 16];
  return ns;
}

// A side connection for the tests' own commands, outside the store.
class SideConnection {
 public:
  explicit SideConnection(const RedisCheckpointStoreOptions& options)
      : ctx_(redisConnect(options.host.c_str(), options.port)) {
    RELEASE_ASSERT(ctx_ != nullptr && ctx_->err == 0, "cannot reach the test redis");
  }
  ~SideConnection() { redisFree(ctx_); }
  SideConnection(const SideConnection&) = delete;
  SideConnection& operator=(const SideConnection&) = delete;

  // Runs a command; returns its integer answer, or its string answer parsed as 0.
  long long Integer(const std::vector<std::string>& argv) {
    redisReply* reply = Run(argv);
    const long long out = reply->type == REDIS_REPLY_INTEGER ? reply->integer : 0;
    freeReplyObject(reply);
    return out;
  }
  // Runs a command; returns its string or status answer ("" otherwise).
  std::string Text(const std::vector<std::string>& argv) {
    redisReply* reply = Run(argv);
    std::string out;
    if (reply->type == REDIS_REPLY_STRING || reply->type == REDIS_REPLY_STATUS) {
      out.assign(reply->str, reply->len);
    }
    freeReplyObject(reply);
    return out;
  }
  // Deletes every key starting with `prefix`.
  void DeleteKeys(const std::string& prefix) {
    std::string cursor = "0";
    do {
      redisReply* reply = Run({"SCAN", cursor, "MATCH", prefix + "*", "COUNT", "1000"});
      RELEASE_ASSERT(reply->type == REDIS_REPLY_ARRAY && reply->elements == 2, "bad SCAN answer");
      cursor.assign(reply->element[0]->str, reply->element[0]->len);
      for (size_t i = 0; i < reply->element[1]->elements; ++i) {
        const redisReply* key = reply->element[1]->element[i];
        (void)Integer({"DEL", std::string(key->str, key->len)});
      }
      freeReplyObject(reply);
    } while (cursor != "0");
  }

 private:
  redisReply* Run(const std::vector<std::string>& argv) {
    std::vector<const char*> ptrs;
    std::vector<size_t> lens;
    for (const std::string& a : argv) {
      ptrs.push_back(a.data());
      lens.push_back(a.size());
    }
    void* raw = redisCommandArgv(ctx_, static_cast<int>(argv.size()), ptrs.data(), lens.data());
    RELEASE_ASSERT(raw != nullptr, "the test redis did not answer");
    return static_cast<redisReply*>(raw);
  }

  redisContext* ctx_;
};

// ------------------------------------------------------------------ the conformance suite

class RedisCheckpointBackend final : public CheckpointBackend {
 public:
  RedisCheckpointBackend(RedisCheckpointStoreOptions options, const Clock& clock) : side_(options) {
    options.key_namespace = RandomNamespace();
    prefix_ = "{" + options.key_namespace + "}:";
    auto created = RedisCheckpointStore::Create(std::move(options), clock);
    RELEASE_ASSERT(created.ok(), created.status().ToString());
    store_ = std::move(created).value();
  }
  ~RedisCheckpointBackend() override { side_.DeleteKeys(prefix_); }

  CheckpointStore& checkpoints() override { return *store_; }

 private:
  SideConnection side_;
  std::string prefix_;
  std::unique_ptr<RedisCheckpointStore> store_;
};

CheckpointBackendFactory RedisCheckpointFactory() {
  return {.name = "Redis", .make = [](const Clock& clock) -> std::unique_ptr<CheckpointBackend> {
            auto options = ServerOptions();
            if (!options.has_value()) return nullptr;
            return std::make_unique<RedisCheckpointBackend>(*options, clock);
          }};
}

INSTANTIATE_TEST_SUITE_P(Redis, CheckpointConformanceTest,
                         ::testing::Values(RedisCheckpointFactory()), CheckpointBackendName);

// ------------------------------------------------------------------ Redis specifics

Checkpoint Draft(std::string name, int64_t owner_epoch, int64_t state_version) {
  Checkpoint c;
  c.name = std::move(name);
  c.account_id = 7;
  c.owner_epoch = owner_epoch;
  c.state_version = state_version;
  c.zone_id = "town";
  c.room_id = "town.square";
  c.state_json = R"({"hp":20})";
  return c;
}

class RedisCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto options = ServerOptions();
    ASSERT_TRUE(options.has_value());
    options_ = *options;
    options_.key_namespace = RandomNamespace();
    side_ = std::make_unique<SideConnection>(options_);
  }
  void TearDown() override {
    if (side_ != nullptr) side_->DeleteKeys("{" + options_.key_namespace + "}:");
  }

  std::unique_ptr<RedisCheckpointStore> MakeStore(int64_t ttl_ms) {
    RedisCheckpointStoreOptions options = options_;
    options.checkpoint_ttl_ms = ttl_ms;
    auto created = RedisCheckpointStore::Create(options, clock_);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? std::move(created).value() : nullptr;
  }

  ManualClock clock_;
  RedisCheckpointStoreOptions options_;
  std::unique_ptr<SideConnection> side_;
};

TEST_F(RedisCheckpointTest, OneHashPerCharacterUnderTheNamespace) {
  auto store = MakeStore(RedisCheckpointStoreOptions::kCheckpointTtlMsDefault);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Put(Draft("Aldric", 3, 12)).ok());
  const std::string key = "{" + options_.key_namespace + "}:checkpoint:aldric";
  EXPECT_EQ(store->KeyOf("ALDRIC"), key);
  EXPECT_EQ(side_->Text({"TYPE", key}), "hash");
  EXPECT_EQ(side_->Text({"HGET", key, "name"}), "Aldric");
  EXPECT_EQ(side_->Text({"HGET", key, "owner_epoch"}), "3");
  EXPECT_EQ(side_->Text({"HGET", key, "state_version"}), "12");
  EXPECT_EQ(side_->Text({"HGET", key, "state_json"}), R"({"hp":20})");
}

TEST_F(RedisCheckpointTest, EveryPutSetsTheTtl) {
  constexpr int64_t kTtlMs = 60'000;
  auto store = MakeStore(kTtlMs);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Put(Draft("Aldric", 1, 1)).ok());
  const std::string key = store->KeyOf("Aldric");
  long long pttl = side_->Integer({"PTTL", key});
  EXPECT_GT(pttl, 0);
  EXPECT_LE(pttl, kTtlMs);
  // A refused put leaves the TTL alone; an accepted one renews it.
  (void)side_->Integer({"PEXPIRE", key, "5000"});
  EXPECT_EQ(store->Put(Draft("Aldric", 0, 1)).code(), StatusCode::kFailedPrecondition);
  EXPECT_LE(side_->Integer({"PTTL", key}), 5'000);
  ASSERT_TRUE(store->Put(Draft("Aldric", 1, 2)).ok());
  EXPECT_GT(side_->Integer({"PTTL", key}), 5'000);

  // TTL 0 keeps a checkpoint forever, and removes an expiry an earlier put set.
  auto forever = MakeStore(0);
  ASSERT_NE(forever, nullptr);
  ASSERT_TRUE(forever->Put(Draft("Aldric", 1, 3)).ok());
  EXPECT_EQ(side_->Integer({"PTTL", key}), -1);
}

TEST_F(RedisCheckpointTest, ExpiredCheckpointIsNotFound) {
  auto store = MakeStore(60'000);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Put(Draft("Aldric", 1, 1)).ok());
  (void)side_->Integer({"PEXPIRE", store->KeyOf("Aldric"), "1"});
  // Poll with a deadline rather than sleep a guessed time.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  Result<Checkpoint> got = store->Get("Aldric");
  while (got.ok() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    got = store->Get("Aldric");
  }
  EXPECT_EQ(got.status().code(), StatusCode::kNotFound);
}

TEST_F(RedisCheckpointTest, PutSurvivesAScriptFlush) {
  auto store = MakeStore(60'000);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Put(Draft("Aldric", 1, 1)).ok());
  // The server forgets every script (as after a restart): EVALSHA answers NOSCRIPT, and the
  // store must load the script again and still compare-and-set.
  EXPECT_EQ(side_->Text({"SCRIPT", "FLUSH"}), "OK");
  ASSERT_TRUE(store->Put(Draft("Aldric", 1, 2)).ok());
  EXPECT_EQ(side_->Text({"SCRIPT", "FLUSH"}), "OK");
  EXPECT_EQ(store->Put(Draft("Aldric", 1, 1)).code(), StatusCode::kFailedPrecondition);
  auto got = store->Get("Aldric");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->state_version, 2);
}

TEST_F(RedisCheckpointTest, CorruptHashIsInternal) {
  auto store = MakeStore(60'000);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Put(Draft("Aldric", 1, 1)).ok());
  (void)side_->Integer({"HSET", store->KeyOf("Aldric"), "state_version", "many"});
  EXPECT_EQ(store->Get("Aldric").status().code(), StatusCode::kInternal);
  (void)side_->Integer({"HDEL", store->KeyOf("Aldric"), "zone_id"});
  EXPECT_EQ(store->Get("Aldric").status().code(), StatusCode::kInternal);
}

TEST(RedisCheckpointOptionsTest, ParsesUrlsAndRefusesBadOptions) {
  auto parsed = RedisCheckpointStoreOptionsFromUrl("redis://10.0.0.5:6380/0");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->host, "10.0.0.5");
  EXPECT_EQ(parsed->port, 6380);
  EXPECT_EQ(parsed->checkpoint_ttl_ms, RedisCheckpointStoreOptions::kCheckpointTtlMsDefault);
  for (const char* bad : {"http://x:1", "redis://nohost", "redis://h:0", "redis://h:1/2"}) {
    EXPECT_EQ(RedisCheckpointStoreOptionsFromUrl(bad).status().code(), StatusCode::kInvalidArgument)
        << bad;
  }
  ManualClock clock;
  RedisCheckpointStoreOptions options;
  options.key_namespace = "a}b";
  EXPECT_EQ(RedisCheckpointStore::Create(options, clock).status().code(),
            StatusCode::kInvalidArgument);
  options.key_namespace = "ok";
  options.checkpoint_ttl_ms = -1;
  EXPECT_EQ(RedisCheckpointStore::Create(options, clock).status().code(),
            StatusCode::kInvalidArgument);
}

// ------------------------------------------------------------------ outages

// A TCP port on 127.0.0.1 that refuses connections: bound (so nobody else takes it) but not
// listening.
class ClosedPort {
 public:
  ClosedPort() : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    RELEASE_ASSERT(fd_ >= 0, "socket failed");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    RELEASE_ASSERT(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0, "bind failed");
    socklen_t len = sizeof addr;
    RELEASE_ASSERT(getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0,
                   "getsockname failed");
    port_ = ntohs(addr.sin_port);
  }
  ~ClosedPort() { close(fd_); }
  ClosedPort(const ClosedPort&) = delete;
  ClosedPort& operator=(const ClosedPort&) = delete;

  int port() const { return port_; }
  // Accepts connections into the backlog from now on, but never answers.
  void ListenSilently() { RELEASE_ASSERT(listen(fd_, 16) == 0, "listen failed"); }

 private:
  int fd_;
  int port_ = 0;
};

TEST(RedisCheckpointOutageTest, UnreachableRedisIsUnavailable) {
  ClosedPort closed;
  ManualClock clock;
  RedisCheckpointStoreOptions options;
  options.port = closed.port();
  options.key_namespace = RandomNamespace();
  auto store = RedisCheckpointStore::Create(options, clock);
  ASSERT_TRUE(store.ok()) << store.status().ToString();

  // The first call tries and fails; the next ones are inside the backoff and fail at once.
  // All are Unavailable: nothing was sent, so nothing can have been applied.
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ((*store)->Put(Draft("Aldric", 1, 1)).code(), StatusCode::kUnavailable);
    EXPECT_EQ((*store)->Get("Aldric").status().code(), StatusCode::kUnavailable);
    EXPECT_EQ((*store)->Delete("Aldric").code(), StatusCode::kUnavailable);
  }
  // After the backoff it tries again, and still reports Unavailable.
  clock.Advance(std::chrono::seconds(10));
  EXPECT_EQ((*store)->Get("Aldric").status().code(), StatusCode::kUnavailable);
}

TEST(RedisCheckpointOutageTest, SilentRedisTimesOut) {
  ClosedPort silent;
  silent.ListenSilently();
  ManualClock clock;
  RedisCheckpointStoreOptions options;
  options.port = silent.port();
  options.key_namespace = RandomNamespace();
  options.command_timeout_ms = 200;
  auto store = RedisCheckpointStore::Create(options, clock);
  ASSERT_TRUE(store.ok()) << store.status().ToString();

  // A read with no answer is Unavailable; a write with no answer may have been applied.
  EXPECT_EQ((*store)->Get("Aldric").status().code(), StatusCode::kUnavailable);
  // Put first loads its script (a read), which gets no answer: nothing was applied.
  EXPECT_EQ((*store)->Put(Draft("Aldric", 1, 1)).code(), StatusCode::kUnavailable);
  EXPECT_EQ((*store)->Delete("Aldric").code(), StatusCode::kUnknownResult);
}

}  // namespace
}  // namespace telos::store
