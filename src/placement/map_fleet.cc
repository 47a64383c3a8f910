#include "telos/placement/map_fleet.h"

#include <algorithm>

#include "telos/base/assert.h"
#include "telos/base/limits.h"

namespace telos::placement {
namespace {

constexpr int64_t kPctScale = 100;

bool Alive(const Candidate& instance) {
  return instance.state == InstanceState::kStarting || instance.state == InstanceState::kReady;
}

int64_t FreeSlots(const Candidate& instance) {
  return std::max<int64_t>(0, int64_t{instance.soft_cap} - instance.player_count);
}

}  // namespace

std::string FleetAction::Describe() const {
  std::string out(FleetActionKindName(kind));
  if (kind == FleetActionKind::kDrain) out += " " + instance_id;
  if (kind != FleetActionKind::kNone) out += " (" + std::string(FleetReasonName(reason)) + ")";
  out += ": " + std::to_string(projected_arrivals) + " arrivals expected over the lead time, " +
         std::to_string(free_slots) + " free";
  return out;
}

MapFleet::MapFleet(const Clock& clock, FleetConfig config) : clock_(clock), config_(config) {
  const Status valid = ValidateFleetConfig(config_);
  RELEASE_ASSERT(valid.ok(), valid.message());
}

void MapFleet::Arrived() {
  const Instant now = clock_.Now();
  ForgetOldArrivals(now);
  if (arrivals_.size() == limits::kFleetArrivalsTrackedMax) arrivals_.pop_front();
  arrivals_.push_back(now);
}

void MapFleet::ForgetOldArrivals(Instant now) {
  const Instant horizon = now - Millis(config_.rate_window_ms);
  while (!arrivals_.empty() && arrivals_.front() < horizon) arrivals_.pop_front();
}

int64_t MapFleet::ProjectedArrivals() {
  return ProjectedArrivalsAt(clock_.Now());
}

int64_t MapFleet::ProjectedArrivalsAt(Instant now) {
  ForgetOldArrivals(now);
  if (arrivals_.empty()) return 0;
  // The span the arrivals actually cover, not the nominal window: ten a second read as ten a
  // second from the first second, not as a trickle until the window fills.
  const int64_t span_ms = std::max(ElapsedMs(arrivals_.front(), now), config_.rate_span_floor_ms);
  return static_cast<int64_t>(arrivals_.size()) * config_.spawn_lead_ms / span_ms;
}

void MapFleet::TrackMergeInFlight(std::span<const Candidate> instances) {
  if (merge_in_flight_.empty()) return;
  auto it = std::find_if(instances.begin(), instances.end(), [&](const Candidate& instance) {
    return instance.instance_id == merge_in_flight_;
  });
  if (it == instances.end() || it->state == InstanceState::kGone) merge_in_flight_.clear();
}

void MapFleet::TrackQuietInstances(std::span<const Candidate> instances, Instant now) {
  // Rebuilt from this observation so that instances no longer reported are forgotten; a quiet
  // instance keeps the instant it first went quiet. A finished merge does not restart anyone's
  // dwell: the remaining instances have already been quiet that long.
  std::map<std::string, Instant, std::less<>> quiet;
  for (const Candidate& instance : instances) {
    if (instance.state != InstanceState::kReady) continue;
    const bool below = int64_t{instance.player_count} * kPctScale <
                       config_.merge_below_pct * int64_t{instance.soft_cap};
    if (!below) continue;
    auto it = quiet_since_.find(instance.instance_id);
    quiet.emplace(instance.instance_id, it == quiet_since_.end() ? now : it->second);
  }
  quiet_since_ = std::move(quiet);
}

FleetAction MapFleet::AssessPressure(std::span<const Candidate> instances, Instant now) {
  FleetAction assessment;
  int64_t alive = 0;
  bool all_at_soft_cap = true;
  for (const Candidate& instance : instances) {
    if (!Alive(instance)) continue;
    ++alive;
    assessment.free_slots += FreeSlots(instance);
    if (instance.player_count < instance.soft_cap) all_at_soft_cap = false;
  }
  assessment.projected_arrivals = ProjectedArrivalsAt(now);
  if (alive == 0) {
    assessment.reason = FleetReason::kNoInstance;
  } else if (all_at_soft_cap) {
    assessment.reason = FleetReason::kAllAtSoftCap;
  } else if (assessment.projected_arrivals > assessment.free_slots) {
    assessment.reason = FleetReason::kProjectedArrivals;
  }
  if (alive >= config_.instances_max) assessment.reason = FleetReason::kNone;
  return assessment;
}

FleetAction MapFleet::ChooseDrain(std::span<const Candidate> instances, Instant now,
                                  const FleetAction& pressure) {
  FleetAction none = pressure;
  none.reason = FleetReason::kNone;
  if (!merge_in_flight_.empty()) return none;

  const int64_t alive = std::count_if(instances.begin(), instances.end(), Alive);
  if (alive <= config_.instances_min) return none;

  const Candidate* emptiest = nullptr;
  int64_t dwelt = 0;
  for (const Candidate& instance : instances) {
    auto it = quiet_since_.find(instance.instance_id);
    if (it == quiet_since_.end() || ElapsedMs(it->second, now) < config_.merge_dwell_ms) continue;
    ++dwelt;
    // The emptiest; on a tie the youngest, then the smaller id, so the choice is reproducible.
    if (emptiest == nullptr || instance.player_count < emptiest->player_count ||
        (instance.player_count == emptiest->player_count &&
         (instance.age_ms < emptiest->age_ms ||
          (instance.age_ms == emptiest->age_ms && instance.instance_id < emptiest->instance_id)))) {
      emptiest = &instance;
    }
  }
  if (dwelt < 2) return none;
  // Do not give back room the arrivals are about to need.
  if (pressure.projected_arrivals > pressure.free_slots - FreeSlots(*emptiest)) return none;

  FleetAction drain = pressure;
  drain.kind = FleetActionKind::kDrain;
  drain.reason = FleetReason::kMerge;
  drain.instance_id = emptiest->instance_id;
  merge_in_flight_ = emptiest->instance_id;
  return drain;
}

FleetAction MapFleet::Observe(std::span<const Candidate> instances) {
  RELEASE_ASSERT(instances.size() <= limits::kInstancesPerMapMax,
                 "more instances than limits::kInstancesPerMapMax");
  const Instant now = clock_.Now();
  TrackMergeInFlight(instances);
  TrackQuietInstances(instances, now);

  FleetAction pressure = AssessPressure(instances, now);
  if (pressure.reason != FleetReason::kNone) {
    const bool debounced =
        spawned_before_ && ElapsedMs(last_spawn_, now) < config_.spawn_debounce_ms;
    if (debounced) {
      // A spawn is wanted but one was just started; shrinking now would be the wrong direction.
      pressure.reason = FleetReason::kNone;
      return pressure;
    }
    pressure.kind = FleetActionKind::kSpawn;
    spawned_before_ = true;
    last_spawn_ = now;
    return pressure;
  }
  return ChooseDrain(instances, now, pressure);
}

}  // namespace telos::placement
