// DecisionMemory: the last placement decision for each player on one map, kept so that a
// complaint that arrives hours later ("why am I not with my guild?") can still be answered.
//
// Every decision is kept, placements as well as refusals. Recall() tells three answers apart:
// nothing is held for the player (never asked, or forgotten), they were placed, or they were
// refused; an operator goes to different places next for each.
//
// Bounded: at most capacity() players are held. Recording a player who is already held replaces
// their entry and makes it the newest; recording a new player when full forgets the player whose
// entry is oldest. The map that owns this runs for weeks, so an unbounded record would be a leak.
//
// Time comes from the injected Clock (wall time, shown to people). The clock must outlive this.
//
// Thread safety: none. It belongs to the map's actor and is touched only on its executor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <unordered_map>

#include "telos/base/clock.h"
#include "telos/base/limits.h"
#include "telos/placement/explain.h"

namespace telos::placement {

enum class RecallKind : uint8_t { kNothingHeld, kPlaced, kRefused };

// "nothing_held", "placed", "refused".
std::string_view RecallKindName(RecallKind kind);

struct Recollection {
  RecallKind kind = RecallKind::kNothingHeld;
  WallTime decided_at{};    // meaningful unless kNothingHeld
  Explanation explanation;  // empty unless kNothingHeld is false

  bool held() const { return kind != RecallKind::kNothingHeld; }
};

class DecisionMemory {
 public:
  // REQUIRES: 0 < capacity <= limits::kPlacementMemoryPlayersMax.
  explicit DecisionMemory(const Clock& clock,
                          size_t capacity = limits::kPlacementMemoryPlayersDefault);

  DecisionMemory(const DecisionMemory&) = delete;
  DecisionMemory& operator=(const DecisionMemory&) = delete;

  // Keeps `explanation` as the latest decision for explanation.player, stamped with the
  // clock's wall time.
  void Record(Explanation explanation);

  Recollection Recall(PlayerId player) const;

  size_t size() const { return entries_.size(); }
  size_t capacity() const { return capacity_; }
  // How many entries have been forgotten to stay within capacity.
  uint64_t forgotten() const { return forgotten_; }

 private:
  struct Entry {
    WallTime decided_at;
    Explanation explanation;
    std::list<PlayerId>::iterator age_position;
  };

  const Clock& clock_;
  size_t capacity_;
  uint64_t forgotten_ = 0;
  std::list<PlayerId> oldest_first_;  // recording order; front is forgotten first
  std::unordered_map<PlayerId, Entry> entries_;
};

}  // namespace telos::placement
