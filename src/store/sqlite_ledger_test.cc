// The ledger conformance suite on MemoryLedger and on SqliteLedger (a file in a temporary
// directory), plus what is SQLite's own: the ledger survives reopening the file.

#include "telos/store/sqlite_ledger.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "ledger_conformance.h"
#include "store_test_util.h"
#include "telos/arcade/memory_ledger.h"

namespace telos::store {
namespace {

// Forwards to a ledger it does not own: a MemoryLedger's "peer" is the same ledger.
class BorrowedLedger final : public arcade::Ledger {
 public:
  explicit BorrowedLedger(arcade::Ledger& target) : target_(target) {}
  Result<std::vector<Result<arcade::PostingResult>>> PostBatch(
      std::span<const arcade::Posting> postings) override {
    return target_.PostBatch(postings);
  }
  Result<int64_t> Balance(std::string_view account) override { return target_.Balance(account); }
  Result<std::vector<arcade::AccountBalance>> Balances() override { return target_.Balances(); }
  Result<std::vector<arcade::Leg>> EscrowFlows(std::string_view escrow) override {
    return target_.EscrowFlows(escrow);
  }
  Result<bool> EscrowClosed(std::string_view escrow) override {
    return target_.EscrowClosed(escrow);
  }
  Result<std::vector<std::string>> OpenEscrows(std::string_view prefix, size_t limit) override {
    return target_.OpenEscrows(prefix, limit);
  }
  Result<int64_t> ClaimChainPosition(std::string_view chain) override {
    return target_.ClaimChainPosition(chain);
  }

 private:
  arcade::Ledger& target_;
};

class MemoryBackend final : public LedgerBackend {
 public:
  arcade::Ledger& ledger() override { return ledger_; }
  std::unique_ptr<arcade::Ledger> OpenPeer(const Clock&) override {
    return std::make_unique<BorrowedLedger>(ledger_);
  }

 private:
  arcade::MemoryLedger ledger_;
};

std::unique_ptr<arcade::Ledger> MustOpen(const std::string& path, const Clock& clock) {
  auto opened = SqliteLedger::Open({.path = path}, clock);
  RELEASE_ASSERT(opened.ok(), opened.status().ToString());
  return std::move(opened).value();
}

class SqliteBackend final : public LedgerBackend {
 public:
  explicit SqliteBackend(const Clock& clock)
      : path_(dir_.File("telos.db")), ledger_(MustOpen(path_, clock)) {}
  arcade::Ledger& ledger() override { return *ledger_; }
  std::unique_ptr<arcade::Ledger> OpenPeer(const Clock& clock) override {
    return MustOpen(path_, clock);
  }

 private:
  TempDir dir_;
  std::string path_;
  std::unique_ptr<arcade::Ledger> ledger_;
};

LedgerBackendFactory MemoryFactory() {
  return {.name = "Memory", .make = [](const Clock&) -> std::unique_ptr<LedgerBackend> {
            return std::make_unique<MemoryBackend>();
          }};
}

LedgerBackendFactory SqliteFactory() {
  return {.name = "Sqlite", .make = [](const Clock& clock) -> std::unique_ptr<LedgerBackend> {
            return std::make_unique<SqliteBackend>(clock);
          }};
}

INSTANTIATE_TEST_SUITE_P(Memory, LedgerConformanceTest, ::testing::Values(MemoryFactory()),
                         LedgerBackendName);
INSTANTIATE_TEST_SUITE_P(Sqlite, LedgerConformanceTest, ::testing::Values(SqliteFactory()),
                         LedgerBackendName);

TEST(SqliteLedgerTest, EverythingSurvivesReopeningTheFile) {
  ManualClock clock;
  TempDir dir;
  const std::string path = dir.File("telos.db");
  int64_t posting_id = 0;
  {
    auto ledger = MustOpen(path, clock);
    auto posted = ledger->Post({.key = "buy-1", .legs = {{"house", -9}, {"player:ann", 9}}});
    ASSERT_TRUE(posted.ok()) << posted.status().ToString();
    posting_id = posted->posting_id;
    ASSERT_TRUE(ledger->ClaimChainPosition("crash").ok());
  }
  auto ledger = MustOpen(path, clock);
  auto balance = ledger->Balance("player:ann");
  ASSERT_TRUE(balance.ok());
  EXPECT_EQ(*balance, 9);
  auto replay = ledger->Post({.key = "buy-1", .legs = {{"house", -9}, {"player:ann", 9}}});
  ASSERT_TRUE(replay.ok());
  EXPECT_TRUE(replay->replayed);
  EXPECT_EQ(replay->posting_id, posting_id);
  auto position = ledger->ClaimChainPosition("crash");
  ASSERT_TRUE(position.ok());
  EXPECT_EQ(*position, 1);
}

TEST(SqliteLedgerTest, AnEmptyPathIsRefused) {
  ManualClock clock;
  EXPECT_EQ(SqliteLedger::Open({.path = ""}, clock).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace telos::store
