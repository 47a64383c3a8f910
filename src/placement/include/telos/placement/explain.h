// Explanation: a self-contained, readable account of one placement decision.
//
// Explain() joins a decision with the request and candidates it was made from, copying what an
// operator needs hours later: the outcome, the winner and its score term by term, every other
// scored candidate with its terms, and every excluded candidate with the filter that excluded it
// and why. Candidates are listed winner first, then the other scored ones best first (the
// director's own ranking), then the excluded ones in the order they were offered.
//
// ToText() is for people (a CLI, a log line); ToJson() carries the same facts for tools. Both list
// only the terms that contributed points.
//
// Thread safety: a plain value.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "telos/placement/decision.h"
#include "telos/placement/types.h"

namespace telos::placement {

struct CandidateAccount {
  std::string instance_id;
  Filter excluded_by = Filter::kNone;
  std::string detail;  // why the filter excluded it; empty when scored
  int64_t score = 0;
  TermPoints terms{};
  int32_t player_count = 0;
  int32_t soft_cap = 0;
  int32_t hard_cap = 0;

  bool scored() const { return excluded_by == Filter::kNone; }
};

struct Explanation {
  PlayerId player = 0;
  std::string map;
  Outcome outcome = Outcome::kRefused;
  std::string instance_id;  // empty when refused
  std::string endpoint;     // empty when refused
  int64_t score = 0;
  std::vector<CandidateAccount> candidates;

  std::string ToText() const;
  std::string ToJson() const;
};

// REQUIRES: `decision` was returned by Place(request, candidates) with these same arguments.
Explanation Explain(const PlacementRequest& request, std::span<const Candidate> candidates,
                    const PlacementDecision& decision);

}  // namespace telos::placement
