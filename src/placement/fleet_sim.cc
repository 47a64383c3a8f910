#include "fleet_sim.h"

#include <algorithm>

#include "telos/base/assert.h"
#include "telos/placement/explain.h"

namespace telos::placement::sim {
namespace {

constexpr std::string_view kMap = "boss-arena";
constexpr std::string_view kRegion = "eu-west";
constexpr std::string_view kBuild = "b100";
constexpr std::string_view kContent = "c7";
constexpr std::string_view kLocale = "en";

}  // namespace

FleetSim::FleetSim(SimConfig config)
    : config_(config),
      start_(clock_.Now()),
      random_(config.seed),
      fleet_(clock_, config.fleet),
      memory_(clock_, config.memory_capacity) {}

int64_t FleetSim::now_ms() const {
  return ElapsedMs(start_, clock_.Now());
}

int64_t FleetSim::AliveInstances() const {
  return std::count_if(instances_.begin(), instances_.end(), [](const Candidate& c) {
    return c.state == InstanceState::kStarting || c.state == InstanceState::kReady;
  });
}

void FleetSim::SeedInstances(int count, int32_t players_each) {
  for (int i = 0; i < count; ++i) {
    Candidate c;
    c.instance_id = "i" + std::to_string(next_instance_++);
    c.endpoint = "10.1.0." + std::to_string(instances_.size() + 1) + ":7777";
    c.map = kMap;
    c.region = kRegion;
    c.build = kBuild;
    c.content = kContent;
    c.locale = kLocale;
    c.state = InstanceState::kReady;
    c.soft_cap = config_.soft_cap;
    c.hard_cap = config_.hard_cap;
    instances_.push_back(std::move(c));
    timings_.push_back(Timing{now_ms(), 0});
    for (int32_t p = 0; p < players_each; ++p) AddToInstance(instances_.size() - 1, NewPlayerId());
  }
}

PlacementRequest FleetSim::RequestFor(PlayerId player) const {
  PlacementRequest request;
  request.player = player;
  request.map = kMap;
  request.region = kRegion;
  request.build = kBuild;
  request.content = kContent;
  request.locale = kLocale;
  return request;
}

std::string FleetSim::PlaceAndRecord(const PlacementRequest& request) {
  const PlacementDecision decision = director_.Place(request, instances_);
  memory_.Record(Explain(request, instances_, decision));
  stats_.peak_memory_size = std::max(stats_.peak_memory_size, memory_.size());
  if (!decision.placed()) return {};
  AddToInstance(decision.winner, request.player);
  return decision.instance_id;
}

std::string FleetSim::Arrive(PlayerId player, const std::vector<PlayerId>& party) {
  ++stats_.arrivals;
  fleet_.Arrived();
  PlacementRequest request = RequestFor(player);
  request.party = party;
  std::string placed = PlaceAndRecord(request);
  if (placed.empty()) ++stats_.refused;
  return placed;
}

void FleetSim::AddToInstance(size_t index, PlayerId player) {
  Candidate& c = instances_[index];
  c.players.insert(std::lower_bound(c.players.begin(), c.players.end(), player), player);
  ++c.player_count;
  if (c.player_count > c.hard_cap) ++stats_.hard_cap_breaches;
  roster_.push_back(player);
  where_[player] = c.instance_id;
}

void FleetSim::RemoveFromInstance(const std::string& instance_id, PlayerId player) {
  auto it = std::find_if(instances_.begin(), instances_.end(),
                         [&](const Candidate& c) { return c.instance_id == instance_id; });
  RELEASE_ASSERT(it != instances_.end(), "a player is on an instance the sim does not know");
  auto pos = std::lower_bound(it->players.begin(), it->players.end(), player);
  RELEASE_ASSERT(pos != it->players.end() && *pos == player, "player not on their instance");
  it->players.erase(pos);
  --it->player_count;
}

void FleetSim::LeaveRandom() {
  RELEASE_ASSERT(!roster_.empty(), "nobody left to leave");
  const auto pick = static_cast<size_t>(random_.Uniform(0, players() - 1));
  const PlayerId player = roster_[pick];
  roster_[pick] = roster_.back();
  roster_.pop_back();
  auto it = where_.find(player);
  RemoveFromInstance(it->second, player);
  where_.erase(it);
}

void FleetSim::RunUntil(int64_t ms) {
  while (next_tick_ms_ <= ms) {
    clock_.Advance(Millis(next_tick_ms_ - now_ms()));
    Tick();
    next_tick_ms_ += config_.tick_ms;
  }
  if (ms > now_ms()) clock_.Advance(Millis(ms - now_ms()));
}

void FleetSim::Tick() {
  const int64_t now = now_ms();
  for (size_t i = 0; i < instances_.size(); ++i) {
    Candidate& c = instances_[i];
    if (c.state == InstanceState::kStarting && now >= timings_[i].ready_at_ms) {
      c.state = InstanceState::kReady;
    }
    if (c.state == InstanceState::kReady) c.age_ms = now - timings_[i].ready_at_ms;
    if (c.state == InstanceState::kDraining && now >= timings_[i].gone_at_ms) {
      RELEASE_ASSERT(c.player_count == 0, "a drained instance still has players");
      c.state = InstanceState::kGone;
    }
  }
  if (now >= next_observe_ms_) {
    Apply(fleet_.Observe(instances_));
    next_observe_ms_ = now + config_.observe_every_ms;
    // The fleet has seen them gone; the owner stops reporting them.
    for (size_t i = instances_.size(); i-- > 0;) {
      if (instances_[i].state == InstanceState::kGone) {
        instances_.erase(instances_.begin() + static_cast<std::ptrdiff_t>(i));
        timings_.erase(timings_.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
  }
  CheckInvariants();
}

void FleetSim::Apply(const FleetAction& action) {
  if (action.kind == FleetActionKind::kNone) return;
  actions_.push_back("t=" + std::to_string(now_ms()) + " " + action.Describe());
  if (action.kind == FleetActionKind::kSpawn) {
    ++stats_.spawns;
    SeedInstances(1, 0);
    instances_.back().state = InstanceState::kStarting;
    timings_.back().ready_at_ms = now_ms() + config_.fleet.spawn_lead_ms;
    return;
  }
  auto it = std::find_if(instances_.begin(), instances_.end(),
                         [&](const Candidate& c) { return c.instance_id == action.instance_id; });
  RELEASE_ASSERT(it != instances_.end(), "the fleet drained an instance it was not shown");
  ++stats_.drains;
  Drain(static_cast<size_t>(it - instances_.begin()));
}

void FleetSim::Drain(size_t index) {
  instances_[index].state = InstanceState::kDraining;
  timings_[index].gone_at_ms = now_ms() + config_.drain_ms;
  const std::string from = instances_[index].instance_id;
  const std::vector<PlayerId> leaving = instances_[index].players;
  for (PlayerId player : leaving) {
    RemoveFromInstance(from, player);
    roster_.erase(std::find(roster_.begin(), roster_.end(), player));
    where_.erase(player);
    PlacementRequest request = RequestFor(player);
    request.moved_off = from;
    ++stats_.moved;
    if (PlaceAndRecord(request).empty()) ++stats_.moved_refused;
  }
}

void FleetSim::CheckInvariants() {
  for (const Candidate& c : instances_) {
    if (c.player_count > c.hard_cap) ++stats_.hard_cap_breaches;
    RELEASE_ASSERT(c.player_count == static_cast<int32_t>(c.players.size()),
                   "sim bookkeeping: count and roster differ");
  }
  stats_.peak_alive_instances = std::max(stats_.peak_alive_instances, AliveInstances());
}

std::string FleetSim::Summary() const {
  std::string out =
      "seed=" + std::to_string(config_.seed) + " t=" + std::to_string(now_ms()) +
      "ms players=" + std::to_string(players()) + " alive=" + std::to_string(AliveInstances()) +
      " arrivals=" + std::to_string(stats_.arrivals) +
      " refused=" + std::to_string(stats_.refused) + " moved=" + std::to_string(stats_.moved) +
      " moved_refused=" + std::to_string(stats_.moved_refused) +
      " spawns=" + std::to_string(stats_.spawns) + " drains=" + std::to_string(stats_.drains) +
      " hard_cap_breaches=" + std::to_string(stats_.hard_cap_breaches) +
      " (replay with TELOS_PLACEMENT_SEED=" + std::to_string(config_.seed) + ")";
  for (const Candidate& c : instances_) {
    out += "\n  " + c.instance_id + " " + std::string(InstanceStateName(c.state)) + " " +
           std::to_string(c.player_count) + "/" + std::to_string(c.soft_cap);
  }
  return out;
}

}  // namespace telos::placement::sim
