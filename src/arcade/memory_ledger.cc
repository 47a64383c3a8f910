#include "telos/arcade/memory_ledger.h"

#include "telos/base/limits.h"

namespace telos::arcade {

Result<std::vector<Result<PostingResult>>> MemoryLedger::PostBatch(
    std::span<const Posting> postings) {
  if (postings.size() > limits::kArcadeBatchPostingsMax) {
    return Status::InvalidArgument("a batch of " + std::to_string(postings.size()) +
                                   " postings is over kArcadeBatchPostingsMax");
  }
  std::lock_guard lock(mu_);
  ++commits_;
  Status fail;
  if (fail_count_ > 0) {
    --fail_count_;
    fail = fail_status_;
    if (fail.code() != StatusCode::kUnknownResult) return fail;
  }
  LedgerSnapshot snapshot;
  for (const std::string& key : BatchKeys(postings)) {
    if (auto it = keys_.find(key); it != keys_.end()) snapshot.applied.emplace(key, it->second);
  }
  for (const std::string& account : BatchAccounts(postings)) {
    if (auto it = balances_.find(account); it != balances_.end()) {
      snapshot.balances.emplace(account, it->second);
    }
    if (closed_.contains(account)) snapshot.closed.insert(account);
  }
  BatchPlan plan = PlanBatch(postings, snapshot);
  std::vector<int64_t> ids;
  for (size_t index : plan.applied) {
    const Posting& posting = postings[index];
    const int64_t id = next_posting_id_++;
    ids.push_back(id);
    keys_[posting.key] =
        AppliedKey{.fingerprint = plan.postings[index].fingerprint, .posting_id = id};
    for (const Leg& escrow : posting.legs) {
      if (!IsEscrow(escrow.account)) continue;
      auto& flows = escrow_flows_[escrow.account];
      for (const Leg& other : posting.legs) {
        if (other.account != escrow.account) flows[other.account] += other.amount;
      }
    }
  }
  for (const auto& [account, delta] : plan.deltas) balances_[account] += delta;
  for (const std::string& escrow : plan.closes) closed_.insert(escrow);
  if (!fail.ok()) return fail;
  return PlanAnswers(plan, ids);
}

Result<int64_t> MemoryLedger::Balance(std::string_view account) {
  std::lock_guard lock(mu_);
  auto it = balances_.find(std::string(account));
  return it == balances_.end() ? 0 : it->second;
}

Result<std::vector<AccountBalance>> MemoryLedger::Balances() {
  std::lock_guard lock(mu_);
  std::vector<AccountBalance> out;
  for (const auto& [account, balance] : balances_) {
    if (balance != 0) out.push_back({account, balance});
  }
  return out;
}

Result<std::vector<Leg>> MemoryLedger::EscrowFlows(std::string_view escrow) {
  std::lock_guard lock(mu_);
  std::vector<Leg> out;
  auto it = escrow_flows_.find(std::string(escrow));
  if (it == escrow_flows_.end()) return out;
  for (const auto& [account, amount] : it->second) {
    if (amount != 0) out.push_back({account, amount});
  }
  return out;
}

Result<bool> MemoryLedger::EscrowClosed(std::string_view escrow) {
  std::lock_guard lock(mu_);
  return closed_.contains(std::string(escrow));
}

Result<std::vector<std::string>> MemoryLedger::OpenEscrows(std::string_view prefix, size_t limit) {
  if (!IsEscrow(prefix)) return Status::InvalidArgument("an escrow prefix starts with escrow:");
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [account, balance] : balances_) {
    if (out.size() >= limit) break;
    if (account.starts_with(prefix) && balance != 0 && !closed_.contains(account)) {
      out.push_back(account);
    }
  }
  return out;
}

Result<int64_t> MemoryLedger::ClaimChainPosition(std::string_view chain) {
  std::lock_guard lock(mu_);
  return chains_[std::string(chain)]++;
}

void MemoryLedger::FailNextCommits(int count, Status status) {
  std::lock_guard lock(mu_);
  fail_count_ = count;
  fail_status_ = std::move(status);
}

int64_t MemoryLedger::commits() const {
  std::lock_guard lock(mu_);
  return commits_;
}

}  // namespace telos::arcade
