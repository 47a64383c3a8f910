// Stable names of the placement enums, used in explanations, JSON and logs.
#include "telos/placement/decision.h"
#include "telos/placement/decision_memory.h"
#include "telos/placement/map_fleet.h"
#include "telos/placement/types.h"
#include "telos/placement/weights.h"

namespace telos::placement {

std::string_view InstanceStateName(InstanceState state) {
  switch (state) {
    case InstanceState::kStarting: return "starting";
    case InstanceState::kReady: return "ready";
    case InstanceState::kDraining: return "draining";
    case InstanceState::kGone: return "gone";
  }
  return "unknown";
}

std::string_view TermName(Term term) {
  switch (term) {
    case Term::kParty: return "party";
    case Term::kGuild: return "guild";
    case Term::kFriends: return "friends";
    case Term::kLocale: return "locale";
    case Term::kFill: return "fill";
    case Term::kOverfull: return "overfull";
    case Term::kAge: return "age";
    case Term::kAntiflap: return "antiflap";
  }
  return "unknown";
}

std::string_view FilterName(Filter filter) {
  switch (filter) {
    case Filter::kNone: return "none";
    case Filter::kMap: return "map";
    case Filter::kRegion: return "region";
    case Filter::kBuild: return "build";
    case Filter::kContent: return "content";
    case Filter::kNotReady: return "not_ready";
    case Filter::kFull: return "full";
    case Filter::kAccess: return "access";
  }
  return "unknown";
}

std::string_view OutcomeName(Outcome outcome) {
  return outcome == Outcome::kPlaced ? "placed" : "refused";
}

std::string_view RecallKindName(RecallKind kind) {
  switch (kind) {
    case RecallKind::kNothingHeld: return "nothing_held";
    case RecallKind::kPlaced: return "placed";
    case RecallKind::kRefused: return "refused";
  }
  return "unknown";
}

std::string_view FleetActionKindName(FleetActionKind kind) {
  switch (kind) {
    case FleetActionKind::kNone: return "none";
    case FleetActionKind::kSpawn: return "spawn";
    case FleetActionKind::kDrain: return "drain";
  }
  return "unknown";
}

std::string_view FleetReasonName(FleetReason reason) {
  switch (reason) {
    case FleetReason::kNone: return "none";
    case FleetReason::kNoInstance: return "no_instance";
    case FleetReason::kAllAtSoftCap: return "all_at_soft_cap";
    case FleetReason::kProjectedArrivals: return "projected_arrivals";
    case FleetReason::kMerge: return "merge";
  }
  return "unknown";
}

}  // namespace telos::placement
