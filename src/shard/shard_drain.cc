#include "telos/shard/shard_drain.h"

#include <algorithm>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>

namespace telos::shard {
namespace {

// How often the waiting thread looks at the (possibly manual) clock for the deadline.
constexpr std::chrono::milliseconds kDeadlinePoll{5};

// Whether an Adopt that did not succeed may have been applied: its caller stopped waiting (or
// the transport lost the answer), not the peer saying no.
bool AdoptionUnknown(const Status& s) {
  return s.code() == StatusCode::kDeadlineExceeded || s.code() == StatusCode::kUnknownResult ||
         s.code() == StatusCode::kCancelled;
}

struct Progress {
  std::mutex mu;
  std::condition_variable cv;
  size_t zones_left = 0, redirected = 0, reclaimed = 0;  // guarded by mu
};

}  // namespace

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
                                  "Players handed to a peer during a graceful drain")),
      reclaimed_(metrics.Counter(
          "shard_drain_reclaimed_total",
          "Players saved and routed again by their gates because a drain could not hand them")) {}

DrainResult ShardDrain::Run() {
  const Instant started = clock_.Now();
  DrainResult result;
  hand_over_.BeginDrain();
  auto shards = directory_.ListShards();
  std::vector<directory::ShardInfo> peers;
  if (shards.ok()) {
    for (const auto& shard : *shards) {
      if (shard.id != options_.shard_id && !shard.endpoint.empty()) peers.push_back(shard);
    }
  }
  const auto held = keeper_.held();
  log_.Info("signal received: draining before shutdown",
            {{"zones", static_cast<int64_t>(held.size())},
             {"peers", static_cast<int64_t>(peers.size())}});
  if (peers.empty()) {
    log_.Warn("drain: no live peer; players are saved and wait for a new owner");
    result.zones_left = held.size();
    return result;
  }
  auto endpoint_of = [&peers](const std::string& id) {
    for (const auto& peer : peers) {
      if (peer.id == id) return peer.endpoint;
    }
    return std::string();
  };
  auto progress = std::make_shared<Progress>();
  std::map<std::string, int64_t> occupancy;
  for (const auto& entry : host_.Who()) ++occupancy[entry.zone];
  std::vector<directory::Reservation> reservations;

  // Reserves room on the least loaded peer for `zone`'s players (at least one).
  auto reserve_target = [&](const std::string& zone) -> Result<std::string> {
    directory::DrainTargetRequest request;
    request.exclude = {options_.shard_id};
    request.amount = std::max<int64_t>(1, occupancy[zone]);
    auto target = directory_.SelectDrainTarget(request);
    if (!target.ok()) return target.status();
    reservations.push_back(target->reservation);
    return target->reservation.target;
  };
  // Stops `zone` here and hands its players to `to` once they are frozen.
  auto hand_over = [&](const std::string& zone, const directory::ZoneOwner& to) {
    {
      std::lock_guard lock(progress->mu);
      ++progress->zones_left;
    }
    const Status stopping = host_.StopZone(zone, [this, progress,
                                                  to](std::vector<world::PlayerTransfer> frozen) {
      hand_over_.HandOver(std::move(frozen), to, [progress](size_t redirected, size_t reclaimed) {
        std::lock_guard lock(progress->mu);
        progress->redirected += redirected;
        progress->reclaimed += reclaimed;
        --progress->zones_left;
        progress->cv.notify_all();
      });
    });
    if (!stopping.ok()) {
      std::lock_guard lock(progress->mu);
      --progress->zones_left;
    }
  };

  for (const auto& [zone, epoch] : held) {
    auto peer = reserve_target(zone);
    if (!peer.ok()) {
      log_.Warn("drain: no target for a zone",
                {{"zone", zone}, {"error", peer.status().ToString()}});
      continue;
    }
    // One fenced step: the lease is never ownerless.
    auto moved =
        directory_.TransferZone(zone, options_.shard_id, epoch, *peer, options_.lease_ttl_ms);
    if (!moved.ok()) {
      log_.Warn("drain: lease transfer failed",
                {{"zone", zone}, {"error", moved.status().ToString()}});
      continue;
    }
    keeper_.Forget(zone);
    ++result.zones_moved;
    const directory::ZoneOwner to{*peer, endpoint_of(*peer), moved->epoch, moved->ttl_ms};
    if (Status adopted = hand_over_.CallAdopt(to, zone, moved->epoch); AdoptionUnknown(adopted)) {
      // No answer in time is not a refusal: the peer may have started the zone all the same
      // (its keeper may still be doing it). The lease is the peer's either way, so the players
      // follow as if it had; a handoff the peer cannot take is refused there, and those
      // players are saved and routed again.
      ++result.zones_adoption_unknown;
      log_.Warn(
          "drain: the peer's adoption of the zone is unknown (maybe applied); its players "
          "are handed over as if adopted",
          {{"zone", zone}, {"peer", *peer}, {"error", adopted.ToString()}});
    } else if (!adopted.ok()) {
      log_.Warn("drain: peer refused to adopt the zone; its players will be routed again",
                {{"zone", zone}, {"peer", *peer}, {"error", adopted.ToString()}});
    }
    log_.Info("drain: zone moved", {{"zone", zone}, {"to", *peer}, {"epoch", moved->epoch}});
    hand_over(zone, to);
  }
  // The lobby runs on every shard: its players go to the least loaded peer's.
  if (auto peer = reserve_target(options_.lobby_zone); peer.ok()) {
    hand_over(options_.lobby_zone, directory::ZoneOwner{*peer, endpoint_of(*peer), 0, 0});
  }

  const Instant deadline = started + std::chrono::milliseconds(options_.deadline_ms);
  {
    std::unique_lock lock(progress->mu);
    while (progress->zones_left != 0 && clock_.Now() < deadline) {
      progress->cv.wait_for(lock, kDeadlinePoll);
    }
    result.complete = progress->zones_left == 0;
    result.zones_left = progress->zones_left;
    result.redirected = progress->redirected;
    result.reclaimed = progress->reclaimed;
  }
  for (const auto& reservation : reservations) {
    (void)directory_.ReleaseReservation(reservation.target, reservation.id);
  }
  redirected_.Increment(static_cast<double>(result.redirected));
  reclaimed_.Increment(static_cast<double>(result.reclaimed));
  result.took_ms = ElapsedMs(started, clock_.Now());
  if (result.complete) {
    log_.Info("drain complete", {{"redirected", static_cast<int64_t>(result.redirected)},
                                 {"reclaimed", static_cast<int64_t>(result.reclaimed)},
                                 {"took_ms", result.took_ms}});
  } else {
    log_.Error("graceful drain incomplete",
               {{"zones_left", static_cast<int64_t>(result.zones_left)},
                {"redirected", static_cast<int64_t>(result.redirected)},
                {"reclaimed", static_cast<int64_t>(result.reclaimed)},
                {"took_ms", result.took_ms}});
  }
  return result;
}

}  // namespace telos::shard
