// RosterIndex: which candidate instances list each player, so that a placement looks each of the
// request's party, guild and friends players up once instead of once per candidate.
//
// Who builds it: the map's owner, the same code that fills in the Candidate list. It is built
// from that list, once per map update (each time the owner refreshes the candidates from the
// instances' reports), and then passed to every PlacementDirector::Place call made with that
// same list until the next update. Building it touches every listed player once (see
// docs/benchmarks.md for the cost), so it pays for itself after a few placements.
//
// When it must be rebuilt: whenever the candidate list changes in a way that affects the index:
// a candidate added, removed or moved to another position, or a player added to or removed from
// any candidate's `players`. Changes to other fields (player_count, state, caps, versions, age)
// do not need a rebuild; the director reads those from the candidates on every call. An owner
// that bumps player_count for arrivals in flight, as types.h allows, keeps its index.
//
// What happens if it is absent or stale: Place without an index searches each candidate's
// `players` (the plain path); the decision is the same, only slower. Place with an index first
// makes a cheap shape check (Matches: the same number of candidates, each with the same number
// of listed players as at build time) and takes the plain path if it fails, so a forgotten
// rebuild after a join or a leave costs speed, not correctness. A stale index that keeps the
// shape (one player swapped for another on the same instance, candidates of equal size
// reordered) cannot be detected cheaply: it is a bug in the caller. Debug builds catch it by
// checking every indexed count against the plain path.
//
// The index refers to candidates by position in the span it was built from, as verdicts do.
// It copies no strings and holds no pointer into the candidates.
//
// Thread safety: immutable after construction; any number of threads may read it at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "telos/placement/types.h"

namespace telos::placement {

class RosterIndex {
 public:
  // An index of no candidates: it matches only an empty candidate list.
  RosterIndex() = default;

  // REQUIRES: candidates.size() <= limits::kInstancesPerMapMax, and each candidate's `players`
  // is sorted ascending (types.h). A player listed twice in one candidate counts once, as in
  // the plain path.
  explicit RosterIndex(std::span<const Candidate> candidates);

  // The positions (into the candidates the index was built from) of the candidates whose
  // `players` list `player`, ascending; empty if none does. Valid until the index is destroyed
  // or assigned.
  std::span<const uint32_t> PositionsOf(PlayerId player) const;

  // Whether `candidates` still has the shape this index was built from: as many candidates,
  // each with a `players` list of the same length. Costs one comparison per candidate. A cheap
  // guard, not a proof (see the header comment).
  bool Matches(std::span<const Candidate> candidates) const;

  size_t candidate_count() const { return listed_.size(); }
  // Distinct players listed by at least one candidate.
  size_t player_count() const { return players_; }

 private:
  // One open-addressing slot per distinct player. A player on exactly one candidate (the usual
  // case) keeps that position inline in `first`, so a lookup is a single load; one on several
  // keeps `count` positions in `overflow_` starting at `first`. count == 0 marks an empty slot.
  struct Slot {
    PlayerId player = 0;
    uint32_t first = 0;
    uint32_t count = 0;
  };

  const Slot* Find(PlayerId player) const;
  Slot& FindOrInsert(PlayerId player);
  size_t Home(PlayerId player) const;

  std::vector<Slot> slots_;         // power-of-two size, at most half full; empty if no player
  std::vector<uint32_t> overflow_;  // positions of players on more than one candidate
  std::vector<uint32_t> listed_;    // players.size() per candidate at build time, for Matches
  size_t players_ = 0;
  uint32_t shift_ = 64;  // 64 - log2(slots_.size())
};

}  // namespace telos::placement
