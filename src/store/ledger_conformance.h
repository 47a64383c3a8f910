// The ledger conformance suite: what every backend of arcade::Ledger must do, written once and
// run against each (MemoryLedger and SqliteLedger in ledger_test, PostgresLedger in
// ledger_postgres_test). It includes a property test: random operation sequences from a seed
// (printed on failure) after every one of which the sum of all balances is zero, no account
// but the house is below zero, and every balance equals a MemoryLedger model's.
//
// A backend joins with a LedgerBackendFactory:
//   INSTANTIATE_TEST_SUITE_P(Sqlite, LedgerConformanceTest, ::testing::Values(SqliteFactory()),
//                            LedgerBackendName);
// Each test gets a fresh, empty ledger and may open peers: other ledgers on the same database
// with their own connections, as another instance would.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "telos/arcade/ledger.h"
#include "telos/base/clock.h"

namespace telos::store {

class LedgerBackend {
 public:
  virtual ~LedgerBackend() = default;
  virtual arcade::Ledger& ledger() = 0;
  // Another ledger on the same database (its own connection); it must be destroyed before this
  // backend. Null (after recording a failure) when it cannot be opened.
  virtual std::unique_ptr<arcade::Ledger> OpenPeer(const Clock& clock) = 0;
};

struct LedgerBackendFactory {
  std::string name;  // letters and digits only
  std::function<std::unique_ptr<LedgerBackend>(const Clock& clock)> make;
};

inline void PrintTo(const LedgerBackendFactory& factory, std::ostream* os) {
  *os << factory.name;
}

inline std::string LedgerBackendName(const ::testing::TestParamInfo<LedgerBackendFactory>& info) {
  return info.param.name;
}

class LedgerConformanceTest : public ::testing::TestWithParam<LedgerBackendFactory> {
 protected:
  void SetUp() override {
    backend_ = GetParam().make(clock_);
    ASSERT_NE(backend_, nullptr);
  }
  void TearDown() override { peers_.clear(); }

  arcade::Ledger& ledger() { return backend_->ledger(); }
  arcade::Ledger* Peer() {
    peers_.push_back(backend_->OpenPeer(clock_));
    return peers_.back().get();
  }

  ManualClock clock_;
  std::unique_ptr<LedgerBackend> backend_;
  std::vector<std::unique_ptr<arcade::Ledger>> peers_;  // after backend_: destroyed first
};

}  // namespace telos::store
