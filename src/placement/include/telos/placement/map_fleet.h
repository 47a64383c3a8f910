// MapFleet: decides when one map needs another public instance, or one fewer.
//
// The map's owner calls Arrived() for every zone-in and Observe() periodically with the current
// state of every instance of the map. Observe answers Spawn, Drain(instance) or nothing:
//
//   Spawn  when no instance is starting or ready; when every starting or ready instance is at its
//          soft cap; or when the arrivals expected over the spawn lead time exceed the free room
//          (soft cap minus players, over starting and ready instances). Spawns are debounced: none
//          within spawn_debounce_ms of the previous one, so a burst does not start a crowd.
//   Drain  when two or more ready instances have each stayed below merge_below_pct of their soft
//          cap for merge_dwell_ms; the emptiest of them is drained. One merge at a time: no new
//          Drain until the drained instance is reported gone (or stops being reported). The dwell
//          is not restarted by a finished merge: the map has already been quiet long enough.
//
// The asymmetry (grow at the soft cap, shrink below a quarter of it after a dwell) is what keeps
// the fleet from oscillating; a map that fills every few minutes keeps its peak instances.
//
// The arrival rate is measured over the span the recent arrivals actually cover (now minus the
// oldest arrival within rate_window_ms), not over the nominal window, so a burst is seen as a
// burst at once. The span has a floor so that a party arriving in one instant does not read as
// an unbounded rate.
//
// All time comes from the injected Clock, which must outlive this.
//
// Thread safety: none. It belongs to the map's actor.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "telos/base/clock.h"
#include "telos/base/status.h"
#include "telos/placement/types.h"

namespace telos::placement {

inline constexpr int64_t kDefaultSpawnLeadMs = 5'000;
inline constexpr int64_t kDefaultSpawnDebounceMs = 5'000;
inline constexpr int64_t kDefaultRateWindowMs = 60'000;
inline constexpr int64_t kDefaultRateSpanFloorMs = 1'000;
inline constexpr int64_t kDefaultMergeBelowPct = 25;
inline constexpr int64_t kDefaultMergeDwellMs = 2 * 60 * 1'000;
inline constexpr int64_t kDefaultInstancesMin = 1;
inline constexpr int64_t kDefaultInstancesMax = 64;

struct FleetConfig {
  int64_t spawn_lead_ms = kDefaultSpawnLeadMs;  // how long a spawned instance takes to be ready
  int64_t spawn_debounce_ms = kDefaultSpawnDebounceMs;
  int64_t rate_window_ms = kDefaultRateWindowMs;  // arrivals older than this are forgotten
  int64_t rate_span_floor_ms = kDefaultRateSpanFloorMs;
  int64_t merge_below_pct = kDefaultMergeBelowPct;  // of the soft cap
  int64_t merge_dwell_ms = kDefaultMergeDwellMs;
  int64_t instances_min = kDefaultInstancesMin;  // never drained below this many
  int64_t instances_max = kDefaultInstancesMax;  // never spawned beyond this many
};

// OK, or InvalidArgument naming the first field out of range.
Status ValidateFleetConfig(const FleetConfig& config);

enum class FleetActionKind : uint8_t { kNone, kSpawn, kDrain };

enum class FleetReason : uint8_t {
  kNone,
  kNoInstance,         // spawn: nothing starting or ready
  kAllAtSoftCap,       // spawn: every starting or ready instance is at its soft cap
  kProjectedArrivals,  // spawn: expected arrivals over the lead time exceed the free room
  kMerge,              // drain: two or more instances quiet for the dwell
};

// "none", "spawn", "drain".
std::string_view FleetActionKindName(FleetActionKind kind);
// "none", "no_instance", "all_at_soft_cap", "projected_arrivals", "merge".
std::string_view FleetReasonName(FleetReason reason);

struct FleetAction {
  FleetActionKind kind = FleetActionKind::kNone;
  FleetReason reason = FleetReason::kNone;
  std::string instance_id;         // the instance to drain; empty otherwise
  int64_t projected_arrivals = 0;  // over the spawn lead time, as of this observation
  int64_t free_slots = 0;          // room below the soft caps of starting and ready instances

  // One line for logs, e.g. "spawn (projected_arrivals: 50 expected, 40 free)".
  std::string Describe() const;
};

class MapFleet {
 public:
  // REQUIRES: ValidateFleetConfig(config).ok().
  MapFleet(const Clock& clock, FleetConfig config);

  MapFleet(const MapFleet&) = delete;
  MapFleet& operator=(const MapFleet&) = delete;

  const FleetConfig& config() const { return config_; }

  // One player zoned in (whether or not they could be placed).
  void Arrived();

  // REQUIRES: instances.size() <= limits::kInstancesPerMapMax; soft_cap > 0 for each.
  FleetAction Observe(std::span<const Candidate> instances);

  // Arrivals expected over the spawn lead time at the current rate.
  int64_t ProjectedArrivals();

  // The instance whose drain is in flight, or empty.
  const std::string& merge_in_flight() const { return merge_in_flight_; }

 private:
  void ForgetOldArrivals(Instant now);
  void TrackQuietInstances(std::span<const Candidate> instances, Instant now);
  void TrackMergeInFlight(std::span<const Candidate> instances);
  int64_t ProjectedArrivalsAt(Instant now);
  // Why a spawn is wanted (kNone if it is not), with the numbers behind it.
  FleetAction AssessPressure(std::span<const Candidate> instances, Instant now);
  FleetAction ChooseDrain(std::span<const Candidate> instances, Instant now,
                          const FleetAction& pressure);

  const Clock& clock_;
  FleetConfig config_;
  std::deque<Instant> arrivals_;  // oldest first, at most limits::kFleetArrivalsTrackedMax
  bool spawned_before_ = false;
  Instant last_spawn_{};
  std::map<std::string, Instant, std::less<>> quiet_since_;  // instance -> first seen below
  std::string merge_in_flight_;
};

}  // namespace telos::placement
