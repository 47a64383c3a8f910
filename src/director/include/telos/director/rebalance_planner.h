// PlanRebalance: the leader director's rebalance planner, a pure function.
//
// Given the live shards (with their draining flags), every zone's owner and live player count,
// when each zone last moved, the colocation groups and the moves already in flight, it plans the
// next moves toward an even player-weighted spread. It does no I/O and reads no clock: "now" is
// an input (any monotonic millisecond line, the same one the last-moved times are on), so the
// same input always gives the same plan, whatever order its lists come in.
//
// Terms.
//   load     a shard's players: the sum of its zones' counts, with every in-flight move counted
//            on its target already (the players are on their way), so a plan never piles onto a
//            target that is still filling.
//   spread   the fullest non-draining shard's load minus the emptiest one's. Draining shards are
//            left out: their zones are leaving through the drain, not through the planner.
//   unit     what moves as one: a zone, or the zones of one colocation group that sit on one
//            shard (each still gets its own directive, but they are planned together and never
//            separated by a move). A group already split across shards moves part by part.
//
// One step of the plan. The target is the least-loaded non-draining shard (ties: smaller id).
// Sources are tried fullest first (ties: smaller id) while fuller than the target; on the first
// source with a unit worth moving, the unit with the largest cut is chosen (ties: fewer players,
// then smaller zone id). Moving w players from a source at gap g above the target leaves the
// pair |g - 2w| apart; the cut is g - |g - 2w|. A unit is worth moving only if its cut exceeds
// `margin_players` (hysteresis): so a zone of margin/2 players or fewer never moves, and nothing
// moves once the spread is within the margin. Each accepted step strictly lowers the sum of
// squared loads, so under a steady load the planner reaches a fixed point and stops.
//
// A unit is not movable while any of its zones is in flight or cooling down (moved less than
// `zone_cooldown_ms` before now), or while its shard is draining. No move ever targets a
// draining shard, and no move is planned once `moves_in_flight_max` moves are in flight
// (in-flight zones of one colocation group going the same way count as one move). Zones whose
// owner is not a live shard are left to claim-from-pool; zones with no players never move.
//
// Every planned move carries its explanation as fields (loads before and after, the cut, why
// this source, zone and target) and as one line of text for logs and `telos ctl`.
//
// Thread safety: a pure function of its arguments; call it from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "telos/base/limits.h"
#include "telos/base/status.h"

namespace telos::director {

// The margin trades balance for calm. It must sit well above the noise in the players a shard
// reports between two plans (the simulations' ±2 players per zone over 10 zones thrash at 20
// and settle at 40), and below twice the players of the zones that should move: a fleet of
// zones of 20 players or fewer is never rebalanced at the default.
inline constexpr int64_t kRebalanceMarginPlayersDefault = 40;
inline constexpr int64_t kRebalanceMovesInFlightMaxDefault = 4;
inline constexpr int64_t kRebalanceZoneCooldownMsDefault = 5 * 60'000;  // spec 000

struct RebalanceConfig {
  // A move must cut the gap between its source and its target by more than this many players.
  int64_t margin_players = kRebalanceMarginPlayersDefault;
  int64_t moves_in_flight_max = kRebalanceMovesInFlightMaxDefault;
  // A zone that moved less than this long ago stays put, so its weight can settle.
  int64_t zone_cooldown_ms = kRebalanceZoneCooldownMsDefault;
};

// OK, or InvalidArgument naming the first field out of range: margin in
// [0, kDirectorMarginPlayersMax], moves in flight in [1, kDirectorMovesInFlightMax], cooldown in
// [0, kDirectorZoneCooldownMsMax].
Status ValidateRebalanceConfig(const RebalanceConfig& config);

struct ShardState {
  std::string id;
  bool draining = false;
};

struct ZoneLoad {
  std::string zone;
  std::string shard;  // the owner, as the zone's lease names it
  int64_t players = 0;
};

struct ZoneLastMoved {
  std::string zone;
  int64_t moved_at_ms = 0;  // on the same line as RebalanceInput::now_ms
};

struct ColocationGroup {
  std::string name;  // for explanations; empty: named after its smallest zone id
  std::vector<std::string> zones;
};

struct InFlightMove {
  std::string zone;
  std::string from;
  std::string to;
};

// REQUIRES (else InvalidArgument): ids non-empty; shard ids unique; zone ids unique across
// `zones`; players in [0, kDirectorZonePlayersMax]; a zone in at most one colocation group; at
// most one in-flight move per zone; sizes within the kDirector* bounds of limits.h.
struct RebalanceInput {
  int64_t now_ms = 0;
  std::vector<ShardState> shards;  // the live ones
  std::vector<ZoneLoad> zones;
  std::vector<ZoneLastMoved> last_moved;  // zones never moved need no entry
  std::vector<ColocationGroup> colocation_groups;
  std::vector<InFlightMove> in_flight;
};

// Why the source, zone and target of a move were chosen.
enum class SourceReason : uint8_t {
  kFullest,                // the fullest non-draining shard
  kFullestWithMovableUnit  // fuller shards had nothing worth moving (locked, too coarse)
};
enum class ZoneReason : uint8_t {
  kLargestCut  // of the source's movable units, the one that cuts the gap most
};
enum class TargetReason : uint8_t {
  kLeastLoaded  // the least-loaded non-draining shard
};
// "fullest", "fullest_with_movable_unit"; "largest_cut"; "least_loaded".
std::string_view SourceReasonName(SourceReason reason);
std::string_view ZoneReasonName(ZoneReason reason);
std::string_view TargetReasonName(TargetReason reason);

struct MoveExplanation {
  int64_t source_players_before = 0;
  int64_t source_players_after = 0;
  int64_t target_players_before = 0;
  int64_t target_players_after = 0;
  int64_t gap_before = 0;  // source minus target, before the move
  int64_t gap_after = 0;   // |source - target| after it
  int64_t cut = 0;         // gap_before - gap_after; always > margin_players
  int64_t margin_players = 0;
  int64_t spread_before = 0;  // the fleet's, with the moves planned before this one applied
  int64_t spread_after = 0;
  SourceReason source_reason = SourceReason::kFullest;
  int64_t fuller_shards_passed = 0;  // non-draining shards fuller than the source
  ZoneReason zone_reason = ZoneReason::kLargestCut;
  int64_t units_considered = 0;  // movable units on the source
  int64_t units_locked = 0;      // units on the source in flight or cooling down
  TargetReason target_reason = TargetReason::kLeastLoaded;
  int64_t draining_shards_skipped = 0;  // never targets
  std::string colocation_group;         // empty when the zones are in none
};

struct PlannedMove {
  std::vector<std::string> zones;  // sorted; one directive each, issued together
  std::string from;
  std::string to;
  int64_t players = 0;
  MoveExplanation why;
  std::string text;  // one human line with the same facts
};

enum class PlanStop : uint8_t {
  kInFlightFull,      // moves_in_flight_max moves are in flight
  kBalanced,          // the spread is within the margin: no move could cut more
  kNoMoveCutsEnough,  // a spread remains, but every movable unit is too coarse or too light
  kTooFewShards,      // fewer than two non-draining shards
};
// "in_flight_full", "balanced", "no_move_cuts_enough", "too_few_shards".
std::string_view PlanStopName(PlanStop stop);

struct ShardLoadView {
  std::string shard;
  bool draining = false;
  int64_t players = 0;
  bool operator==(const ShardLoadView&) const = default;
};

struct RebalancePlan {
  std::vector<PlannedMove> moves;           // in the order planned
  std::vector<ShardLoadView> loads_before;  // sorted by shard, in-flight moves counted on targets
  std::vector<ShardLoadView> loads_after;   // with this plan's moves applied too
  int64_t spread_before = 0;
  int64_t spread_after = 0;
  int64_t moves_in_flight = 0;          // before this plan
  PlanStop stop = PlanStop::kBalanced;  // why no further move was planned
  int64_t zones_in_flight = 0;
  int64_t zones_cooling_down = 0;
  int64_t zones_unplaced = 0;  // owner is not a live shard
  // One line for logs, e.g. "2 moves; spread 800 -> 240 (margin 10); stop: in_flight_full".
  std::string Describe() const;
};

// REQUIRES: ValidateRebalanceConfig(config).ok(). InvalidArgument if the input breaks its
// REQUIRES lines.
Result<RebalancePlan> PlanRebalance(const RebalanceInput& input, const RebalanceConfig& config);

}  // namespace telos::director
