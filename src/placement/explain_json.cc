// Rendering an Explanation as JSON, with Boost.JSON. Objects keep insertion order, so the
// output is stable for tests and diffs. Instance ids, endpoints, map names and filter details
// come from operators and the fleet: repaired to valid UTF-8 first, since the serializer copies
// bytes as they are.
#include <boost/json.hpp>

#include "telos/base/utf8.h"
#include "telos/placement/explain.h"

namespace telos::placement {
namespace {

boost::json::string Text(std::string_view text) {
  return boost::json::string(SanitizeUtf8(text));
}

boost::json::object TermsJson(const TermPoints& terms) {
  boost::json::object out;
  for (size_t t = 0; t < kTermCount; ++t) {
    if (terms[t] != 0) out[TermName(static_cast<Term>(t))] = terms[t];
  }
  return out;
}

boost::json::object AccountJson(const CandidateAccount& account) {
  boost::json::object out;
  out["instance"] = Text(account.instance_id);
  if (account.scored()) {
    out["verdict"] = "scored";
    out["score"] = account.score;
    out["terms"] = TermsJson(account.terms);
  } else {
    out["verdict"] = "excluded";
    out["filter"] = FilterName(account.excluded_by);
    out["detail"] = Text(account.detail);
  }
  out["players"] = account.player_count;
  out["soft_cap"] = account.soft_cap;
  out["hard_cap"] = account.hard_cap;
  return out;
}

}  // namespace

std::string Explanation::ToJson() const {
  boost::json::object out;
  out["player"] = player;
  out["map"] = Text(map);
  out["outcome"] = OutcomeName(outcome);
  if (outcome == Outcome::kPlaced) {
    out["instance"] = Text(instance_id);
    out["endpoint"] = Text(endpoint);
    out["score"] = score;
  }
  boost::json::array accounts;
  accounts.reserve(candidates.size());
  for (const CandidateAccount& account : candidates) accounts.push_back(AccountJson(account));
  out["candidates"] = std::move(accounts);
  return boost::json::serialize(out);
}

}  // namespace telos::placement
