#include "telos/shard/shard_drain.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <utility>

#include "telos/base/assert.h"

namespace telos::shard {
namespace {

// How often the waiting thread looks at the (possibly manual) clock for the deadlines.
constexpr std::chrono::milliseconds kDeadlinePoll{5};

// Whether an Adopt that did not succeed may have been applied: its caller stopped waiting (or
// the transport lost the answer), not the peer saying no.
bool AdoptionUnknown(const Status& s) {
  return s.code() == StatusCode::kDeadlineExceeded || s.code() == StatusCode::kUnknownResult ||
         s.code() == StatusCode::kCancelled;
}

}  // namespace

// The hand-overs in flight. Shared with their callbacks, which may run after the drain
// stopped waiting (they then touch only this).
struct ShardDrain::Progress {
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::string, Instant> pending;  // guarded by mu; zone -> its own deadline
  size_t redirected = 0, reclaimed = 0;    // guarded by mu
  std::map<Fault, size_t> reclaimed_by;    // guarded by mu
};

ShardDrain::ShardDrain(ShardDrainOptions options, directory::Directory& directory,
                       ZoneLeaseKeeper& keeper, world::WorldHost& host, DrainHandOver& hand_over,
                       const Clock& clock, Logger& log, Metrics& metrics)
    : options_(std::move(options)),
      directory_(directory),
      keeper_(keeper),
      host_(host),
      hand_over_(hand_over),
      clock_(clock),
      log_(log),
      redirected_(metrics.Counter("shard_drain_redirected_total",
                                  "Players handed to a peer during a graceful drain")) {
  RELEASE_ASSERT(options_.zone_deadline_ms > 0 && options_.zone_deadline_ms <= options_.deadline_ms,
                 "a zone's drain deadline must be inside the drain's");
  const std::pair<Fault, const char*> faults[] = {{Fault::kHandoff, "handoff"},
                                                  {Fault::kAdoptRefused, "adopt_refused"},
                                                  {Fault::kAdoptUnknown, "adopt_unknown"}};
  for (const auto& [fault, label] : faults) {
    reclaimed_[fault] = &metrics.Counter(
        "shard_drain_reclaimed_total",
        "Players saved and routed again by their gates because a drain could not hand them, by "
        "fault: the hand-over itself (handoff), or the target refused (adopt_refused) or did not "
        "answer (adopt_unknown) the adoption",
        {{"fault", label}});
  }
}

ShardDrain::~ShardDrain() = default;

int64_t ShardDrain::ReservationTtlMs() const {
  if (options_.reservation_ttl_ms > 0) return options_.reservation_ttl_ms;
  return options_.deadline_ms + limits::kShardDrainPresenceReflectMs;
}

void ShardDrain::CountReclaimed(const std::map<Fault, size_t>& by_fault) {
  for (const auto& [fault, n] : by_fault) reclaimed_[fault]->Increment(static_cast<double>(n));
}

void ShardDrain::HandOverZone(const std::string& zone, const directory::ZoneOwner& to, Fault fault,
                              const std::shared_ptr<Progress>& progress) {
  {
    std::lock_guard lock(progress->mu);
    progress->pending[zone] = clock_.Now() + std::chrono::milliseconds(options_.zone_deadline_ms);
  }
  const Status stopping = host_.StopZone(
      zone, [this, progress, to, zone, fault](std::vector<world::PlayerTransfer> frozen) {
        hand_over_.HandOver(std::move(frozen), to,
                            [progress, zone, fault](size_t redirected, size_t reclaimed) {
                              std::lock_guard lock(progress->mu);
                              progress->redirected += redirected;
                              progress->reclaimed += reclaimed;
                              if (reclaimed != 0) progress->reclaimed_by[fault] += reclaimed;
                              progress->pending.erase(zone);
                              progress->cv.notify_all();
                            });
      });
  if (!stopping.ok()) {
    std::lock_guard lock(progress->mu);
    progress->pending.erase(zone);
  }
}

Result<ShardDrain::Fault> ShardDrain::Move(const std::string& zone, uint64_t epoch,
                                           const directory::ShardInfo& to,
                                           directory::ZoneOwner* next) {
  // One fenced step: the lease is never ownerless.
  auto moved =
      directory_.TransferZone(zone, options_.shard_id, epoch, to.id, options_.lease_ttl_ms);
  if (!moved.ok()) {
    log_.Warn("drain: lease transfer failed",
              {{"zone", zone}, {"error", moved.status().ToString()}});
    return moved.status();
  }
  // Nothing renews the zone here from now on; if it comes back it is a new tenure.
  keeper_.Forget(zone);
  const directory::ZoneOwner owner{to.id, to.endpoint, moved->epoch, moved->ttl_ms};
  *next = owner;
  Fault fault = Fault::kHandoff;
  Status adopted = hand_over_.CallAdopt(owner, zone, moved->epoch);
  if (adopted.code() == StatusCode::kConflict) {
    // "Moved": the peer turned out to be draining (its mark came after this drain or the
    // director looked) and passed the lease on. The directory names where it went; the
    // players follow it there.
    auto owner_now = directory_.OwnerOfZone(zone);
    if (owner_now.ok() && *owner_now && (*owner_now)->shard_id != options_.shard_id &&
        !(*owner_now)->endpoint.empty()) {
      *next = **owner_now;
      log_.Info("drain: zone moved",
                {{"zone", zone}, {"to", next->shard_id}, {"via", to.id}, {"epoch", next->epoch}});
      return fault;
    }
    // Where it went cannot be read now: the players go to the peer, which refuses them if it
    // no longer has the zone, and those are routed again by their gates.
    fault = Fault::kAdoptUnknown;
    log_.Warn("drain: the peer passed the zone on, but its new owner cannot be read",
              {{"zone", zone},
               {"peer", to.id},
               {"error", owner_now.ok() ? "no live owner" : owner_now.status().ToString()}});
  } else if (AdoptionUnknown(adopted)) {
    // No answer in time is not a refusal: the peer may have started the zone all the same
    // (its keeper may still be doing it). The lease is the peer's either way, so the players
    // follow as if it had; a handoff the peer cannot take is refused there, and those
    // players are saved and routed again.
    fault = Fault::kAdoptUnknown;
    log_.Warn(
        "drain: the peer's adoption of the zone is unknown (maybe applied); its players "
        "are handed over as if adopted",
        {{"zone", zone}, {"peer", to.id}, {"error", adopted.ToString()}});
  } else if (!adopted.ok()) {
    fault = Fault::kAdoptRefused;
    log_.Warn("drain: peer refused to adopt the zone; its players will be routed again",
              {{"zone", zone}, {"peer", to.id}, {"error", adopted.ToString()}});
    // The lease is the peer's but nobody hosts the zone until it lapses and is claimed again.
    log_.Warn("zone needs (re)assignment",
              {{"zone", zone}, {"owner", to.id}, {"epoch", moved->epoch}});
  }
  log_.Info("drain: zone moved", {{"zone", zone}, {"to", to.id}, {"epoch", moved->epoch}});
  return fault;
}

DrainResult ShardDrain::Run() {
  const Instant started = clock_.Now();
  DrainResult result;
  hand_over_.BeginDrain();
  // Marked first: from now on no peer's drain and no director chooses this shard.
  if (!options_.endpoint.empty()) {
    if (Status marked = directory_.MarkShardDraining(
            options_.shard_id, options_.endpoint,
            options_.deadline_ms + limits::kShardDrainPresenceReflectMs);
        !marked.ok()) {
      log_.Warn("drain: could not mark the shard draining in the directory",
                {{"error", marked.ToString()}});
    }
  }
  auto shards = directory_.ListShards();
  std::vector<directory::ShardInfo> peers;
  if (shards.ok()) {
    for (const auto& shard : *shards) {
      // A draining peer is leaving too: it would refuse the zone.
      if (shard.id != options_.shard_id && !shard.endpoint.empty() && !shard.draining) {
        peers.push_back(shard);
      }
    }
  }
  const auto held = keeper_.held();
  log_.Info("signal received: draining before shutdown",
            {{"zones", static_cast<int64_t>(held.size())},
             {"peers", static_cast<int64_t>(peers.size())}});
  if (peers.empty()) {
    log_.Warn("drain: no live peer; players are saved and wait for a new owner");
    for (const auto& [zone, epoch] : held) {
      log_.Warn("zone needs (re)assignment", {{"zone", zone}, {"epoch", epoch}});
    }
    result.zones_left = held.size();
    return result;
  }
  auto peer_of = [&peers](const std::string& id) -> std::optional<directory::ShardInfo> {
    for (const auto& peer : peers) {
      if (peer.id == id) return peer;
    }
    return std::nullopt;
  };
  auto progress = std::make_shared<Progress>();
  std::map<std::string, int64_t> occupancy;
  for (const auto& entry : host_.Who()) ++occupancy[entry.zone];
  std::vector<directory::Reservation> reservations;
  const int64_t reservation_ttl = ReservationTtlMs();

  // The leader director's choices, if it answers in time.
  std::map<std::string, DirectedTarget> directed;
  if (ask_ && !held.empty()) {
    std::vector<DrainZoneLoad> loads;
    for (const auto& [zone, epoch] : held) {
      loads.push_back({zone, std::max<int64_t>(1, occupancy[zone])});
    }
    auto answer = ask_(loads, reservation_ttl);
    if (answer.ok()) {
      for (auto& target : *answer) {
        const std::string zone = target.zone;
        if (held.contains(zone)) directed[zone] = std::move(target);
      }
    } else {
      log_.Info("drain: no director answered; choosing targets alone",
                {{"error", answer.status().ToString()}});
    }
  }

  // Reserves room on the least loaded peer for `zone`'s players (at least one).
  auto reserve_target = [&](const std::string& zone) -> Result<std::string> {
    directory::DrainTargetRequest request;
    request.exclude = {options_.shard_id};
    request.amount = std::max<int64_t>(1, occupancy[zone]);
    request.ttl_ms = reservation_ttl;
    request.holder = options_.shard_id;
    auto target = directory_.SelectDrainTarget(request);
    if (!target.ok()) return target.status();
    reservations.push_back(target->reservation);
    return target->reservation.target;
  };

  for (const auto& [zone, epoch] : held) {
    std::optional<directory::ShardInfo> peer;
    if (auto it = directed.find(zone); it != directed.end()) {
      peer = peer_of(it->second.target);
      if (!it->second.reservation.empty()) {
        reservations.push_back(
            directory::Reservation{it->second.target, it->second.reservation, 0, 0});
      }
      if (peer) {
        ++result.zones_directed;
      } else {
        log_.Warn("drain: the director named a target that is not a live peer; choosing alone",
                  {{"zone", zone}, {"target", it->second.target}});
      }
    }
    if (!peer) {
      auto chosen = reserve_target(zone);
      if (chosen.ok()) peer = peer_of(*chosen);
      if (!peer) {
        log_.Warn("drain: no target for a zone",
                  {{"zone", zone},
                   {"error", chosen.ok() ? "target not a live peer" : chosen.status().ToString()}});
        log_.Warn("zone needs (re)assignment", {{"zone", zone}, {"epoch", epoch}});
        continue;
      }
    }
    directory::ZoneOwner next;
    auto fault = Move(zone, epoch, *peer, &next);
    if (!fault.ok()) continue;
    ++result.zones_moved;
    if (*fault == Fault::kAdoptUnknown) ++result.zones_adoption_unknown;
    HandOverZone(zone, next, *fault, progress);
  }
  // The lobby runs on every shard: its players go to the least loaded peer's.
  if (auto chosen = reserve_target(options_.lobby_zone); chosen.ok()) {
    if (auto peer = peer_of(*chosen)) {
      HandOverZone(options_.lobby_zone, directory::ZoneOwner{peer->id, peer->endpoint, 0, 0},
                   Fault::kHandoff, progress);
    }
  }

  const Instant deadline = started + std::chrono::milliseconds(options_.deadline_ms);
  std::map<Fault, size_t> reclaimed_by;
  {
    std::unique_lock lock(progress->mu);
    // Waits while some zone is still within its own deadline and the drain within its own.
    auto waiting = [&] {
      const Instant now = clock_.Now();
      if (now >= deadline) return false;
      return std::any_of(progress->pending.begin(), progress->pending.end(),
                         [now](const auto& kv) { return kv.second > now; });
    };
    while (waiting()) progress->cv.wait_for(lock, kDeadlinePoll);
    const Instant now = clock_.Now();
    result.complete = progress->pending.empty();
    result.zones_left = progress->pending.size();
    result.zones_timed_out =
        static_cast<size_t>(std::count_if(progress->pending.begin(), progress->pending.end(),
                                          [now](const auto& kv) { return kv.second <= now; }));
    result.redirected = progress->redirected;
    result.reclaimed = progress->reclaimed;
    reclaimed_by = progress->reclaimed_by;
  }
  for (const auto& reservation : reservations) {
    (void)directory_.ReleaseReservation(reservation.target, reservation.id);
  }
  redirected_.Increment(static_cast<double>(result.redirected));
  CountReclaimed(reclaimed_by);
  result.took_ms = ElapsedMs(started, clock_.Now());
  if (result.complete) {
    log_.Info("drain complete", {{"redirected", static_cast<int64_t>(result.redirected)},
                                 {"reclaimed", static_cast<int64_t>(result.reclaimed)},
                                 {"zones_directed", static_cast<int64_t>(result.zones_directed)},
                                 {"took_ms", result.took_ms}});
  } else {
    log_.Error("graceful drain incomplete",
               {{"zones_left", static_cast<int64_t>(result.zones_left)},
                {"zones_timed_out", static_cast<int64_t>(result.zones_timed_out)},
                {"redirected", static_cast<int64_t>(result.redirected)},
                {"reclaimed", static_cast<int64_t>(result.reclaimed)},
                {"took_ms", result.took_ms}});
  }
  return result;
}

Result<ZoneDrainResult> ShardDrain::DrainZone(const std::string& zone, const std::string& target) {
  const Instant started = clock_.Now();
  const auto held = keeper_.held();
  auto it = held.find(zone);
  if (it == held.end()) {
    return Status::FailedPrecondition("zone " + zone + " is not held by " + options_.shard_id);
  }
  if (target == options_.shard_id) {
    return Status::FailedPrecondition("zone " + zone + " is already on " + target);
  }
  auto shards = directory_.ListShards();
  if (!shards.ok()) return shards.status();
  std::optional<directory::ShardInfo> peer;
  for (const auto& shard : *shards) {
    if (shard.id == target) peer = shard;
  }
  if (!peer || peer->endpoint.empty() || peer->draining) {
    return Status::FailedPrecondition("target " + target +
                                      (peer && peer->draining ? " is draining" : " is not live"));
  }
  int64_t players = 0;
  for (const auto& entry : host_.Who()) {
    if (entry.zone == zone) ++players;
  }
  auto reservation =
      directory_.Reserve(target, std::max<int64_t>(1, players),
                         options_.zone_deadline_ms + limits::kShardDrainPresenceReflectMs);
  auto progress = std::make_shared<Progress>();
  directory::ZoneOwner next;
  auto fault = Move(zone, it->second, *peer, &next);
  const uint64_t new_epoch = next.epoch;
  if (!fault.ok()) {
    if (reservation.ok()) (void)directory_.ReleaseReservation(target, reservation->id);
    return fault.status();
  }
  ZoneDrainResult result;
  result.epoch = new_epoch;
  result.adoption_unknown = *fault == Fault::kAdoptUnknown;
  result.adoption_refused = *fault == Fault::kAdoptRefused;
  HandOverZone(zone, next, *fault, progress);
  std::map<Fault, size_t> reclaimed_by;
  {
    std::unique_lock lock(progress->mu);
    const Instant deadline = started + std::chrono::milliseconds(options_.zone_deadline_ms);
    while (!progress->pending.empty() && clock_.Now() < deadline) {
      progress->cv.wait_for(lock, kDeadlinePoll);
    }
    result.settled = progress->pending.empty();
    result.redirected = progress->redirected;
    result.reclaimed = progress->reclaimed;
    reclaimed_by = progress->reclaimed_by;
  }
  if (reservation.ok()) (void)directory_.ReleaseReservation(target, reservation->id);
  redirected_.Increment(static_cast<double>(result.redirected));
  CountReclaimed(reclaimed_by);
  result.took_ms = ElapsedMs(started, clock_.Now());
  log_.Info("drain: one zone moved and torn down here",
            {{"zone", zone},
             {"to", next.shard_id},
             {"epoch", new_epoch},
             {"settled", result.settled},
             {"redirected", static_cast<int64_t>(result.redirected)},
             {"reclaimed", static_cast<int64_t>(result.reclaimed)},
             {"took_ms", result.took_ms}});
  return result;
}

}  // namespace telos::shard
