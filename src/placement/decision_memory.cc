#include "telos/placement/decision_memory.h"

#include "telos/base/assert.h"

namespace telos::placement {

DecisionMemory::DecisionMemory(const Clock& clock, size_t capacity)
    : clock_(clock), capacity_(capacity) {
  RELEASE_ASSERT(capacity_ > 0 && capacity_ <= limits::kPlacementMemoryPlayersMax,
                 "decision memory capacity out of range");
  entries_.reserve(capacity_);
}

void DecisionMemory::Record(Explanation explanation) {
  const PlayerId player = explanation.player;
  const WallTime now = clock_.WallNow();
  if (auto it = entries_.find(player); it != entries_.end()) {
    // Already held: replace, and move to the newest end of the order.
    oldest_first_.splice(oldest_first_.end(), oldest_first_, it->second.age_position);
    it->second.decided_at = now;
    it->second.explanation = std::move(explanation);
    return;
  }
  if (entries_.size() == capacity_) {
    entries_.erase(oldest_first_.front());
    oldest_first_.pop_front();
    ++forgotten_;
  }
  oldest_first_.push_back(player);
  entries_.emplace(player, Entry{now, std::move(explanation), std::prev(oldest_first_.end())});
  ASSERT(entries_.size() <= capacity_ && oldest_first_.size() == entries_.size(),
         "decision memory bookkeeping");
}

Recollection DecisionMemory::Recall(PlayerId player) const {
  auto it = entries_.find(player);
  if (it == entries_.end()) return Recollection{};
  Recollection out;
  out.kind = it->second.explanation.outcome == Outcome::kPlaced ? RecallKind::kPlaced
                                                                : RecallKind::kRefused;
  out.decided_at = it->second.decided_at;
  out.explanation = it->second.explanation;
  return out;
}

}  // namespace telos::placement
