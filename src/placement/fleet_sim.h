// FleetSim: a deterministic, single-threaded model of one busy map, for the trace simulations.
//
// It owns a ManualClock, a PlacementDirector, a MapFleet and a DecisionMemory, and plays the
// part of everything around them: instances that take the spawn lead time to become ready,
// drains that move every player off an instance and stop it a little later, players who zone in
// (optionally in a party) and leave. Time moves in fixed ticks; the fleet is observed on a fixed
// period. Every random choice comes from one Random seeded by the caller, so a run replays
// exactly from its seed.
//
// Test-only code. Thread safety: none.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "telos/base/clock.h"
#include "telos/base/random.h"
#include "telos/placement/decision_memory.h"
#include "telos/placement/director.h"
#include "telos/placement/map_fleet.h"

namespace telos::placement::sim {

inline constexpr int32_t kSimSoftCap = 100;
inline constexpr int32_t kSimHardCap = 120;
inline constexpr int64_t kSimTickMs = 100;
inline constexpr int64_t kSimObserveEveryMs = 1'000;
inline constexpr int64_t kSimDrainMs = 5'000;
inline constexpr size_t kSimMemoryCapacity = 1'000;

struct SimConfig {
  uint64_t seed = 1;
  int32_t soft_cap = kSimSoftCap;
  int32_t hard_cap = kSimHardCap;
  int64_t tick_ms = kSimTickMs;
  int64_t observe_every_ms = kSimObserveEveryMs;
  int64_t drain_ms = kSimDrainMs;  // from Drain until the instance is gone
  FleetConfig fleet;               // fleet.spawn_lead_ms is also the modelled start-up time
  size_t memory_capacity = kSimMemoryCapacity;
};

struct SimStats {
  int64_t arrivals = 0;
  int64_t refused = 0;  // arrivals the director could not place
  int64_t moved = 0;    // players re-placed off a draining instance
  int64_t moved_refused = 0;
  int64_t spawns = 0;
  int64_t drains = 0;
  int64_t hard_cap_breaches = 0;  // observations of an instance above its hard cap
  int64_t peak_alive_instances = 0;
  size_t peak_memory_size = 0;
};

class FleetSim {
 public:
  explicit FleetSim(SimConfig config);
  FleetSim(const FleetSim&) = delete;
  FleetSim& operator=(const FleetSim&) = delete;

  // Adds `count` ready instances holding `players_each` players (ids from the sim's counter).
  void SeedInstances(int count, int32_t players_each);

  // A new player zones in now. Returns the instance they were placed on, or "" if refused.
  std::string Arrive(PlayerId player, const std::vector<PlayerId>& party = {});
  // A player picked at random leaves the map. REQUIRES: players() > 0.
  void LeaveRandom();

  // Runs ticks (instance start-up, drains, fleet observations) until `ms` after the start.
  void RunUntil(int64_t ms);

  int64_t now_ms() const;
  int64_t players() const { return static_cast<int64_t>(roster_.size()); }
  // Starting or ready.
  int64_t AliveInstances() const;
  const SimStats& stats() const { return stats_; }
  const DecisionMemory& memory() const { return memory_; }
  Random& random() { return random_; }
  PlayerId NewPlayerId() { return next_player_++; }
  // The seed and the counts, for failure messages: "seed=7 t=1800000ms players=15 ...".
  std::string Summary() const;
  // One line per fleet action taken, "t=<ms> spawn ..." (a run's trace, for replay checks).
  const std::vector<std::string>& actions() const { return actions_; }

 private:
  struct Timing {
    int64_t ready_at_ms = 0;  // when a starting instance becomes ready
    int64_t gone_at_ms = 0;   // when a draining instance stops
  };

  PlacementRequest RequestFor(PlayerId player) const;
  std::string PlaceAndRecord(const PlacementRequest& request);
  void AddToInstance(size_t index, PlayerId player);
  void RemoveFromInstance(const std::string& instance_id, PlayerId player);
  void Tick();
  void Apply(const FleetAction& action);
  void Drain(size_t index);
  void CheckInvariants();

  SimConfig config_;
  ManualClock clock_;
  Instant start_;
  Random random_;
  PlacementDirector director_;
  MapFleet fleet_;
  DecisionMemory memory_;
  std::vector<Candidate> instances_;  // in step with timings_
  std::vector<Timing> timings_;
  std::vector<PlayerId> roster_;  // everyone on the map, for picking leavers
  std::unordered_map<PlayerId, std::string> where_;
  int64_t next_tick_ms_ = 0;
  int64_t next_observe_ms_ = 0;
  int64_t next_instance_ = 1;
  PlayerId next_player_ = 1;
  SimStats stats_;
  std::vector<std::string> actions_;
};

}  // namespace telos::placement::sim
