// The Directory conformance suite on a real Redis, plus Redis-only behaviour: the scripts judge
// time by the server's TIME, a lost server gives kUnavailable promptly, and the client recovers
// (reloading its scripts) once the server is back.
//
// Needs TELOS_REDIS (eval "$(scripts/services env)"). Without it, or if that Redis does not
// answer, every test here fails: an integration test that silently skips proves nothing.
// Each test works under its own random key namespace and deletes it afterwards.
#include "telos/directory/redis_directory.h"

#include <hiredis/hiredis.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "conformance_test.h"
#include "telos/base/clock.h"
#include "telos_testing/private_server.h"

extern char** environ;

namespace telos::directory::testing {
namespace {

using std::chrono::steady_clock;

std::string RandomNamespace() {
  std::random_device rd;
  std::mt19937_64 gen((uint64_t{rd()} << 32) ^ rd());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "test-";
  for (int i = 0; i < 16; ++i) out += kHex[gen() % 16];
  return out;
}

Result<RedisOptions> OptionsFromEnv() {
  const char* url = std::getenv("TELOS_REDIS");
  if (url == nullptr || *url == '\0') {
    return Status::FailedPrecondition(
        "TELOS_REDIS is not set: start the services and run eval \"$(scripts/services env)\"");
  }
  return RedisOptionsFromUrl(url);
}

// A plain hiredis connection for looking behind the directory's back (TIME, raw fields) and for
// deleting a test's keys.
class RawRedis {
 public:
  RawRedis(const std::string& host, int port) {
    timeval tv{1, 0};
    ctx_ = redisConnectWithTimeout(host.c_str(), port, tv);
  }
  ~RawRedis() {
    if (ctx_ != nullptr) redisFree(ctx_);
  }
  bool ok() const { return ctx_ != nullptr && ctx_->err == 0; }

  // Runs a command; returns its string or integer answer as text ("" on failure).
  std::string Run(const std::vector<std::string>& argv) {
    redisReply* r = Call(argv);
    if (r == nullptr) return "";
    std::string out;
    if (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS) out.assign(r->str, r->len);
    if (r->type == REDIS_REPLY_INTEGER) out = std::to_string(r->integer);
    freeReplyObject(r);
    return out;
  }

  // The server's clock in unix milliseconds, or -1.
  int64_t TimeMs() {
    redisReply* r = Call({"TIME"});
    if (r == nullptr) return -1;
    int64_t ms = -1;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 2) {
      ms = std::stoll(r->element[0]->str) * 1000 + std::stoll(r->element[1]->str) / 1000;
    }
    freeReplyObject(r);
    return ms;
  }

  // Deletes every key under "{ns}:".
  void DeleteNamespace(const std::string& ns) {
    std::string cursor = "0";
    do {
      redisReply* r = Call({"SCAN", cursor, "MATCH", "{" + ns + "}:*", "COUNT", "1000"});
      if (r == nullptr) return;
      if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
        freeReplyObject(r);
        return;
      }
      cursor.assign(r->element[0]->str, r->element[0]->len);
      std::vector<std::string> del = {"DEL"};
      for (size_t i = 0; i < r->element[1]->elements; ++i) {
        del.emplace_back(r->element[1]->element[i]->str, r->element[1]->element[i]->len);
      }
      freeReplyObject(r);
      if (del.size() > 1) Run(del);
    } while (cursor != "0");
  }

 private:
  redisReply* Call(const std::vector<std::string>& argv) {
    if (!ok()) return nullptr;
    std::vector<const char*> ptrs;
    std::vector<size_t> lens;
    for (const std::string& a : argv) {
      ptrs.push_back(a.data());
      lens.push_back(a.size());
    }
    return static_cast<redisReply*>(
        redisCommandArgv(ctx_, static_cast<int>(argv.size()), ptrs.data(), lens.data()));
  }
  redisContext* ctx_ = nullptr;
};

template <typename F>
bool PollUntil(F pred, std::chrono::milliseconds within) {
  const auto deadline = steady_clock::now() + within;
  while (true) {
    if (pred()) return true;
    if (steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

class RedisBackend {
 public:
  static constexpr int kConcurrencyThreads = 6;
  static constexpr int kConcurrencyRounds = 1'000;

  ~RedisBackend() {
    clients_.clear();
    if (options_.ok()) {
      RawRedis raw(options_->host, options_->port);
      raw.DeleteNamespace(namespace_);
    }
  }

  Status Ready() {
    if (!options_.ok()) return options_.status();
    options_->key_namespace = namespace_;
    // The conformance tests wait out 300 ms TTLs, so a lost connection must not stall a test.
    options_->reconnect_backoff_max_ms = 200;
    NewClient(nullptr);
    return static_cast<RedisDirectory*>(clients_.front().get())->Ping();
  }
  Directory* Client() { return clients_.front().get(); }
  Directory* NewClient(const Clock* local_clock) {
    clients_.push_back(std::make_unique<RedisDirectory>(
        *options_, local_clock != nullptr ? *local_clock : system_clock_));
    return clients_.back().get();
  }
  int64_t ShortTtlMs() const { return 300; }
  int64_t LongTtlMs() const { return 60'000; }

  // Real time passes on the Redis server; poll every 5 ms until pred holds or time is up.
  template <typename F>
  bool Eventually(F pred, int64_t within_ms) {
    return PollUntil(pred, std::chrono::milliseconds(within_ms));
  }

 private:
  SystemClock system_clock_;
  std::string namespace_ = RandomNamespace();
  Result<RedisOptions> options_ = OptionsFromEnv();
  std::vector<std::unique_ptr<Directory>> clients_;
};

INSTANTIATE_TYPED_TEST_SUITE_P(Redis, DirectoryConformance, RedisBackend);

TEST(RedisOptions, ParsesUrls) {
  auto o = RedisOptionsFromUrl("redis://127.0.0.1:16379");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->host, "127.0.0.1");
  EXPECT_EQ(o->port, 16379);
  EXPECT_TRUE(RedisOptionsFromUrl("redis://db.internal:6379/").ok());
  EXPECT_TRUE(RedisOptionsFromUrl("redis://db.internal:6379/0").ok());
  EXPECT_FALSE(RedisOptionsFromUrl("redis://db.internal:6379/3").ok());
  EXPECT_FALSE(RedisOptionsFromUrl("http://x:1").ok());
  EXPECT_FALSE(RedisOptionsFromUrl("redis://x").ok());
  EXPECT_FALSE(RedisOptionsFromUrl("redis://x:99999").ok());
}

// The expiry a claim stores is the server's TIME plus the TTL, whatever the client's clock says.
TEST(RedisDirectory, LeaseExpiryComesFromServerTime) {
  Result<RedisOptions> options = OptionsFromEnv();
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  options->key_namespace = RandomNamespace();
  SkewedClock behind(-std::chrono::hours(3));
  RedisDirectory dir(*options, behind);
  RawRedis raw(options->host, options->port);
  ASSERT_TRUE(raw.ok());
  const int64_t before = raw.TimeMs();
  auto claimed = dir.ClaimZone("z", "A", 5'000);
  ASSERT_TRUE(claimed.ok()) << claimed.status().ToString();
  const int64_t after = raw.TimeMs();
  const int64_t stored = std::stoll(raw.Run({"HGET", dir.key_prefix() + "zone:z", "exp"}));
  EXPECT_GE(stored, before + 5'000);
  EXPECT_LE(stored, after + 5'000);
  raw.DeleteNamespace(options->key_namespace);
}

TEST(RedisDirectory, NamespacesDoNotCollide) {
  Result<RedisOptions> options = OptionsFromEnv();
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  SystemClock clock;
  RedisOptions a_opts = *options;
  a_opts.key_namespace = RandomNamespace();
  RedisOptions b_opts = *options;
  b_opts.key_namespace = RandomNamespace();
  RedisDirectory a(a_opts, clock);
  RedisDirectory b(b_opts, clock);
  ASSERT_TRUE(a.ClaimZone("z", "A", 60'000).ok());
  auto other_fleet = b.ClaimZone("z", "B", 60'000);
  ASSERT_TRUE(other_fleet.ok()) << other_fleet.status().ToString();
  EXPECT_EQ(other_fleet->epoch, 1u);
  RawRedis raw(options->host, options->port);
  raw.DeleteNamespace(a_opts.key_namespace);
  raw.DeleteNamespace(b_opts.key_namespace);
}

// ------------------------------------------------------------------ outage

TEST(RedisDirectoryOutage, CallsReturnUnavailableWhileRedisIsDownThenRecover) {
  const int port = ::telos::testing::FreeLoopbackPort();
  ASSERT_GT(port, 0);
  ::telos::testing::PrivateServer server({"redis-server", "--port", std::to_string(port), "--bind",
                                          "127.0.0.1", "--save", "", "--appendonly", "no",
                                          "--loglevel", "warning", "--logfile", "/dev/null",
                                          "--daemonize", "no"});
  ASSERT_TRUE(server.Start()) << "cannot start redis-server (is it installed?)";

  RedisOptions options;
  options.port = port;
  options.key_namespace = RandomNamespace();
  options.connect_timeout_ms = 200;
  options.command_timeout_ms = 500;
  options.reconnect_backoff_min_ms = 20;
  options.reconnect_backoff_max_ms = 100;
  SystemClock clock;
  RedisDirectory dir(options, clock);
  ASSERT_TRUE(PollUntil([&] { return dir.Ping().ok(); }, std::chrono::seconds(10)))
      << "private redis-server on port " << port << " never answered";

  auto lease = dir.ClaimZone("z", "A", 60'000);
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  ASSERT_TRUE(dir.RegisterPlacement("p", Placement{"z", 1, "n", "A"}).ok());

  server.Kill();

  // The first call finds the dead connection. Its request may already have been written, so
  // for a mutating call "unknown result" is the honest answer; for anything after, the
  // connection is gone and the answer is plainly "unavailable".
  auto first = dir.RenewZone("z", "A", lease->epoch, 60'000);
  EXPECT_TRUE(first.status().code() == StatusCode::kUnavailable ||
              first.status().code() == StatusCode::kUnknownResult)
      << first.status().ToString();

  for (int i = 0; i < 50; ++i) {
    const auto start = steady_clock::now();
    std::vector<Status> results = {
        dir.RenewZone("z", "A", lease->epoch, 60'000).status(),
        dir.ClaimZone("y", "A", 60'000).status(),
        dir.LookupPlacement("p").status(),
        dir.Reserve("t", 1, 1'000).status(),
        dir.ListShards().status(),
        dir.Ping(),
    };
    const auto took = steady_clock::now() - start;
    for (const Status& s : results) {
      EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
    }
    // Connection refused is immediate and the backoff answers without the network: six calls
    // must come back well inside one connect timeout each.
    EXPECT_LT(took, std::chrono::milliseconds(6 * options.connect_timeout_ms));
  }

  ASSERT_TRUE(server.Start());
  // Recovery: the client reconnects on its own. The restarted server has no data and no
  // scripts, so success also proves the NOSCRIPT reload path.
  Result<LeaseGrant> again = Status::Unavailable("not yet");
  ASSERT_TRUE(PollUntil(
      [&] {
        again = dir.ClaimZone("z", "A", 60'000);
        return again.ok();
      },
      std::chrono::seconds(15)))
      << again.status().ToString();
  EXPECT_EQ(again->epoch, 1u);  // the restarted server is empty
  EXPECT_TRUE(dir.RegisterPlacement("p", Placement{"z", 1, "n", "A"}).ok());

  // Scripts flushed behind the client's back are reloaded transparently.
  RawRedis raw("127.0.0.1", port);
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(raw.Run({"SCRIPT", "FLUSH"}), "OK");
  auto renewed = dir.RenewZone("z", "A", again->epoch, 60'000);
  EXPECT_TRUE(renewed.ok()) << renewed.status().ToString();
}

TEST(RedisDirectoryOutage, NothingListeningIsUnavailableAtOnce) {
  RedisOptions options;
  options.port = ::telos::testing::FreeLoopbackPort();
  ASSERT_GT(options.port, 0);
  options.key_namespace = RandomNamespace();
  SystemClock clock;
  RedisDirectory dir(options, clock);
  const auto start = steady_clock::now();
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(dir.ClaimZone("z", "A", 1'000).status().code(), StatusCode::kUnavailable);
  }
  EXPECT_LT(steady_clock::now() - start, std::chrono::seconds(2));
}

}  // namespace
}  // namespace telos::directory::testing
