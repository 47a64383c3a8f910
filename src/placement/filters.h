// The hard filters, private to the placement library. A candidate that fails one is not scored.
#pragma once

#include <string>

#include "telos/placement/decision.h"
#include "telos/placement/types.h"

namespace telos::placement {

// The first filter `candidate` fails for `request`, in the order of the Filter enum, or
// Filter::kNone if it passes them all.
Filter FirstFailingFilter(const PlacementRequest& request, const Candidate& candidate);

// Why `filter` excluded `candidate`, in a few words for an explanation.
// REQUIRES: filter != Filter::kNone.
std::string FilterDetail(Filter filter, const PlacementRequest& request,
                         const Candidate& candidate);

}  // namespace telos::placement
