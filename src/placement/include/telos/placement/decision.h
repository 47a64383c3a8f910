// PlacementDecision: what PlacementDirector::Place answers, with a verdict for every candidate.
//
// A candidate is either excluded by the first hard filter it failed (and then not scored) or
// scored, with the points of each named term kept so that the choice can be explained later.
// Verdicts refer to candidates by position: verdicts[i] is about candidates[i] of the Place call.
// The decision itself copies only the winner's id and endpoint; Explain (explain.h) joins the
// verdicts with the candidates into a self-contained account.
//
// Thread safety: a plain value.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "telos/placement/weights.h"

namespace telos::placement {

// The hard filters, in the order they are applied; kNone means the candidate passed them all.
// Each is its own value because "your guild's instance runs last week's build" and "your guild's
// instance is full" send the person asking to different places.
enum class Filter : uint8_t {
  kNone,
  kMap,       // a different map
  kRegion,    // a different latency zone
  kBuild,     // a server build other than the client's
  kContent,   // a content catalog other than the client's
  kNotReady,  // starting, draining or gone
  kFull,      // at or above its hard cap
  kAccess,    // its access list does not admit the player
};

// "none", "map", "region", "build", "content", "not_ready", "full", "access".
std::string_view FilterName(Filter filter);

// Points per term; a term that did not apply holds zero.
using TermPoints = std::array<int64_t, kTermCount>;

struct Verdict {
  Filter excluded_by = Filter::kNone;
  int64_t score = 0;  // the sum of `terms`; zero when excluded
  TermPoints terms{};

  bool scored() const { return excluded_by == Filter::kNone; }
};

enum class Outcome : uint8_t { kPlaced, kRefused };

// "placed", "refused".
std::string_view OutcomeName(Outcome outcome);

inline constexpr size_t kNoWinner = static_cast<size_t>(-1);

struct PlacementDecision {
  Outcome outcome = Outcome::kRefused;
  size_t winner = kNoWinner;  // index into the candidates; kNoWinner when refused
  std::string instance_id;    // the winner's; empty when refused
  std::string endpoint;       // the winner's; empty when refused
  int64_t score = 0;          // the winner's
  std::vector<Verdict> verdicts;

  bool placed() const { return outcome == Outcome::kPlaced; }
};

}  // namespace telos::placement
