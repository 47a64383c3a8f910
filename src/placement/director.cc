#include "telos/placement/director.h"

#include <algorithm>

#include "filters.h"
#include "score.h"
#include "telos/base/assert.h"
#include "telos/base/limits.h"

namespace telos::placement {

namespace {

// The director's loop, shared by both paths. `score_terms(i, candidate)` gives the terms of the
// candidate at position i once it has passed the filters; it is a template parameter so that
// each path compiles to its own loop with no per-candidate branch between them.
template <typename ScoreTermsFn>
void PlaceEach(const PlacementRequest& request, std::span<const Candidate> candidates,
               ScoreTermsFn score_terms, PlacementDecision& out) {
  RELEASE_ASSERT(candidates.size() <= limits::kInstancesPerMapMax,
                 "more candidates than limits::kInstancesPerMapMax");
  out.outcome = Outcome::kRefused;
  out.winner = kNoWinner;
  out.instance_id.clear();
  out.endpoint.clear();
  out.score = 0;
  out.verdicts.assign(candidates.size(), Verdict{});

  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& candidate = candidates[i];
    ASSERT(candidate.soft_cap > 0 && candidate.hard_cap >= candidate.soft_cap,
           "a candidate needs 0 < soft_cap <= hard_cap");
    ASSERT(std::is_sorted(candidate.players.begin(), candidate.players.end()),
           "Candidate::players must be sorted");
    Verdict& verdict = out.verdicts[i];
    verdict.excluded_by = FirstFailingFilter(request, candidate);
    if (!verdict.scored()) continue;
    verdict.terms = score_terms(i, candidate);
    verdict.score = SumPoints(verdict.terms);
    if (out.winner == kNoWinner ||
        RanksBefore(verdict, candidate, out.verdicts[out.winner], candidates[out.winner])) {
      out.winner = i;
    }
  }

  if (out.winner != kNoWinner) {
    const Candidate& winner = candidates[out.winner];
    out.outcome = Outcome::kPlaced;
    out.instance_id = winner.instance_id;
    out.endpoint = winner.endpoint;
    out.score = out.verdicts[out.winner].score;
  }
}

}  // namespace

PlacementDirector::PlacementDirector() : PlacementDirector(Weights{}) {}

PlacementDirector::PlacementDirector(Weights weights) : weights_(weights) {
  const Status valid = ValidateWeights(weights_);
  RELEASE_ASSERT(valid.ok(), valid.message());
}

PlacementDecision PlacementDirector::Place(const PlacementRequest& request,
                                           std::span<const Candidate> candidates) const {
  PlacementDecision decision;
  Place(request, candidates, decision);
  return decision;
}

void PlacementDirector::Place(const PlacementRequest& request,
                              std::span<const Candidate> candidates, PlacementDecision& out) const {
  const SocialSets social(request);
  PlaceEach(
      request, candidates,
      [&](size_t, const Candidate& candidate) {
        return ScoreTerms(weights_, request, social, candidate);
      },
      out);
}

PlacementDecision PlacementDirector::Place(const PlacementRequest& request,
                                           std::span<const Candidate> candidates,
                                           const RosterIndex& roster) const {
  PlacementDecision decision;
  Place(request, candidates, roster, decision);
  return decision;
}

void PlacementDirector::Place(const PlacementRequest& request,
                              std::span<const Candidate> candidates, const RosterIndex& roster,
                              PlacementDecision& out) const {
  // A shape mismatch means the owner forgot a rebuild: the plain path is slower but right.
  if (!roster.Matches(candidates)) {
    Place(request, candidates, out);
    return;
  }
  const SocialSets social(request);
  IndexedSocialCounts indexed(social, roster);
  PlaceEach(
      request, candidates,
      [&](size_t position, const Candidate& candidate) {
        const SocialCounts counts = indexed.Next(position);
        ASSERT(counts == CountSocial(social, candidate),
               "the roster index is stale: rebuild it after changing a candidate's players");
        return ScoreTerms(weights_, request, counts, candidate);
      },
      out);
}

}  // namespace telos::placement
