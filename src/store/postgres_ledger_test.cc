// The ledger conformance suite on PostgresLedger against a real server (label `integration`).
//
// The server comes from TELOS_DATABASE_URL (eval "$(scripts/services env)"); without it every
// test FAILS, never skips. Each test works in its own randomly named schema, dropped afterwards.

#include "telos/store/postgres_ledger.h"

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ledger_conformance.h"
#include "telos/arcade/wager_batcher.h"
#include "telos/base/assert.h"

namespace telos::store {
namespace {

std::string DatabaseUrl() {
  const char* url = std::getenv("TELOS_DATABASE_URL");
  if (url == nullptr || *url == '\0') {
    ADD_FAILURE() << "TELOS_DATABASE_URL is not set: run eval \"$(scripts/services env)\" "
                     "(PostgreSQL integration tests fail rather than skip without a server)";
    return "";
  }
  return url;
}

std::string RandomSchemaName() {
  std::random_device device;
  std::mt19937_64 rng((static_cast<uint64_t>(device()) << 32) ^ device());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name = "telos_ledger_";
  for (int i = 0; i < 16; ++i) name += kHex[rng() % 16];
  return name;
}

class PostgresBackend final : public LedgerBackend {
 public:
  static std::unique_ptr<LedgerBackend> Make(const Clock& clock) {
    auto backend = std::make_unique<PostgresBackend>();
    backend->url_ = DatabaseUrl();
    if (backend->url_.empty()) return nullptr;
    backend->schema_ = RandomSchemaName();
    backend->ledger_ = backend->Open(clock);
    if (backend->ledger_ == nullptr) return nullptr;
    return backend;
  }
  ~PostgresBackend() override {
    ledger_.reset();  // disconnect before the schema is dropped
    if (url_.empty() || schema_.empty()) return;
    PGconn* conn = PQconnectdb(url_.c_str());
    PQclear(PQexec(conn, ("DROP SCHEMA IF EXISTS " + schema_ + " CASCADE").c_str()));
    PQfinish(conn);
  }

  arcade::Ledger& ledger() override { return *ledger_; }
  std::unique_ptr<arcade::Ledger> OpenPeer(const Clock& clock) override { return Open(clock); }

 private:
  std::unique_ptr<arcade::Ledger> Open(const Clock& clock) {
    auto opened = PostgresLedger::Open({.conninfo = url_, .schema = schema_}, clock);
    if (!opened.ok()) {
      ADD_FAILURE() << opened.status().ToString();
      return nullptr;
    }
    return std::move(opened).value();
  }

  std::string url_;
  std::string schema_;
  std::unique_ptr<arcade::Ledger> ledger_;
};

LedgerBackendFactory PostgresFactory() {
  return {.name = "Postgres", .make = &PostgresBackend::Make};
}

INSTANTIATE_TEST_SUITE_P(Postgres, LedgerConformanceTest, ::testing::Values(PostgresFactory()),
                         LedgerBackendName);

TEST(PostgresLedgerTest, ABadSchemaNameIsRefused) {
  ManualClock clock;
  auto opened =
      PostgresLedger::Open({.conninfo = "postgresql://127.0.0.1:1/x", .schema = "A-b"}, clock);
  EXPECT_EQ(opened.status().code(), StatusCode::kInvalidArgument);
}

// Group commit against the real server: four threads wager concurrently through one started
// WagerBatcher (real time); every wager is acknowledged only once committed, the ledger holds
// exactly the acknowledged stakes, and far fewer commits than wagers were made.
TEST(PostgresWagerBatcherTest, ConcurrentWagersAreGroupCommittedAndAllAcknowledged) {
  SystemClock clock;
  auto backend = PostgresBackend::Make(clock);
  ASSERT_NE(backend, nullptr);
  arcade::Ledger& ledger = backend->ledger();
  constexpr int kThreads = 4;
  constexpr int kWagersPerThread = 250;
  for (int t = 0; t < kThreads; ++t) {
    const std::string player = "player:p" + std::to_string(t);
    ASSERT_TRUE(
        ledger.Post({.key = "buy-" + player, .legs = {{"house", -1000}, {player, 1000}}}).ok());
  }
  arcade::WagerBatcher batcher(ledger, clock, {.window_ms = 2, .batch_max = 128});
  batcher.Start();
  std::mutex mu;
  std::condition_variable answered;
  int acks = 0;
  int errors = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string player = "player:p" + std::to_string(t);
      for (int i = 0; i < kWagersPerThread; ++i) {
        // 250 wagers of 4 chips: exactly the 1000 each player holds.
        const Status submitted =
            batcher.Submit({.key = "w-" + std::to_string(t) + "-" + std::to_string(i),
                            .legs = {{player, -4}, {"escrow:crash:1", 4}}},
                           [&](Result<arcade::PostingResult> r) {
                             std::lock_guard lock(mu);
                             (r.ok() ? acks : errors)++;
                             answered.notify_all();
                           });
        if (!submitted.ok()) {
          std::lock_guard lock(mu);
          ++errors;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(answered.wait_for(lock, std::chrono::seconds(60),
                                  [&] { return acks + errors == kThreads * kWagersPerThread; }));
  }
  batcher.Stop();
  EXPECT_EQ(errors, 0);
  EXPECT_EQ(acks, kThreads * kWagersPerThread);
  auto escrow = ledger.Balance("escrow:crash:1");
  ASSERT_TRUE(escrow.ok());
  EXPECT_EQ(*escrow, 4 * kThreads * kWagersPerThread);
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(ledger.Balance("player:p" + std::to_string(t)).value(), 0);
  }
  // One more would overdraw: refused by the reservation, never sent.
  arcade::WagerBatcher after(ledger, clock);
  EXPECT_EQ(after
                .Submit({.key = "w-over", .legs = {{"player:p0", -1}, {"escrow:crash:1", 1}}},
                        [](Result<arcade::PostingResult>) {})
                .code(),
            StatusCode::kFailedPrecondition);
  EXPECT_LT(batcher.batches_committed(), kThreads * kWagersPerThread / 4)
      << "wagers shared commits";
}

}  // namespace
}  // namespace telos::store
