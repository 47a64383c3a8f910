// The rebalance planner: validation, the unit model and the greedy steps (see the header).
#include "telos/director/rebalance_planner.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace telos::director {
namespace {

constexpr size_t kNoShard = static_cast<size_t>(-1);

// A zone or the part of a colocation group on one shard: what one move carries.
struct Unit {
  std::vector<size_t> zones;  // indices into the sorted zone table, ascending
  size_t shard = kNoShard;
  int64_t players = 0;
  bool locked = false;     // some zone is in flight or cooling down
  bool moved = false;      // planned by this call
  std::string_view group;  // empty: not in a group
};

struct ShardRow {
  std::string id;
  bool draining = false;
  int64_t players = 0;
};

Status CheckId(std::string_view what, std::string_view id) {
  if (id.empty()) return Status::InvalidArgument(std::string(what) + " id is empty");
  return Status::Ok();
}

// The spread over non-draining shards; 0 with fewer than two of them.
int64_t Spread(const std::vector<ShardRow>& shards) {
  std::optional<int64_t> lo;
  std::optional<int64_t> hi;
  for (const ShardRow& s : shards) {
    if (s.draining) continue;
    lo = lo ? std::min(*lo, s.players) : s.players;
    hi = hi ? std::max(*hi, s.players) : s.players;
  }
  return lo ? *hi - *lo : 0;
}

std::vector<ShardLoadView> Views(const std::vector<ShardRow>& shards) {
  std::vector<ShardLoadView> out;
  out.reserve(shards.size());
  for (const ShardRow& s : shards) out.push_back({s.id, s.draining, s.players});
  return out;
}

std::string JoinZones(const std::vector<std::string>& zones) {
  std::string out;
  for (const std::string& z : zones) {
    if (!out.empty()) out += ", ";
    out += z;
  }
  return out;
}

std::string MoveText(const PlannedMove& move) {
  const MoveExplanation& why = move.why;
  std::string out = (move.zones.size() == 1 ? "move zone " : "move zones ") + JoinZones(move.zones);
  if (!why.colocation_group.empty()) out += " (colocation group " + why.colocation_group + ")";
  out += ", " + std::to_string(move.players) + " players, from " + move.from + " (" +
         std::to_string(why.source_players_before) + " -> " +
         std::to_string(why.source_players_after) + ") to " + move.to + " (" +
         std::to_string(why.target_players_before) + " -> " +
         std::to_string(why.target_players_after) + "): ";
  out += move.from + (why.source_reason == SourceReason::kFullest
                          ? " is the fullest shard"
                          : " is the fullest shard with a unit worth moving (" +
                                std::to_string(why.fuller_shards_passed) + " fuller had none)");
  out += "; of its " + std::to_string(why.units_considered) + " movable units (" +
         std::to_string(why.units_locked) + " in flight or cooling down) this cuts the gap most, " +
         std::to_string(why.gap_before) + " -> " + std::to_string(why.gap_after) + " (cut " +
         std::to_string(why.cut) + " > margin " + std::to_string(why.margin_players) + ")";
  out += "; " + move.to + " is the least-loaded shard";
  if (why.draining_shards_skipped > 0) {
    out += " not draining (" + std::to_string(why.draining_shards_skipped) + " draining skipped)";
  }
  out += "; fleet spread " + std::to_string(why.spread_before) + " -> " +
         std::to_string(why.spread_after);
  return out;
}

// Names the first id that appears twice in `ids` (sorted in place), or nullopt.
std::optional<std::string_view> Duplicate(std::vector<std::string_view>& ids) {
  std::sort(ids.begin(), ids.end());
  auto it = std::adjacent_find(ids.begin(), ids.end());
  if (it == ids.end()) return std::nullopt;
  return *it;
}

Status ValidateInput(const RebalanceInput& input) {
  if (input.shards.size() > limits::kDirectorShardsMax) {
    return Status::InvalidArgument("more than " + std::to_string(limits::kDirectorShardsMax) +
                                   " shards");
  }
  if (input.zones.size() > limits::kDirectorZonesMax ||
      input.last_moved.size() > limits::kDirectorZonesMax ||
      input.in_flight.size() > limits::kDirectorZonesMax) {
    return Status::InvalidArgument("more than " + std::to_string(limits::kDirectorZonesMax) +
                                   " zones");
  }
  if (input.colocation_groups.size() > limits::kDirectorColocationGroupsMax) {
    return Status::InvalidArgument(
        "more than " + std::to_string(limits::kDirectorColocationGroupsMax) + " colocation groups");
  }
  std::vector<std::string_view> ids;
  ids.reserve(std::max(input.shards.size(), input.zones.size()));
  for (const ShardState& s : input.shards) {
    TELOS_RETURN_IF_ERROR(CheckId("shard", s.id));
    ids.push_back(s.id);
  }
  if (auto d = Duplicate(ids)) return Status::InvalidArgument("duplicate shard " + std::string(*d));
  ids.clear();
  for (const ZoneLoad& z : input.zones) {
    TELOS_RETURN_IF_ERROR(CheckId("zone", z.zone));
    TELOS_RETURN_IF_ERROR(CheckId("owner shard", z.shard));
    if (z.players < 0 || z.players > limits::kDirectorZonePlayersMax) {
      return Status::InvalidArgument("zone " + z.zone + " players out of range");
    }
    ids.push_back(z.zone);
  }
  if (auto d = Duplicate(ids)) return Status::InvalidArgument("duplicate zone " + std::string(*d));
  ids.clear();
  for (const ColocationGroup& g : input.colocation_groups) {
    if (g.zones.empty()) return Status::InvalidArgument("colocation group with no zones");
    if (g.zones.size() > limits::kDirectorZonesPerColocationGroupMax) {
      return Status::InvalidArgument("colocation group with more than " +
                                     std::to_string(limits::kDirectorZonesPerColocationGroupMax) +
                                     " zones");
    }
    for (const std::string& z : g.zones) {
      TELOS_RETURN_IF_ERROR(CheckId("colocated zone", z));
      ids.push_back(z);
    }
  }
  if (auto d = Duplicate(ids)) {
    return Status::InvalidArgument("zone " + std::string(*d) + " is in two colocation groups");
  }
  ids.clear();
  for (const InFlightMove& m : input.in_flight) {
    TELOS_RETURN_IF_ERROR(CheckId("in-flight zone", m.zone));
    TELOS_RETURN_IF_ERROR(CheckId("in-flight source", m.from));
    TELOS_RETURN_IF_ERROR(CheckId("in-flight target", m.to));
    ids.push_back(m.zone);
  }
  if (auto d = Duplicate(ids)) {
    return Status::InvalidArgument("two in-flight moves of zone " + std::string(*d));
  }
  for (const ZoneLastMoved& m : input.last_moved) {
    TELOS_RETURN_IF_ERROR(CheckId("last-moved zone", m.zone));
  }
  return Status::Ok();
}

}  // namespace

Status ValidateRebalanceConfig(const RebalanceConfig& config) {
  if (config.margin_players < 0 || config.margin_players > limits::kDirectorMarginPlayersMax) {
    return Status::InvalidArgument("margin_players out of range");
  }
  if (config.moves_in_flight_max < 1 ||
      config.moves_in_flight_max > limits::kDirectorMovesInFlightMax) {
    return Status::InvalidArgument("moves_in_flight_max out of range");
  }
  if (config.zone_cooldown_ms < 0 || config.zone_cooldown_ms > limits::kDirectorZoneCooldownMsMax) {
    return Status::InvalidArgument("zone_cooldown_ms out of range");
  }
  return Status::Ok();
}

std::string_view SourceReasonName(SourceReason reason) {
  switch (reason) {
    case SourceReason::kFullest: return "fullest";
    case SourceReason::kFullestWithMovableUnit: return "fullest_with_movable_unit";
  }
  return "unknown";
}

std::string_view ZoneReasonName(ZoneReason reason) {
  switch (reason) {
    case ZoneReason::kLargestCut: return "largest_cut";
  }
  return "unknown";
}

std::string_view TargetReasonName(TargetReason reason) {
  switch (reason) {
    case TargetReason::kLeastLoaded: return "least_loaded";
  }
  return "unknown";
}

std::string_view PlanStopName(PlanStop stop) {
  switch (stop) {
    case PlanStop::kInFlightFull: return "in_flight_full";
    case PlanStop::kBalanced: return "balanced";
    case PlanStop::kNoMoveCutsEnough: return "no_move_cuts_enough";
    case PlanStop::kTooFewShards: return "too_few_shards";
  }
  return "unknown";
}

std::string RebalancePlan::Describe() const {
  std::string out = std::to_string(moves.size()) + (moves.size() == 1 ? " move" : " moves") +
                    "; spread " + std::to_string(spread_before) + " -> " +
                    std::to_string(spread_after) + "; " + std::to_string(moves_in_flight) +
                    " in flight before; stop: " + std::string(PlanStopName(stop));
  if (zones_cooling_down > 0) out += "; " + std::to_string(zones_cooling_down) + " cooling down";
  if (zones_unplaced > 0) out += "; " + std::to_string(zones_unplaced) + " without a live owner";
  return out;
}

Result<RebalancePlan> PlanRebalance(const RebalanceInput& input, const RebalanceConfig& config) {
  RELEASE_ASSERT(ValidateRebalanceConfig(config).ok(), "PlanRebalance needs a valid config");
  TELOS_RETURN_IF_ERROR(ValidateInput(input));

  // Shards and zones sorted by id, so every tie below breaks the same way whatever the input
  // order; both are found by binary search.
  std::vector<ShardRow> shards;
  shards.reserve(input.shards.size());
  for (const ShardState& s : input.shards) shards.push_back({s.id, s.draining, 0});
  std::sort(shards.begin(), shards.end(),
            [](const ShardRow& a, const ShardRow& b) { return a.id < b.id; });
  auto find_shard = [&](std::string_view id) {
    auto it =
        std::lower_bound(shards.begin(), shards.end(), id,
                         [](const ShardRow& row, std::string_view key) { return row.id < key; });
    return it != shards.end() && it->id == id ? static_cast<size_t>(it - shards.begin()) : kNoShard;
  };

  struct ZoneRow {
    std::string_view id;
    size_t shard = kNoShard;
    int64_t players = 0;
    bool in_flight = false;
    bool cooling = false;
    int64_t group = -1;  // index into input.colocation_groups
  };
  std::vector<ZoneRow> zones;
  zones.reserve(input.zones.size());
  for (const ZoneLoad& z : input.zones) zones.push_back({z.zone, find_shard(z.shard), z.players});
  std::sort(zones.begin(), zones.end(),
            [](const ZoneRow& a, const ZoneRow& b) { return a.id < b.id; });
  auto find_zone = [&](std::string_view id) -> ZoneRow* {
    auto it =
        std::lower_bound(zones.begin(), zones.end(), id,
                         [](const ZoneRow& row, std::string_view key) { return row.id < key; });
    return it != zones.end() && it->id == id ? &*it : nullptr;
  };

  RebalancePlan plan;
  for (const ZoneLastMoved& m : input.last_moved) {
    ZoneRow* z = find_zone(m.zone);
    if (z != nullptr && input.now_ms - m.moved_at_ms < config.zone_cooldown_ms) z->cooling = true;
  }
  std::vector<std::string_view> group_names;
  group_names.reserve(input.colocation_groups.size());
  // Every grouped zone's group, reported or not (an in-flight zone may be reported by nobody).
  std::map<std::string_view, int64_t> group_of;
  for (size_t g = 0; g < input.colocation_groups.size(); ++g) {
    const ColocationGroup& group = input.colocation_groups[g];
    group_names.push_back(group.name.empty() ? std::string_view(*std::min_element(
                                                   group.zones.begin(), group.zones.end()))
                                             : std::string_view(group.name));
    for (const std::string& id : group.zones) {
      group_of[id] = static_cast<int64_t>(g);
      if (ZoneRow* z = find_zone(id)) z->group = static_cast<int64_t>(g);
    }
  }

  // In-flight moves: the zone is locked and its players are counted on the target already. A
  // colocation group's zones going the same way are one move. A flight is known by its group's
  // index, or by its zone when it is in no group (group -1), never by a name: group names are
  // free text and need not differ from each other or from zone ids.
  std::set<std::tuple<int64_t, std::string_view, std::string_view, std::string_view>> flights;
  for (const InFlightMove& m : input.in_flight) {
    ZoneRow* z = find_zone(m.zone);
    const auto grouped = group_of.find(m.zone);
    if (grouped != group_of.end()) {
      flights.insert({grouped->second, std::string_view(), m.from, m.to});
    } else {
      flights.insert({-1, m.zone, m.from, m.to});
    }
    if (z == nullptr) continue;  // nothing to lock or count
    z->in_flight = true;
    const size_t from = find_shard(m.from);
    const size_t to = find_shard(m.to);
    // Only a move from the zone's live owner is on its way: when the source is not live, the
    // zone has no owner (kNoShard, which find_shard also returns for the dead source) and its
    // drain will not happen, so it stays unplaced, left to claim-from-pool.
    if (from != kNoShard && z->shard == from && to != kNoShard) z->shard = to;
  }
  plan.moves_in_flight = static_cast<int64_t>(flights.size());

  // Units: a group's zones on one shard together, every other zone alone, in zone-id order (so
  // each unit's zone list is sorted and its first zone is its smallest).
  std::vector<Unit> units;
  std::map<std::pair<int64_t, size_t>, size_t> group_unit;  // (group, shard) -> unit
  for (size_t i = 0; i < zones.size(); ++i) {
    const ZoneRow& row = zones[i];
    if (row.shard == kNoShard) {
      ++plan.zones_unplaced;
      continue;
    }
    shards[row.shard].players += row.players;
    if (row.in_flight) ++plan.zones_in_flight;
    if (row.cooling && !row.in_flight) ++plan.zones_cooling_down;
    size_t u;
    if (row.group < 0) {
      u = units.size();
      units.push_back(Unit{});
    } else {
      auto [it, fresh] = group_unit.try_emplace({row.group, row.shard}, units.size());
      if (fresh) {
        units.push_back(Unit{});
        units.back().group = group_names[static_cast<size_t>(row.group)];
      }
      u = it->second;
    }
    Unit& unit = units[u];
    unit.zones.push_back(i);
    unit.shard = row.shard;
    unit.players += row.players;
    unit.locked = unit.locked || row.in_flight || row.cooling;
  }
  std::vector<std::vector<size_t>> units_on(shards.size());
  for (size_t u = 0; u < units.size(); ++u) units_on[units[u].shard].push_back(u);

  plan.loads_before = Views(shards);
  plan.spread_before = Spread(shards);

  int64_t draining = 0;
  for (const ShardRow& s : shards) draining += s.draining ? 1 : 0;
  const auto non_draining = static_cast<int64_t>(shards.size()) - draining;

  std::vector<size_t> order;  // non-draining shards, fullest first
  int64_t in_flight = plan.moves_in_flight;
  while (true) {
    if (non_draining < 2) {
      plan.stop = PlanStop::kTooFewShards;
      break;
    }
    if (in_flight >= config.moves_in_flight_max) {
      plan.stop = PlanStop::kInFlightFull;
      break;
    }
    const int64_t spread = Spread(shards);
    if (spread <= config.margin_players) {
      plan.stop = PlanStop::kBalanced;
      break;
    }
    order.clear();
    for (size_t i = 0; i < shards.size(); ++i) {
      if (!shards[i].draining) order.push_back(i);
    }
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (shards[a].players != shards[b].players) return shards[a].players > shards[b].players;
      return shards[a].id < shards[b].id;
    });
    // The least loaded, ties to the smaller id (not simply the last of `order`).
    size_t target = order.back();
    for (size_t i : order) {
      if (shards[i].players < shards[target].players ||
          (shards[i].players == shards[target].players && shards[i].id < shards[target].id)) {
        target = i;
      }
    }
    const int64_t target_players = shards[target].players;

    std::optional<size_t> best;
    int64_t best_cut = 0;
    size_t source = kNoShard;
    int64_t passed = 0;
    int64_t considered = 0;
    int64_t locked = 0;
    for (size_t s : order) {
      if (s == target || shards[s].players <= target_players) break;
      const int64_t gap = shards[s].players - target_players;
      int64_t here_considered = 0;
      int64_t here_locked = 0;
      for (size_t u : units_on[s]) {
        const Unit& unit = units[u];
        if (unit.locked || unit.moved) {
          ++here_locked;
          continue;
        }
        ++here_considered;
        if (unit.players <= 0) continue;
        const int64_t cut = gap - std::llabs(gap - 2 * unit.players);
        if (cut <= config.margin_players) continue;
        const bool better =
            !best || cut > best_cut ||
            (cut == best_cut &&
             (unit.players < units[*best].players ||
              (unit.players == units[*best].players &&
               zones[unit.zones.front()].id < zones[units[*best].zones.front()].id)));
        if (better) {
          best = u;
          best_cut = cut;
        }
      }
      if (best) {
        source = s;
        considered = here_considered;
        locked = here_locked;
        break;
      }
      ++passed;
    }
    if (!best) {
      plan.stop = PlanStop::kNoMoveCutsEnough;
      break;
    }

    Unit& unit = units[*best];
    PlannedMove move;
    for (size_t z : unit.zones) move.zones.emplace_back(zones[z].id);
    move.from = shards[source].id;
    move.to = shards[target].id;
    move.players = unit.players;
    MoveExplanation& why = move.why;
    why.source_players_before = shards[source].players;
    why.target_players_before = target_players;
    why.gap_before = shards[source].players - target_players;
    why.spread_before = spread;
    why.margin_players = config.margin_players;
    why.source_reason =
        passed == 0 ? SourceReason::kFullest : SourceReason::kFullestWithMovableUnit;
    why.fuller_shards_passed = passed;
    why.zone_reason = ZoneReason::kLargestCut;
    why.units_considered = considered;
    why.units_locked = locked;
    why.target_reason = TargetReason::kLeastLoaded;
    why.draining_shards_skipped = draining;
    why.colocation_group = std::string(unit.group);

    shards[source].players -= unit.players;
    shards[target].players += unit.players;
    unit.shard = target;
    unit.moved = true;
    units_on[target].push_back(*best);
    std::erase(units_on[source], *best);

    why.source_players_after = shards[source].players;
    why.target_players_after = shards[target].players;
    why.gap_after = std::llabs(why.source_players_after - why.target_players_after);
    why.cut = why.gap_before - why.gap_after;
    why.spread_after = Spread(shards);
    move.text = MoveText(move);
    plan.moves.push_back(std::move(move));
    ++in_flight;
  }

  plan.loads_after = Views(shards);
  plan.spread_after = Spread(shards);
  return plan;
}

}  // namespace telos::director
