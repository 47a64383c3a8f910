#include "filters.h"

#include <algorithm>

namespace telos::placement {

Filter FirstFailingFilter(const PlacementRequest& request, const Candidate& candidate) {
  if (candidate.map != request.map) return Filter::kMap;
  if (candidate.region != request.region) return Filter::kRegion;
  if (candidate.build != request.build) return Filter::kBuild;
  if (candidate.content != request.content) return Filter::kContent;
  if (candidate.state != InstanceState::kReady) return Filter::kNotReady;
  if (candidate.player_count >= candidate.hard_cap) return Filter::kFull;
  if (!candidate.access_list.empty() &&
      !std::binary_search(candidate.access_list.begin(), candidate.access_list.end(),
                          request.player)) {
    return Filter::kAccess;
  }
  return Filter::kNone;
}

namespace {

std::string Mismatch(std::string_view what, const std::string& instance_has,
                     const std::string& player_has) {
  return "instance " + std::string(what) + " '" + instance_has + "', player's '" + player_has + "'";
}

}  // namespace

std::string FilterDetail(Filter filter, const PlacementRequest& request,
                         const Candidate& candidate) {
  switch (filter) {
    case Filter::kMap: return Mismatch("map", candidate.map, request.map);
    case Filter::kRegion: return Mismatch("region", candidate.region, request.region);
    case Filter::kBuild: return Mismatch("build", candidate.build, request.build);
    case Filter::kContent: return Mismatch("content", candidate.content, request.content);
    case Filter::kNotReady: return "instance is " + std::string(InstanceStateName(candidate.state));
    case Filter::kFull:
      return std::to_string(candidate.player_count) + " players at hard cap " +
             std::to_string(candidate.hard_cap);
    case Filter::kAccess: return "player " + std::to_string(request.player) + " not on access list";
    case Filter::kNone: break;
  }
  ASSERT(false, "FilterDetail needs a filter that excluded the candidate");
  return {};
}

}  // namespace telos::placement
