// RebalanceSim: the fleet around the planner, and the checks of every plan (see the header).
#include "rebalance_sim.h"

#include <algorithm>
#include <set>

#include "telos/base/assert.h"

namespace telos::director::sim {

RebalanceSim::RebalanceSim(uint64_t seed, RebalanceConfig config)
    : config_(config), random_(seed), start_(clock_.Now()) {
  RELEASE_ASSERT(ValidateRebalanceConfig(config_).ok(), "simulation config");
}

void RebalanceSim::AddShard(const std::string& id, bool draining) {
  shards_[id] = draining;
}

void RebalanceSim::SetDraining(const std::string& id, bool draining) {
  RELEASE_ASSERT(shards_.contains(id), "unknown shard " + id);
  shards_[id] = draining;
}

void RebalanceSim::AddZone(const std::string& id, const std::string& shard, int64_t players) {
  zones_[id] = SimZone{shard, players, -1};
}

void RebalanceSim::AddGroup(const std::string& name, const std::vector<std::string>& zones) {
  const int index = static_cast<int>(groups_.size());
  for (const std::string& z : zones) {
    RELEASE_ASSERT(zones_.contains(z) && zones_[z].group < 0, "group zone " + z);
    zones_[z].group = index;
  }
  group_names_.push_back(name);
  groups_.push_back(zones);
}

void RebalanceSim::SetPlayers(const std::string& zone, int64_t players) {
  zones_.at(zone).players = std::max<int64_t>(0, players);
}

void RebalanceSim::Fail(std::string message) {
  if (!failure_) failure_ = "at " + std::to_string(now_ms()) + " ms: " + std::move(message);
}

void RebalanceSim::CompleteDueFlights() {
  const int64_t now = now_ms();
  std::erase_if(flights_, [&](const Flight& f) {
    if (f.done_ms > now) return false;
    if (!f.expires) {
      for (const std::string& z : f.zones) {
        zones_.at(z).shard = f.to;
        last_moved_ms_[z] = f.done_ms;
      }
    }
    return true;
  });
}

RebalanceInput RebalanceSim::Input() const {
  RebalanceInput input;
  input.now_ms = now_ms();
  for (const auto& [id, draining] : shards_) input.shards.push_back({id, draining});
  for (const auto& [id, zone] : zones_) input.zones.push_back({id, zone.shard, zone.players});
  for (const auto& [id, at] : last_moved_ms_) input.last_moved.push_back({id, at});
  for (size_t g = 0; g < groups_.size(); ++g) {
    input.colocation_groups.push_back({group_names_[g], groups_[g]});
  }
  for (const Flight& f : flights_) {
    for (const std::string& z : f.zones) input.in_flight.push_back({z, f.from, f.to});
  }
  return input;
}

void RebalanceSim::Check(const RebalancePlan& plan) {
  if (plan.moves_in_flight != static_cast<int64_t>(flights_.size())) {
    Fail("plan counts " + std::to_string(plan.moves_in_flight) + " moves in flight, the fleet " +
         std::to_string(flights_.size()));
  }
  if (static_cast<int64_t>(flights_.size() + plan.moves.size()) > config_.moves_in_flight_max) {
    Fail("more than moves_in_flight_max moves in flight");
  }
  std::set<std::string> flying;
  for (const Flight& f : flights_) flying.insert(f.zones.begin(), f.zones.end());
  for (const PlannedMove& move : plan.moves) {
    auto target = shards_.find(move.to);
    if (target == shards_.end()) Fail("move to unknown shard " + move.to);
    if (target != shards_.end() && target->second) Fail("move onto draining shard: " + move.text);
    if (move.to == move.from) Fail("move onto its own source: " + move.text);
    auto source = shards_.find(move.from);
    if (source != shards_.end() && source->second) Fail("move off a draining shard: " + move.text);
    int64_t players = 0;
    for (const std::string& z : move.zones) {
      const SimZone& zone = zones_.at(z);
      players += zone.players;
      if (zone.shard != move.from) Fail("zone " + z + " is not on " + move.from);
      if (flying.contains(z)) Fail("zone " + z + " moved while in flight");
      auto moved = last_moved_ms_.find(z);
      if (moved != last_moved_ms_.end() && now_ms() - moved->second < config_.zone_cooldown_ms) {
        Fail("zone " + z + " moved while cooling down");
      }
      if (zone.group >= 0) {
        std::vector<std::string> part;
        for (const std::string& member : groups_[static_cast<size_t>(zone.group)]) {
          if (zones_.at(member).shard == move.from) part.push_back(member);
        }
        std::sort(part.begin(), part.end());
        if (part != move.zones) Fail("move splits colocation group: " + move.text);
      }
      flying.insert(z);  // a zone appears in one move of a plan at most
    }
    if (players != move.players) Fail("move's players do not add up: " + move.text);
    const MoveExplanation& why = move.why;
    if (why.cut <= config_.margin_players) Fail("move within the margin: " + move.text);
    if (why.source_players_before - players != why.source_players_after ||
        why.target_players_before + players != why.target_players_after ||
        why.gap_before - why.gap_after != why.cut ||
        why.gap_before != why.source_players_before - why.target_players_before) {
      Fail("explanation does not add up: " + move.text);
    }
  }
}

void RebalanceSim::Round() {
  CompleteDueFlights();
  if (!groups_started_together_) groups_started_together_ = GroupsTogether();
  if (*groups_started_together_ && !GroupsTogether()) Fail("a colocation group was split");
  Result<RebalancePlan> plan = PlanRebalance(Input(), config_);
  if (!plan.ok()) {
    Fail("planner refused its input: " + plan.status().ToString());
    clock_.Advance(Millis(round_ms_));
    return;
  }
  last_plan_ = std::move(plan).value();
  Check(last_plan_);
  trace_.push_back(last_plan_.Describe());
  const auto hour = static_cast<size_t>(now_ms() / 3'600'000);
  if (moves_per_hour_.size() <= hour) moves_per_hour_.resize(hour + 1, 0);
  for (const PlannedMove& move : last_plan_.moves) {
    trace_.push_back(move.text);
    flights_.push_back(Flight{move.zones, move.from, move.to,
                              now_ms() + random_.Uniform(kDrainMsMin, kDrainMsMax),
                              random_.Chance(kDrainExpiresChance)});
    ++moves_started_;
    ++moves_per_hour_[hour];
  }
  clock_.Advance(Millis(round_ms_));
}

std::optional<int64_t> RebalanceSim::NextEventRoundMs() const {
  const int64_t now = now_ms();
  std::optional<int64_t> next;
  auto consider = [&](int64_t at) {
    if (at > now) next = next ? std::min(*next, at) : at;
  };
  for (const Flight& f : flights_) consider(f.done_ms);
  for (const auto& [zone, at] : last_moved_ms_) consider(at + config_.zone_cooldown_ms);
  if (!next) return std::nullopt;
  // Rounds happen on a fixed grid from the start.
  return (*next + round_ms_ - 1) / round_ms_ * round_ms_;
}

bool RebalanceSim::RunToFixedPoint(int64_t max_ms) {
  const int64_t deadline = now_ms() + max_ms;
  while (now_ms() < deadline && !failure_) {
    Round();
    if (!last_plan_.moves.empty()) continue;
    if (flights_.empty() && last_plan_.zones_cooling_down == 0) return true;
    // Nothing was planned with the load unchanged: nothing will be until a drain ends or a
    // cooldown lapses.
    if (std::optional<int64_t> next = NextEventRoundMs(); next && *next > now_ms()) {
      clock_.Advance(Millis(std::min(*next, deadline) - now_ms()));
    }
  }
  return false;
}

int64_t RebalanceSim::Spread() const {
  std::map<std::string, int64_t> load;
  for (const auto& [id, draining] : shards_) {
    if (!draining) load[id] = 0;
  }
  for (const auto& [id, zone] : zones_) {
    auto it = load.find(zone.shard);
    if (it != load.end()) it->second += zone.players;
  }
  if (load.empty()) return 0;
  auto [lo, hi] = std::minmax_element(
      load.begin(), load.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  return hi->second - lo->second;
}

bool RebalanceSim::GroupsTogether() const {
  for (const std::vector<std::string>& group : groups_) {
    for (const std::string& z : group) {
      if (zones_.at(z).shard != zones_.at(group.front()).shard) return false;
    }
  }
  return true;
}

}  // namespace telos::director::sim
