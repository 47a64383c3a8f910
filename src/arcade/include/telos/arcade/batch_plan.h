// BatchPlan: how every ledger backend decides a batch, so the three backends cannot disagree.
//
// A backend opens its transaction, reads a LedgerSnapshot (the keys already applied, the
// balances and closures of every account the batch names, with those rows locked where the
// database can), asks PlanBatch what to do, writes the applied postings and the net balance
// deltas, and commits. PlanBatch walks the postings in order against running balances: a
// posting is refused whole when it is malformed, reuses a key with different content, names a
// closed escrow (or one an earlier posting of the batch closes), or would take an account other
// than the house below zero. A key repeated within the batch with the same content answers
// with the first one's result.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "telos/arcade/ledger.h"
#include "telos/base/status.h"

namespace telos::arcade {

struct AppliedKey {
  std::string fingerprint;
  int64_t posting_id = 0;
};

struct LedgerSnapshot {
  std::unordered_map<std::string, AppliedKey> applied;  // key -> what it was applied as
  std::unordered_map<std::string, int64_t> balances;    // missing: 0
  std::unordered_set<std::string> closed;               // closed escrows
};

struct PlannedPosting {
  enum class Kind { kApply, kReplay, kRefuse };
  Kind kind = Kind::kRefuse;
  Status refusal;             // kRefuse: why
  int64_t replay_of = 0;      // kReplay of a posting already in the ledger: its id
  size_t same_as = SIZE_MAX;  // kReplay of an earlier posting of this batch
  std::string fingerprint;    // kApply: PostingFingerprint
};

struct BatchPlan {
  std::vector<PlannedPosting> postings;   // one per input posting
  std::vector<size_t> applied;            // the indexes to write, in order
  std::map<std::string, int64_t> deltas;  // net change per account over them (no zeros)
  std::vector<std::string> closes;        // escrows the applied postings close
};

// The idempotency keys and the account names the batch's well-formed postings name, each
// sorted and unique: what a backend reads (and locks, in this order) into the snapshot.
std::vector<std::string> BatchKeys(std::span<const Posting> postings);
std::vector<std::string> BatchAccounts(std::span<const Posting> postings);

BatchPlan PlanBatch(std::span<const Posting> postings, const LedgerSnapshot& snapshot);

// The per-posting answers once the applied postings were written with `ids` (one per entry of
// plan.applied, in that order). REQUIRES: ids.size() == plan.applied.size().
std::vector<Result<PostingResult>> PlanAnswers(const BatchPlan& plan, std::span<const int64_t> ids);

}  // namespace telos::arcade
