// MemoryLedger: the Ledger in memory (tests, simulations, and the model the conformance suite's
// property test compares the database backends with). Nothing is durable.
//
// Fault injection for tests: FailNextCommits(n, status) makes the next n PostBatch calls fail
// with `status` — applying nothing when it is Unavailable, and applying everything (then
// answering the error) when it is UnknownResult, as a commit whose answer was lost would.
//
// Thread safety: every method may be called from any thread (one mutex).
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "telos/arcade/batch_plan.h"
#include "telos/arcade/ledger.h"

namespace telos::arcade {

class MemoryLedger final : public Ledger {
 public:
  Result<std::vector<Result<PostingResult>>> PostBatch(std::span<const Posting> postings) override;
  Result<int64_t> Balance(std::string_view account) override;
  Result<std::vector<AccountBalance>> Balances() override;
  Result<std::vector<Leg>> EscrowFlows(std::string_view escrow) override;
  Result<bool> EscrowClosed(std::string_view escrow) override;
  Result<std::vector<std::string>> OpenEscrows(std::string_view prefix, size_t limit) override;
  Result<int64_t> ClaimChainPosition(std::string_view chain) override;

  void FailNextCommits(int count, Status status);
  // PostBatch calls that reached the ledger (each one commit), including failed ones.
  int64_t commits() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, int64_t> balances_;
  std::unordered_map<std::string, AppliedKey> keys_;
  std::map<std::string, std::map<std::string, int64_t>> escrow_flows_;
  std::unordered_set<std::string> closed_;
  std::unordered_map<std::string, int64_t> chains_;
  int64_t next_posting_id_ = 1;
  int fail_count_ = 0;
  Status fail_status_;
  int64_t commits_ = 0;
};

}  // namespace telos::arcade
