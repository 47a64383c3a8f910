// Throughput of the Redis directory's hot operations against a live Redis (TELOS_REDIS, default
// redis://127.0.0.1:16379). bench/directory_bench.sh runs this beside redis-benchmark doing a
// trivial EVALSHA on the same server and prints each operation as a share of that raw rate.
//
// Each benchmark thread owns one RedisDirectory (one connection), the way a blocking pool would
// use it; Google Benchmark sums items_per_second over the threads. All keys live under a
// namespace unique to this run and are deleted at exit.
#include <benchmark/benchmark.h>
#include <hiredis/hiredis.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "telos/base/clock.h"
#include "telos/directory/redis_directory.h"

namespace {

using telos::SystemClock;
using telos::directory::Placement;
using telos::directory::RedisDirectory;
using telos::directory::RedisOptions;

constexpr int64_t kLeaseTtlMs = 60'000;
// Short enough that reservations expire during the run, so Reserve also pays for pruning.
constexpr int64_t kReservationTtlMs = 1'000;
constexpr int kKeysPerThread = 1'024;

SystemClock& Clock() {
  static SystemClock clock;
  return clock;
}

RedisOptions& Options() {
  static RedisOptions options = [] {
    const char* url = std::getenv("TELOS_REDIS");
    auto parsed = telos::directory::RedisOptionsFromUrl(
        url != nullptr && *url != '\0' ? url : "redis://127.0.0.1:16379");
    if (!parsed.ok()) {
      std::fprintf(stderr, "%s\n", parsed.status().ToString().c_str());
      std::exit(2);
    }
    RedisOptions o = *parsed;
    o.key_namespace = "bench-" + std::to_string(getpid());
    return o;
  }();
  return options;
}

// One connection per benchmark thread, checked before timing starts.
std::unique_ptr<RedisDirectory> Connect(benchmark::State& state) {
  auto dir = std::make_unique<RedisDirectory>(Options(), Clock());
  if (auto s = dir->Ping(); !s.ok()) state.SkipWithError(s.ToString().c_str());
  return dir;
}

void ReportError(benchmark::State& state, const telos::Status& s) {
  state.SkipWithError(s.ToString().c_str());
}

void BM_ClaimZone(benchmark::State& state) {
  auto dir = Connect(state);
  const std::string prefix = "claim-" + std::to_string(state.thread_index()) + "-";
  int i = 0;
  for (auto _ : state) {
    // The first pass over the keys grants new tenures; later ones are same-owner refreshes.
    auto r = dir->ClaimZone(prefix + std::to_string(i++ % kKeysPerThread),
                            "shard-" + std::to_string(state.thread_index()), kLeaseTtlMs);
    if (!r.ok()) {
      ReportError(state, r.status());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_RenewZone(benchmark::State& state) {
  auto dir = Connect(state);
  const std::string zone = "renew-" + std::to_string(state.thread_index());
  const std::string shard = "shard-" + std::to_string(state.thread_index());
  auto grant = dir->ClaimZone(zone, shard, kLeaseTtlMs);
  if (!grant.ok()) {
    ReportError(state, grant.status());
    return;
  }
  for (auto _ : state) {
    auto r = dir->RenewZone(zone, shard, grant->epoch, kLeaseTtlMs);
    if (!r.ok()) {
      ReportError(state, r.status());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_RegisterPlacement(benchmark::State& state) {
  auto dir = Connect(state);
  const std::string prefix = "player-" + std::to_string(state.thread_index()) + "-";
  Placement p{"market", 1, "nonce-1", "shard-" + std::to_string(state.thread_index())};
  int i = 0;
  for (auto _ : state) {
    auto s = dir->RegisterPlacement(prefix + std::to_string(i++ % kKeysPerThread), p);
    if (!s.ok()) {
      ReportError(state, s);
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_Reserve(benchmark::State& state) {
  auto dir = Connect(state);
  const std::string target = "target-" + std::to_string(state.thread_index() % 4);
  for (auto _ : state) {
    auto r = dir->Reserve(target, 1, kReservationTtlMs);
    if (!r.ok()) {
      ReportError(state, r.status());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}

// 1 thread shows the round-trip bound; 16 and 32 keep as many requests in flight as a loaded
// blocking pool would (redis-benchmark uses 50 connections).
#define DIRECTORY_BENCH(fn) BENCHMARK(fn)->Threads(1)->Threads(16)->Threads(32)->UseRealTime()

DIRECTORY_BENCH(BM_ClaimZone);
DIRECTORY_BENCH(BM_RenewZone);
DIRECTORY_BENCH(BM_RegisterPlacement);
DIRECTORY_BENCH(BM_Reserve);

// Deletes every key of this run's namespace.
void CleanUp() {
  const RedisOptions& o = Options();
  timeval tv{2, 0};
  redisContext* c = redisConnectWithTimeout(o.host.c_str(), o.port, tv);
  if (c == nullptr || c->err != 0) {
    if (c != nullptr) redisFree(c);
    return;
  }
  const std::string pattern = "{" + o.key_namespace + "}:*";
  std::string cursor = "0";
  do {
    auto* r = static_cast<redisReply*>(
        redisCommand(c, "SCAN %s MATCH %s COUNT 1000", cursor.c_str(), pattern.c_str()));
    if (r == nullptr || r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
      if (r != nullptr) freeReplyObject(r);
      break;
    }
    cursor.assign(r->element[0]->str, r->element[0]->len);
    for (size_t i = 0; i < r->element[1]->elements; ++i) {
      auto* del = static_cast<redisReply*>(redisCommand(c, "DEL %b", r->element[1]->element[i]->str,
                                                        r->element[1]->element[i]->len));
      if (del != nullptr) freeReplyObject(del);
    }
    freeReplyObject(r);
  } while (cursor != "0");
  redisFree(c);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  CleanUp();
  return 0;
}
