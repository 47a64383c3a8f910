#include "telos/arcade/batch_plan.h"

#include <algorithm>
#include <set>

#include "telos/base/assert.h"

namespace telos::arcade {

std::vector<std::string> BatchKeys(std::span<const Posting> postings) {
  std::set<std::string> keys;
  for (const Posting& p : postings) {
    if (ValidatePosting(p).ok()) keys.insert(p.key);
  }
  return {keys.begin(), keys.end()};
}

std::vector<std::string> BatchAccounts(std::span<const Posting> postings) {
  std::set<std::string> accounts;
  for (const Posting& p : postings) {
    if (!ValidatePosting(p).ok()) continue;
    for (const Leg& leg : p.legs) accounts.insert(leg.account);
  }
  return {accounts.begin(), accounts.end()};
}

BatchPlan PlanBatch(std::span<const Posting> postings, const LedgerSnapshot& snapshot) {
  BatchPlan plan;
  plan.postings.resize(postings.size());
  std::unordered_map<std::string, int64_t> balances = snapshot.balances;
  std::unordered_set<std::string> closed = snapshot.closed;
  // Keys applied earlier in this batch: index and fingerprint.
  std::unordered_map<std::string, std::pair<size_t, std::string>> batch_keys;

  for (size_t i = 0; i < postings.size(); ++i) {
    const Posting& posting = postings[i];
    PlannedPosting& out = plan.postings[i];
    Status valid = ValidatePosting(posting);
    if (!valid.ok()) {
      out.refusal = std::move(valid);
      continue;
    }
    std::string fingerprint = PostingFingerprint(posting);
    auto reused = [&](const std::string& original) {
      if (original == fingerprint) return false;
      out.refusal = Status::AlreadyExists("the idempotency key " + posting.key +
                                          " was used for a different posting");
      return true;
    };
    if (auto it = snapshot.applied.find(posting.key); it != snapshot.applied.end()) {
      if (reused(it->second.fingerprint)) continue;
      out.kind = PlannedPosting::Kind::kReplay;
      out.replay_of = it->second.posting_id;
      continue;
    }
    if (auto it = batch_keys.find(posting.key); it != batch_keys.end()) {
      if (reused(it->second.second)) continue;
      out.kind = PlannedPosting::Kind::kReplay;
      out.same_as = it->second.first;
      continue;
    }
    bool refused = false;
    for (const Leg& leg : posting.legs) {
      if (closed.contains(leg.account)) {
        out.refusal = Status::FailedPrecondition("the escrow " + leg.account + " is closed");
        refused = true;
        break;
      }
      const auto found = balances.find(leg.account);
      const int64_t before = found == balances.end() ? 0 : found->second;
      const int64_t after = before + leg.amount;
      if (after < 0 && !MayGoNegative(leg.account)) {
        out.refusal = Status::FailedPrecondition(leg.account + " holds " + std::to_string(before) +
                                                 " chips, not " + std::to_string(-leg.amount));
        refused = true;
        break;
      }
      if (IsEscrow(leg.account) && leg.account == posting.closes_escrow && after != 0) {
        out.refusal = Status::FailedPrecondition("closing " + leg.account + " would leave " +
                                                 std::to_string(after) + " chips in it");
        refused = true;
        break;
      }
    }
    if (refused) continue;
    for (const Leg& leg : posting.legs) {
      balances[leg.account] += leg.amount;
      plan.deltas[leg.account] += leg.amount;
    }
    if (!posting.closes_escrow.empty()) {
      closed.insert(posting.closes_escrow);
      plan.closes.push_back(posting.closes_escrow);
    }
    out.kind = PlannedPosting::Kind::kApply;
    batch_keys.emplace(posting.key, std::make_pair(i, fingerprint));
    out.fingerprint = std::move(fingerprint);
    plan.applied.push_back(i);
  }
  std::erase_if(plan.deltas, [](const auto& entry) { return entry.second == 0; });
  return plan;
}

std::vector<Result<PostingResult>> PlanAnswers(const BatchPlan& plan,
                                               std::span<const int64_t> ids) {
  RELEASE_ASSERT(ids.size() == plan.applied.size(), "one posting id per applied posting");
  std::vector<int64_t> id_of(plan.postings.size(), 0);
  for (size_t i = 0; i < ids.size(); ++i) id_of[plan.applied[i]] = ids[i];
  std::vector<Result<PostingResult>> answers;
  answers.reserve(plan.postings.size());
  for (size_t i = 0; i < plan.postings.size(); ++i) {
    const PlannedPosting& p = plan.postings[i];
    switch (p.kind) {
      case PlannedPosting::Kind::kApply:
        answers.emplace_back(PostingResult{.posting_id = id_of[i], .replayed = false});
        break;
      case PlannedPosting::Kind::kReplay:
        answers.emplace_back(
            PostingResult{.posting_id = p.same_as != SIZE_MAX ? id_of[p.same_as] : p.replay_of,
                          .replayed = true});
        break;
      case PlannedPosting::Kind::kRefuse: answers.emplace_back(p.refusal); break;
    }
  }
  return answers;
}

}  // namespace telos::arcade
