// Building an Explanation and rendering it as text.
#include "telos/placement/explain.h"

#include <algorithm>
#include <numeric>

#include "filters.h"
#include "score.h"
#include "telos/base/assert.h"

namespace telos::placement {
namespace {

// Candidate positions in explanation order: the winner, the other scored ones best first, then
// the excluded ones as offered.
std::vector<size_t> ExplanationOrder(std::span<const Candidate> candidates,
                                     const PlacementDecision& decision) {
  std::vector<size_t> scored;
  std::vector<size_t> excluded;
  for (size_t i = 0; i < candidates.size(); ++i) {
    (decision.verdicts[i].scored() ? scored : excluded).push_back(i);
  }
  std::sort(scored.begin(), scored.end(), [&](size_t a, size_t b) {
    return RanksBefore(decision.verdicts[a], candidates[a], decision.verdicts[b], candidates[b]);
  });
  scored.insert(scored.end(), excluded.begin(), excluded.end());
  return scored;
}

std::string SignedPoints(int64_t points) {
  return (points >= 0 ? "+" : "") + std::to_string(points);
}

std::string TermsText(const TermPoints& terms) {
  std::string out;
  for (size_t t = 0; t < kTermCount; ++t) {
    if (terms[t] == 0) continue;
    if (!out.empty()) out += ", ";
    out += std::string(TermName(static_cast<Term>(t))) + " " + SignedPoints(terms[t]);
  }
  return out.empty() ? "no terms" : out;
}

}  // namespace

Explanation Explain(const PlacementRequest& request, std::span<const Candidate> candidates,
                    const PlacementDecision& decision) {
  RELEASE_ASSERT(decision.verdicts.size() == candidates.size(),
                 "Explain needs the candidates the decision was made from");
  Explanation out;
  out.player = request.player;
  out.map = request.map;
  out.outcome = decision.outcome;
  out.instance_id = decision.instance_id;
  out.endpoint = decision.endpoint;
  out.score = decision.score;
  out.candidates.reserve(candidates.size());
  for (size_t i : ExplanationOrder(candidates, decision)) {
    const Candidate& candidate = candidates[i];
    const Verdict& verdict = decision.verdicts[i];
    CandidateAccount account;
    account.instance_id = candidate.instance_id;
    account.excluded_by = verdict.excluded_by;
    if (!verdict.scored()) account.detail = FilterDetail(verdict.excluded_by, request, candidate);
    account.score = verdict.score;
    account.terms = verdict.terms;
    account.player_count = candidate.player_count;
    account.soft_cap = candidate.soft_cap;
    account.hard_cap = candidate.hard_cap;
    out.candidates.push_back(std::move(account));
  }
  return out;
}

std::string Explanation::ToText() const {
  std::string text = "player " + std::to_string(player);
  if (outcome == Outcome::kPlaced) {
    text += " placed on " + instance_id + " at " + endpoint + ", score " + std::to_string(score);
  } else {
    text += " refused on map " + map + ": no instance passed the filters (" +
            std::to_string(candidates.size()) + " candidates)";
  }
  text += "\n";
  for (const CandidateAccount& account : candidates) {
    text += "  " + account.instance_id;
    if (account.scored()) {
      text += " scored " + std::to_string(account.score) + ": " + TermsText(account.terms);
    } else {
      text +=
          " excluded by " + std::string(FilterName(account.excluded_by)) + ": " + account.detail;
    }
    text += "\n";
  }
  return text;
}

}  // namespace telos::placement
