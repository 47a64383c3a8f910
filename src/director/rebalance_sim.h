// RebalanceSim: a seeded fleet for the rebalance planner's simulations (tests only).
//
// It stands in for everything around the planner: shards with zones and player counts, the
// drains a directive starts (each takes a random few seconds, and a few expire without moving
// the zone, like a directive whose TTL ran out), the cooldown each finished move starts, and
// load that changes over time. Each Round() completes the drains that are due, asks the planner
// for a plan exactly as a leader would, checks every rule of the plan against the fleet, starts
// the planned moves and advances the ManualClock by one round.
//
// The checks (the first broken one is kept in failure()):
//   - the planner accepts the input; no target is draining, unknown or the source;
//   - every moved zone is owned by the source, not in flight and not cooling down;
//   - a move carries every zone of its colocation group that sits on its source, so a group
//     that starts together stays together;
//   - every move cuts its gap by more than the margin and its explanation adds up;
//   - never more than moves_in_flight_max moves in flight;
//   - the groups that were together at the first round are together after every round.
//
// Everything random comes from one Random seeded by the seed, so a seed replays exactly.
// Thread safety: none.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "telos/base/clock.h"
#include "telos/base/random.h"
#include "telos/director/rebalance_planner.h"

namespace telos::director::sim {

inline constexpr int64_t kRoundMs = 10'000;     // how often the leader plans
inline constexpr int64_t kDrainMsMin = 2'000;   // a one-zone drain, handoff included
inline constexpr int64_t kDrainMsMax = 40'000;  // within the directive's TTL
inline constexpr double kDrainExpiresChance = 0.05;

struct SimZone {
  std::string shard;
  int64_t players = 0;
  int group = -1;  // index into groups(), -1: none
};

class RebalanceSim {
 public:
  RebalanceSim(uint64_t seed, RebalanceConfig config);

  Random& random() { return random_; }
  int64_t now_ms() const { return ElapsedMs(start_, clock_.Now()); }

  void AddShard(const std::string& id, bool draining = false);
  bool HasShard(const std::string& id) const { return shards_.contains(id); }
  void SetDraining(const std::string& id, bool draining);
  void AddZone(const std::string& id, const std::string& shard, int64_t players);
  // REQUIRES: the zones exist and are in no group yet.
  void AddGroup(const std::string& name, const std::vector<std::string>& zones);
  void SetPlayers(const std::string& zone, int64_t players);

  // How often the leader plans (kRoundMs unless set).
  void set_round_ms(int64_t round_ms) { round_ms_ = round_ms; }
  // One planning round (see the header comment).
  void Round();
  // Rounds until the planner has nothing to do: no move planned, none in flight, no zone
  // cooling down. Returns false if that did not happen within max_ms. The load must not change
  // meanwhile: rounds in which nothing can change (every move slot taken, or only cooldowns left
  // to run out) are skipped to the next round at which a drain ends or a cooldown lapses.
  bool RunToFixedPoint(int64_t max_ms);

  // The spread over non-draining shards, as the fleet stands (in-flight zones on their source).
  int64_t Spread() const;
  bool GroupsTogether() const;  // every group's zones on one shard

  const std::map<std::string, bool>& shards() const { return shards_; }  // id -> draining
  const std::map<std::string, SimZone>& zones() const { return zones_; }
  const std::vector<std::vector<std::string>>& groups() const { return groups_; }
  const std::optional<std::string>& failure() const { return failure_; }
  int64_t moves_started() const { return moves_started_; }
  // Moves started in each simulated hour since the start.
  const std::vector<int64_t>& moves_per_hour() const { return moves_per_hour_; }
  // Every plan's text, for comparing two runs of one seed.
  const std::vector<std::string>& trace() const { return trace_; }
  const RebalancePlan& last_plan() const { return last_plan_; }

 private:
  struct Flight {
    std::vector<std::string> zones;
    std::string from;
    std::string to;
    int64_t done_ms = 0;
    bool expires = false;  // the directive lapses: the zone stays where it was
  };

  void Fail(std::string message);
  void CompleteDueFlights();
  RebalanceInput Input() const;
  void Check(const RebalancePlan& plan);
  // The first round time at or after the next drain end or cooldown lapse, or nullopt.
  std::optional<int64_t> NextEventRoundMs() const;

  RebalanceConfig config_;
  int64_t round_ms_ = kRoundMs;
  std::optional<bool> groups_started_together_;
  Random random_;
  ManualClock clock_;
  Instant start_;
  std::map<std::string, bool> shards_;  // id -> draining
  std::map<std::string, SimZone> zones_;
  std::vector<std::string> group_names_;
  std::vector<std::vector<std::string>> groups_;
  std::map<std::string, int64_t> last_moved_ms_;
  std::vector<Flight> flights_;
  RebalancePlan last_plan_;
  std::optional<std::string> failure_;
  int64_t moves_started_ = 0;
  std::vector<int64_t> moves_per_hour_;
  std::vector<std::string> trace_;
};

}  // namespace telos::director::sim
