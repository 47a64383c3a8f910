// PlacementDirector: puts a player on the best public instance of a map.
//
// Place() applies the hard filters to every candidate (map, region, build, content, not ready,
// full, access, in that order; the first failure is the verdict and the candidate is not scored),
// then scores each survivor as the sum of the named terms in weights.h, and picks the highest.
// If nothing survives, the answer is a refusal. Either way every candidate gets a verdict.
//
// Ties break deterministically and independently of candidate order: higher score, then the
// fuller instance (consolidation over spreading), then the smaller instance_id.
//
// Pure logic: no clock, no I/O, no allocation beyond the decision's verdicts and small copies of
// the request's social lists.
//
// Two paths, one answer. The social terms (party, guild, friends) need to know which candidates
// the request's social players are on:
// - Plain: Place(request, candidates) searches every scored candidate's `players` for every
//   social player: social x candidates lookups. Always correct; fine for small maps.
// - Indexed: Place(request, candidates, roster) takes a RosterIndex built by the map's owner from
//   the same candidates (roster_index.h says who builds it and when to rebuild it) and looks
//   each social player up once: social lookups per placement. Use it on busy maps.
// Both produce identical decisions, verdicts and term points. An index that no longer matches
// the candidates' shape is ignored (the plain path runs); see RosterIndex::Matches.
// See docs/benchmarks.md for the costs.
//
// Thread safety: immutable after construction; Place may be called from any number of threads.
#pragma once

#include <span>

#include "telos/placement/decision.h"
#include "telos/placement/roster_index.h"
#include "telos/placement/types.h"
#include "telos/placement/weights.h"

namespace telos::placement {

class PlacementDirector {
 public:
  // The default weights.
  PlacementDirector();
  // REQUIRES: ValidateWeights(weights).ok(). Use ParseWeights / LoadWeightsFile to get
  // validated weights from data.
  explicit PlacementDirector(Weights weights);

  const Weights& weights() const { return weights_; }

  // REQUIRES: candidates.size() <= limits::kInstancesPerMapMax, and each candidate meets the
  // REQUIRES lines of Candidate (types.h).
  PlacementDecision Place(const PlacementRequest& request,
                          std::span<const Candidate> candidates) const;

  // As above, reusing `out`'s storage (hot paths and benchmarks). `out` is overwritten.
  void Place(const PlacementRequest& request, std::span<const Candidate> candidates,
             PlacementDecision& out) const;

  // The indexed path: the same decision, with the social players looked up in `roster`.
  // REQUIRES: `roster` was built from `candidates` (same candidates, same order) and no
  // candidate's `players` changed since. If roster.Matches(candidates) is false the index is
  // not used and the plain path runs; a stale index that still matches is a caller bug that
  // debug builds catch.
  PlacementDecision Place(const PlacementRequest& request, std::span<const Candidate> candidates,
                          const RosterIndex& roster) const;

  // As above, reusing `out`'s storage. `out` is overwritten.
  void Place(const PlacementRequest& request, std::span<const Candidate> candidates,
             const RosterIndex& roster, PlacementDecision& out) const;

 private:
  Weights weights_;
};

}  // namespace telos::placement
