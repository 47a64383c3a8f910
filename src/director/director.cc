// Director: leadership, the tally's lifetime, planning and issuing, drain targets (see the
// header).
#include "telos/director/director.h"

#include <algorithm>
#include <set>
#include <utility>

#include "telos/base/limits.h"

namespace telos::director {
namespace {

int64_t NowMs(const Clock& clock) {
  return ElapsedMs(Instant{}, clock.Now());
}

}  // namespace

Status ValidateDirectorOptions(const DirectorOptions& options) {
  TELOS_RETURN_IF_ERROR(ValidateLeadershipConfig(options.leadership));
  TELOS_RETURN_IF_ERROR(ValidateRebalanceConfig(options.rebalance));
  if (options.directive_ttl_ms < 1 || options.directive_ttl_ms > limits::kDirectoryTtlMsMax) {
    return Status::InvalidArgument("directive_ttl_ms out of range");
  }
  if (options.plan_interval_ms < 1 || options.plan_interval_ms > limits::kDirectoryTtlMsMax) {
    return Status::InvalidArgument("plan_interval_ms out of range");
  }
  return Status::Ok();
}

Result<PlanReading> ReadAndPlan(directory::Directory& directory, const RebalanceConfig& config,
                                const std::vector<ColocationGroup>& groups, int64_t now_ms) {
  PlanReading out;
  RebalanceInput& input = out.input;
  input.now_ms = now_ms;
  input.colocation_groups = groups;

  Result<std::vector<directory::ShardInfo>> shards = directory.ListShards();
  if (!shards.ok()) return shards.status();
  if (shards->size() > limits::kDirectorShardsMax) {
    return Status::ResourceExhausted("more live shards than one plan considers");
  }
  for (const directory::ShardInfo& shard : *shards) {
    input.shards.push_back(ShardState{shard.id, shard.draining});
  }

  // Each zone once: the fresher report wins when a handoff sits between two reports.
  Result<std::vector<directory::Occupancy>> occupancy = directory.ListOccupancy();
  if (!occupancy.ok()) return occupancy.status();
  struct Seen {
    std::string shard;
    int64_t players = 0;
    int64_t age_ms = 0;
  };
  std::map<std::string, Seen> zones;
  for (const directory::Occupancy& report : *occupancy) {
    for (const directory::ZoneCount& count : report.zones) {
      const int64_t players =
          std::clamp<int64_t>(count.players, 0, limits::kDirectorZonePlayersMax);
      auto [it, fresh] = zones.try_emplace(count.zone, Seen{report.shard, players, report.age_ms});
      if (!fresh && report.age_ms < it->second.age_ms) {
        it->second = Seen{report.shard, players, report.age_ms};
      }
    }
  }
  if (zones.size() > limits::kDirectorZonesMax) {
    return Status::ResourceExhausted("more zones than one plan considers");
  }
  for (auto& [zone, seen] : zones) input.zones.push_back(ZoneLoad{zone, seen.shard, seen.players});

  for (const directory::ShardInfo& shard : *shards) {
    Result<std::vector<directory::Directive>> live = directory.ListDirectives(shard.id);
    if (!live.ok()) return live.status();
    for (directory::Directive& directive : *live) {
      input.in_flight.push_back(InFlightMove{directive.zone, directive.from, directive.to});
      out.directives.push_back(std::move(directive));
    }
  }

  // Cooldowns are read only for the zones a plan would move: one call per candidate rather
  // than one per zone of the fleet. A cooling zone found this way is fed back and the plan is
  // made again, until a plan moves only zones known to be free.
  std::set<std::string> checked;
  for (int round = 0;; ++round) {
    Result<RebalancePlan> plan = PlanRebalance(input, config);
    if (!plan.ok()) return plan.status();
    out.plan = std::move(*plan);
    bool found_cooling = false;
    bool unchecked = false;
    for (const PlannedMove& move : out.plan.moves) {
      for (const std::string& zone : move.zones) {
        if (checked.contains(zone)) continue;
        if (round >= limits::kDirectorPlanRoundsMax) {
          unchecked = true;
          continue;
        }
        checked.insert(zone);
        Result<int64_t> remaining = directory.CooldownRemainingMs(zone);
        if (!remaining.ok()) return remaining.status();
        if (*remaining > 0) {
          found_cooling = true;
          input.last_moved.push_back(ZoneLastMoved{
              zone, now_ms - std::max<int64_t>(0, config.zone_cooldown_ms - *remaining)});
        }
      }
    }
    if (unchecked) {
      // Out of rounds: keep only the moves whose every zone is known to be free.
      std::erase_if(out.plan.moves, [&checked](const PlannedMove& move) {
        return std::any_of(move.zones.begin(), move.zones.end(),
                           [&checked](const std::string& z) { return !checked.contains(z); });
      });
      break;
    }
    if (!found_cooling) break;
  }
  return out;
}

Result<DirectorSection> ReadDirectorSection(directory::Directory& directory,
                                            const std::string& scope) {
  DirectorSection out;
  out.scope = scope;
  Result<std::optional<directory::Leader>> leader = directory.LeaderOf(scope);
  if (!leader.ok()) return leader.status();
  out.leader = *leader;
  Result<std::vector<directory::ShardInfo>> shards = directory.ListShards();
  if (!shards.ok()) return shards.status();
  for (const directory::ShardInfo& shard : *shards) {
    Result<std::vector<directory::Directive>> live = directory.ListDirectives(shard.id);
    if (!live.ok()) return live.status();
    for (directory::Directive& directive : *live) out.directives.push_back(std::move(directive));
  }
  return out;
}

Director::Director(directory::Directory& directory, const Clock& clock, Logger& logger,
                   Metrics& metrics, DirectorOptions options, bus::DurableStreams* streams,
                   store::RecordsStore* records)
    : directory_(directory),
      clock_(clock),
      logger_(logger),
      options_(std::move(options)),
      streams_(streams),
      records_(records),
      leadership_(directory, clock, logger, options_.leadership),
      leader_gauge_(metrics.Gauge("director_leader", "1 while this director leads its scope",
                                  {{"scope", options_.leadership.scope}})),
      issued_(metrics.Counter("director_moves_issued_total",
                              "Rebalance-drain directives this director issued",
                              {{"scope", options_.leadership.scope}})),
      completed_(metrics.Counter("director_moves_completed_total",
                                 "Tracked directives retired with the zone on its target",
                                 {{"scope", options_.leadership.scope}})),
      expired_(metrics.Counter("director_moves_expired_total",
                               "Tracked directives gone with the zone not on its target",
                               {{"scope", options_.leadership.scope}})),
      age_gauge_(metrics.Gauge("director_directive_age_max_ms",
                               "Age of the oldest live directive the leader tracks",
                               {{"scope", options_.leadership.scope}})),
      directive_age_(metrics.Histogram(
          "director_directive_age_seconds",
          "Age of a rebalance directive when the leader sees it executed (the zone on its "
          "target), measured by the leader from the issue (a predecessor's: read off its TTL) to "
          "the plan that found it retired; resolution is the plan interval",
          {1, 2, 5, 10, 15, 20, 30, 45, 60, 90, 120}, {{"scope", options_.leadership.scope}})),
      answered_(metrics.Counter("director_drain_targets_answered_total",
                                "Drain-target requests this director answered with targets",
                                {{"scope", options_.leadership.scope}})),
      refused_(metrics.Counter("director_drain_targets_refused_total",
                               "Drain-target requests refused: the requester is not a live "
                               "registered shard, or holds all one drainer may",
                               {{"scope", options_.leadership.scope}})) {
  RELEASE_ASSERT(ValidateDirectorOptions(options_).ok(), "Director needs valid options");
  RELEASE_ASSERT((streams_ == nullptr) == (records_ == nullptr),
                 "the tally needs both streams and a records store");
}

Director::~Director() {
  tally_.reset();
}

void Director::Stop() {
  tally_.reset();
  {
    std::lock_guard lock(mu_);
    tally_running_ = false;
    tracked_.clear();
  }
  leadership_.Resign();
  was_leading_ = false;
  leader_gauge_.Set(0);
  age_gauge_.Set(0);
}

int64_t Director::Step() {
  int64_t next = leadership_.Step();
  const bool leading = leadership_.is_leader();
  if (leading != was_leading_) OnLeadershipChange(leading);
  if (!leading) return next;

  if (tally_ == nullptr && streams_ != nullptr) {
    const Status ensured = EnsureGameEventStream(*streams_);
    Result<std::unique_ptr<GameEventTally>> started =
        ensured.ok() ? GameEventTally::Start(*streams_, *records_, logger_, options_.tally)
                     : Result<std::unique_ptr<GameEventTally>>(ensured);
    if (started.ok()) {
      tally_ = std::move(*started);
      std::lock_guard lock(mu_);
      tally_running_ = true;
    } else {
      // Retried on every step while leading; the events wait in the durable stream.
      logger_.Warn("director tally did not start",
                   {{"scope", options_.leadership.scope}, {"error", started.status().ToString()}});
    }
  }

  const Instant now = clock_.Now();
  if (now >= next_plan_) {
    Plan(now);
    next_plan_ = clock_.Now() + Millis(options_.plan_interval_ms);
  }
  // Every step, not only after a plan that read the directory: the oldest directive keeps
  // ageing between plans and while the directory cannot be read.
  UpdateAgeGauge(clock_.Now());
  const int64_t until_plan = std::max<int64_t>(0, ElapsedMs(clock_.Now(), next_plan_));
  return std::min(next, until_plan);
}

void Director::OnLeadershipChange(bool leading) {
  was_leading_ = leading;
  if (!leading) {
    // Consumption stops first: from here on this director applies nothing.
    tally_.reset();
    {
      std::lock_guard lock(mu_);
      tally_running_ = false;
      tracked_.clear();
    }
    leader_gauge_.Set(0);
    age_gauge_.Set(0);
    return;
  }
  leader_gauge_.Set(1);
  next_plan_ = clock_.Now();  // plan at once: a new leader has nothing to wait for
}

void Director::Plan(Instant now) {
  Result<PlanReading> reading =
      ReadAndPlan(directory_, options_.rebalance, options_.colocation_groups, NowMs(clock_));
  if (!reading.ok()) {
    logger_.Warn("director plan failed",
                 {{"scope", options_.leadership.scope}, {"error", reading.status().ToString()}});
    return;
  }
  Reconcile(reading->directives, now);
  {
    std::lock_guard lock(mu_);
    last_plan_ = reading->plan.Describe();
    last_planned_ = now;
  }
  const uint64_t epoch = leadership_.epoch();
  for (const PlannedMove& move : reading->plan.moves) {
    if (!leadership_.is_leader()) break;
    Issue(move, epoch, now);
  }
}

void Director::Reconcile(const std::vector<directory::Directive>& live, Instant now) {
  std::map<std::string, Tracked> gone;
  {
    std::lock_guard lock(mu_);
    std::set<std::string> live_zones;
    for (const directory::Directive& directive : live) {
      live_zones.insert(directive.zone);
      auto it = tracked_.find(directive.zone);
      if (it != tracked_.end() &&
          (it->second.from != directive.from || it->second.to != directive.to ||
           it->second.epoch != directive.epoch)) {
        // The tracked one is gone, replaced by another for the zone: judged like any other
        // that left, not dropped uncounted.
        gone.insert(*it);
        tracked_.erase(it);
        it = tracked_.end();
      }
      if (it == tracked_.end()) {
        // Another leader's (or a newer one for this zone): its age is read off its TTL.
        const int64_t age_ms = std::max<int64_t>(0, options_.directive_ttl_ms - directive.ttl_ms);
        tracked_[directive.zone] = Tracked{directive.from,       directive.to,     directive.epoch,
                                           now - Millis(age_ms), directive.ttl_ms, false};
      } else {
        it->second.ttl_ms = directive.ttl_ms;
      }
    }
    for (auto it = tracked_.begin(); it != tracked_.end();) {
      if (live_zones.contains(it->first)) {
        ++it;
        continue;
      }
      gone.insert(*it);
      it = tracked_.erase(it);
    }
  }
  for (const auto& [zone, move] : gone) {
    Result<std::optional<directory::ZoneOwner>> owner = directory_.OwnerOfZone(zone);
    if (!owner.ok()) {
      // Judge it on the next plan rather than guess (unless a newer one for the zone is
      // tracked now: then this one is judged lapsed, so that it is still counted once).
      bool kept = false;
      {
        std::lock_guard lock(mu_);
        kept = tracked_.try_emplace(zone, move).second;
        if (!kept) ++moves_expired_;
      }
      if (!kept) expired_.Increment();
      continue;
    }
    const bool arrived = owner->has_value() && (*owner)->shard_id == move.to;
    const int64_t age_ms = ElapsedMs(move.first_seen, now);
    {
      std::lock_guard lock(mu_);
      ++(arrived ? moves_completed_ : moves_expired_);
    }
    (arrived ? completed_ : expired_).Increment();
    if (arrived) directive_age_.Observe(static_cast<double>(age_ms) / 1000.0);
    logger_.Info(arrived ? "director directive completed" : "director directive expired",
                 {{"scope", options_.leadership.scope},
                  {"zone", zone},
                  {"from", move.from},
                  {"to", move.to},
                  {"epoch", move.epoch},
                  {"age_ms", age_ms},
                  {"owner", owner->has_value() ? (*owner)->shard_id : std::string()}});
  }
}

void Director::Issue(const PlannedMove& move, uint64_t epoch, Instant now) {
  for (const std::string& zone : move.zones) {
    if (!leadership_.is_leader()) return;
    const Status issued = directory_.IssueDirective(options_.leadership.scope, epoch, zone,
                                                    move.from, move.to, options_.directive_ttl_ms);
    if (!issued.ok()) {
      logger_.Warn("director directive refused", {{"scope", options_.leadership.scope},
                                                  {"epoch", epoch},
                                                  {"zone", zone},
                                                  {"from", move.from},
                                                  {"to", move.to},
                                                  {"error", issued.ToString()}});
      // A refused fence means another leader: nothing more from this tenure.
      if (issued.code() == StatusCode::kFailedPrecondition) return;
      continue;
    }
    {
      std::lock_guard lock(mu_);
      tracked_[zone] =
          Tracked{move.from, move.to, epoch, now, options_.directive_ttl_ms, /*ours=*/true};
      ++moves_issued_;
      last_issued_ = now;
    }
    issued_.Increment();
    if (options_.rebalance.zone_cooldown_ms > 0) {
      const Status cooling = directory_.StartCooldown(zone, options_.rebalance.zone_cooldown_ms);
      if (!cooling.ok()) {
        // The directive still stands; the zone is in flight, so the planner will not pick it
        // again until it lands, and the next plan reads a cooldown or its absence.
        logger_.Warn("director cooldown not started",
                     {{"zone", zone}, {"error", cooling.ToString()}});
      }
    }
    logger_.Info("placement: rebalance drain recommended",
                 {{"scope", options_.leadership.scope},
                  {"epoch", epoch},
                  {"zone", zone},
                  {"from", move.from},
                  {"to", move.to},
                  {"players", move.players},
                  {"spread_before", move.why.spread_before},
                  {"spread_after", move.why.spread_after},
                  {"cut", move.why.cut},
                  {"colocation_group", move.why.colocation_group},
                  {"explanation", move.text}});
  }
}

void Director::UpdateAgeGauge(Instant now) {
  int64_t oldest = 0;
  {
    std::lock_guard lock(mu_);
    for (const auto& [zone, move] : tracked_) {
      oldest = std::max(oldest, ElapsedMs(move.first_seen, now));
    }
  }
  age_gauge_.Set(static_cast<double>(oldest));
}

Result<DrainTargetsReply> Director::AnswerDrainTargets(const DrainTargetsRequest& request) {
  std::lock_guard serial(answer_mu_);
  const uint64_t epoch = leadership_.epoch();
  if (epoch == 0) {
    return Status::FailedPrecondition("this director does not lead scope " +
                                      options_.leadership.scope);
  }
  // Anyone allowed to publish on the subject can name any shard: only a live, registered one
  // gets reservations taken in its name.
  Result<std::vector<directory::ShardInfo>> shards = directory_.ListShards();
  if (!shards.ok()) return shards.status();
  const bool registered =
      std::any_of(shards->begin(), shards->end(), [&request](const directory::ShardInfo& shard) {
        return shard.id == request.shard && !shard.endpoint.empty();
      });
  if (!registered) {
    refused_.Increment();
    return Status::FailedPrecondition("shard " + request.shard + " is not a live registered shard");
  }
  // A reservation lasts the drain and no longer, whatever the request says.
  const int64_t ttl_ms = std::min(request.ttl_ms, limits::kDirectorDrainReservationTtlMsMax);
  const Instant now = clock_.Now();
  std::erase_if(grants_, [now](const auto& kv) { return kv.second.expires <= now; });
  if (!grants_.contains(request.shard) && grants_.size() >= limits::kDirectorShardsMax) {
    refused_.Increment();
    return Status::ResourceExhausted("too many drainers hold reservations");
  }
  Grant& grant = grants_[request.shard];

  DrainTargetsReply reply{options_.leadership.candidate, epoch, {}};
  Status first_error;
  bool capped = false;
  for (const DrainZoneNeed& need : request.zones) {
    if (!leadership_.is_leader()) break;
    const int64_t amount =
        std::clamp<int64_t>(need.players, 1, limits::kDirectorDrainZoneAmountMax);
    if (grant.zones >= limits::kDirectorDrainerZonesMax ||
        grant.players + amount > limits::kDirectorDrainerReservedPlayersMax) {
      capped = true;  // the shard chooses for the rest itself
      break;
    }
    directory::DrainTargetRequest pick;
    pick.exclude = {request.shard};
    pick.amount = amount;
    pick.ttl_ms = ttl_ms;
    pick.holder = request.shard;
    Result<directory::DrainTarget> chosen = directory_.SelectDrainTarget(pick);
    if (chosen.ok()) {
      grant.players += amount;
      ++grant.zones;
      grant.expires = std::max(grant.expires, now + Millis(ttl_ms));
      reply.targets.push_back(DrainZoneTarget{need.zone, chosen->reservation.target,
                                              chosen->reservation.id, chosen->over_ceiling});
      continue;
    }
    if (chosen.status().code() != StatusCode::kNotFound && first_error.ok()) {
      first_error = chosen.status();
    }
  }
  if (grant.zones == 0) grants_.erase(request.shard);
  if (reply.targets.empty() && capped) {
    refused_.Increment();
    return Status::ResourceExhausted("shard " + request.shard +
                                     " already holds as many reservations as one drainer may");
  }
  if (reply.targets.empty() && !first_error.ok()) return first_error;
  if (reply.targets.empty() && !leadership_.is_leader()) {
    return Status::FailedPrecondition("stepped down while answering");
  }
  // "Answered with targets": an answer that placed nothing sends the shard to its own choice.
  if (!reply.targets.empty()) answered_.Increment();
  logger_.Info("director drain targets answered",
               {{"scope", options_.leadership.scope},
                {"shard", request.shard},
                {"zones", static_cast<int64_t>(request.zones.size())},
                {"placed", static_cast<int64_t>(reply.targets.size())},
                {"capped", capped},
                {"ttl_ms", ttl_ms},
                {"epoch", epoch}});
  return reply;
}

DirectorSnapshot Director::Snapshot() const {
  DirectorSnapshot out;
  out.leading = leadership_.is_leader();
  out.epoch = leadership_.epoch();
  out.observed_leader = leadership_.observed_leader();
  const Instant now = clock_.Now();
  std::lock_guard lock(mu_);
  for (const auto& [zone, move] : tracked_) {
    out.directives.push_back(TrackedDirective{zone, move.from, move.to, move.epoch,
                                              ElapsedMs(move.first_seen, now), move.ttl_ms,
                                              move.ours});
  }
  out.moves_issued = moves_issued_;
  out.moves_completed = moves_completed_;
  out.moves_expired = moves_expired_;
  out.tally_running = tally_running_;
  out.last_plan = last_plan_;
  if (last_issued_) out.last_issued_ago_ms = ElapsedMs(*last_issued_, now);
  if (last_planned_) out.last_plan_ago_ms = ElapsedMs(*last_planned_, now);
  return out;
}

}  // namespace telos::director
