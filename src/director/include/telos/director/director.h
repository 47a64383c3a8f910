// Director: one director of a scope, with no transport and no thread of its own.
//
// The owner calls Step() and calls again after the delay it returns (a thread in `telos
// director` and in `telos serve`, a loop on a ManualClock in tests); Step never sleeps. One
// Step:
//   1. drives DirectorLeadership (director_leadership.h): campaign, renew, step down;
//   2. on becoming leader, starts the GameEventTally (when given streams and a records store);
//      on stepping down, destroys it before anything else, so only a leader applies events;
//   3. while leading, every plan_interval_ms: reads the live shards (with their draining
//      flags), the occupancy reports, the live directives of every live shard and, for each
//      zone a plan would move, its cooldown; runs PlanRebalance; issues each planned move as
//      one directive per zone, fenced by the leader's epoch, with directive_ttl_ms; starts each
//      moved zone's cooldown; logs `placement: rebalance drain recommended` with the move's
//      explanation;
//   4. notices the directives it tracks that are no longer live: one whose zone the target now
//      owns counts as completed, any other as expired (it lapsed, or the shard dropped it).
// Every directory call while leading is preceded by is_leader(): the moment the lease could
// have lapsed (the process was paused, the directory unreachable) nothing more is issued, and
// the directory's epoch fence refuses what a deposed leader still sends.
//
// Zones. The planner sees each zone once, owned by the shard whose occupancy report names it;
// when two reports name one zone (a handoff between two reports) the fresher report wins.
// Directives a previous leader issued are counted as in flight (the planner never doubles
// them) and tracked like this director's own.
//
// Drain targets. AnswerDrainTargets serves a draining shard's request
// (drain_target_messages.h): for each zone, SelectDrainTarget on the directory, excluding the
// requester, with the requester as the holder, so the reservation is taken atomically and
// draining shards are never picked. Requests are answered one at a time (a mutex), so two
// shards draining at once never pick each other from stale reads. A standby answers
// kFailedPrecondition. The request is not trusted: only the world NATS users (telos-world-<n>) may
// publish it (deploy/nats/permissions.conf), but any world could name any shard and any numbers, so
//   - the named shard must be a live registered shard in the directory (kFailedPrecondition);
//   - its ttl_ms is clamped to kDirectorDrainReservationTtlMsMax and each zone's players to
//     [1, kDirectorDrainZoneAmountMax];
//   - while a drainer's earlier grants are live (their TTL), the director places at most
//     kDirectorDrainerZonesMax zones and kDirectorDrainerReservedPlayersMax players for it in
//     all; zones past that are left out (the shard chooses for them), and a request of which
//     none could be placed for that reason is kResourceExhausted.
//
// Log lines: DirectorLeadership's, `placement: rebalance drain recommended`, `director plan
// failed`, `director directive refused`, `director directive completed|expired`.
// Metrics (labelled by scope): telos_director_leader (1 while leading), telos_director_moves_
// {issued,completed,expired}_total, telos_director_directive_age_max_ms (the oldest live
// directive tracked, 0 when none), telos_director_directive_age_seconds (a histogram: the age
// of each tracked directive when the leader finds it executed, the zone on its target — from its
// issue, or for a predecessor's as read off its TTL, to the plan that saw it retired, so its
// resolution is plan_interval_ms), telos_director_drain_targets_answered_total,
// telos_director_drain_targets_refused_total (a requester not live, or over its cap).
//
// Ownership: borrows the directory, clock, logger, metrics, streams and records store, which
// must outlive it. Threads: Step() and Stop() from one thread at a time; AnswerDrainTargets,
// is_leader(), epoch(), Snapshot() from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "telos/base/clock.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/base/status.h"
#include "telos/bus/durable.h"
#include "telos/director/director_leadership.h"
#include "telos/director/drain_target_messages.h"
#include "telos/director/game_event_tally.h"
#include "telos/director/rebalance_planner.h"
#include "telos/directory/directory.h"
#include "telos/store/records_store.h"

namespace telos::director {

inline constexpr int64_t kDirectorPlanIntervalMsDefault = 10'000;

struct DirectorOptions {
  LeadershipConfig leadership;
  RebalanceConfig rebalance;
  int64_t directive_ttl_ms = directory::kDirectiveTtlMsDefault;
  int64_t plan_interval_ms = kDirectorPlanIntervalMsDefault;
  // From the content pack: related zones kept on one shard.
  std::vector<ColocationGroup> colocation_groups;
  GameEventTallyOptions tally;
};

// OK, or InvalidArgument naming the first bad field (the leadership and rebalance configs as
// their own Validate* say; directive ttl and plan interval in [1, kDirectoryTtlMsMax]).
Status ValidateDirectorOptions(const DirectorOptions& options);

// A directive this director knows to be live.
struct TrackedDirective {
  std::string zone;
  std::string from;
  std::string to;
  uint64_t epoch = 0;  // the term that issued it
  int64_t age_ms = 0;  // since it was issued (or first seen, for another leader's)
  int64_t ttl_ms = 0;  // left, as the directory last said
  bool ours = false;   // issued by this director
};

struct DirectorSnapshot {
  bool leading = false;
  uint64_t epoch = 0;
  std::string observed_leader;
  std::vector<TrackedDirective> directives;  // sorted by zone
  uint64_t moves_issued = 0;
  uint64_t moves_completed = 0;
  uint64_t moves_expired = 0;
  bool tally_running = false;
  std::string last_plan;  // RebalancePlan::Describe() of the last plan, empty before any
  // How long ago this director last issued a directive, and last planned; -1 when never (since
  // it was made: a standby that led before still knows when it last issued).
  int64_t last_issued_ago_ms = -1;
  int64_t last_plan_ago_ms = -1;
};

// The director section of `/api/cluster` and `telos ctl directives`, read from the directory
// alone (any role can read it): the scope's leader with its epoch and the lease time left, and
// every live directive of every live shard (pending: issued, not yet retired).
struct DirectorSection {
  std::string scope;
  std::optional<directory::Leader> leader;       // nullopt: nobody leads now
  std::vector<directory::Directive> directives;  // by (from, zone)
};
Result<DirectorSection> ReadDirectorSection(directory::Directory& directory,
                                            const std::string& scope);

// Reads what a plan needs from the directory: the live shards and their draining flags, the
// occupancy (each zone once, the fresher report winning), the live directives of every live
// shard as in-flight moves, and for each zone a first plan would move, its cooldown, planning
// again until the plan moves no cooling zone. Issues nothing: `telos ctl rebalance --dry-run`
// runs it as it is. `now_ms` is any monotonic line; only differences matter.
struct PlanReading {
  RebalanceInput input;
  std::vector<directory::Directive> directives;  // live, sorted by (from, zone)
  RebalancePlan plan;
};
Result<PlanReading> ReadAndPlan(directory::Directory& directory, const RebalanceConfig& config,
                                const std::vector<ColocationGroup>& groups, int64_t now_ms);

class Director {
 public:
  // `streams` and `records` may both be null: no tally. REQUIRES:
  // ValidateDirectorOptions(options).ok().
  Director(directory::Directory& directory, const Clock& clock, Logger& logger, Metrics& metrics,
           DirectorOptions options, bus::DurableStreams* streams = nullptr,
           store::RecordsStore* records = nullptr);
  ~Director();

  Director(const Director&) = delete;
  Director& operator=(const Director&) = delete;

  // Leads or stands by as due; returns the milliseconds until it should be called again.
  int64_t Step();

  // Stops the tally and gives the lease up (a clean stop: a standby takes over at once).
  void Stop();

  bool is_leader() const { return leadership_.is_leader(); }
  uint64_t epoch() const { return leadership_.epoch(); }
  const DirectorOptions& options() const { return options_; }

  // The answer to a draining shard, or kFailedPrecondition when not leading, or the directory's
  // error when it could place no zone for that reason. Zones without a live, non-draining peer
  // are left out of the reply.
  Result<DrainTargetsReply> AnswerDrainTargets(const DrainTargetsRequest& request);

  DirectorSnapshot Snapshot() const;

 private:
  struct Tracked {
    std::string from;
    std::string to;
    uint64_t epoch = 0;
    Instant first_seen{};
    int64_t ttl_ms = 0;
    bool ours = false;
  };

  void OnLeadershipChange(bool leading);
  void Plan(Instant now);
  void Reconcile(const std::vector<directory::Directive>& live, Instant now);
  void Issue(const PlannedMove& move, uint64_t epoch, Instant now);
  void UpdateAgeGauge(Instant now);

  directory::Directory& directory_;
  const Clock& clock_;
  Logger& logger_;
  const DirectorOptions options_;
  bus::DurableStreams* const streams_;
  store::RecordsStore* const records_;
  DirectorLeadership leadership_;

  prometheus::Gauge& leader_gauge_;
  prometheus::Counter& issued_;
  prometheus::Counter& completed_;
  prometheus::Counter& expired_;
  prometheus::Gauge& age_gauge_;
  prometheus::Histogram& directive_age_;
  prometheus::Counter& answered_;
  prometheus::Counter& refused_;

  // Step()'s own state (one thread).
  bool was_leading_ = false;
  Instant next_plan_{};
  std::unique_ptr<GameEventTally> tally_;

  // What the director has reserved for each drainer while those reservations live.
  struct Grant {
    int64_t players = 0;
    size_t zones = 0;
    Instant expires{};
  };

  std::mutex answer_mu_;                 // serializes AnswerDrainTargets; guards grants_
  std::map<std::string, Grant> grants_;  // by drainer; at most kDirectorShardsMax, expired pruned

  mutable std::mutex mu_;                   // guards the fields below; never held across a call
  std::map<std::string, Tracked> tracked_;  // by zone
  uint64_t moves_issued_ = 0;
  uint64_t moves_completed_ = 0;
  uint64_t moves_expired_ = 0;
  bool tally_running_ = false;
  std::string last_plan_;
  std::optional<Instant> last_issued_;
  std::optional<Instant> last_planned_;
};

}  // namespace telos::director
