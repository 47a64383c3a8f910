#include "telos/shard/zone_lease_keeper.h"

#include <deque>
#include <future>
#include <memory>

#include <algorithm>
#include <utility>

#include "telos/base/assert.h"

namespace telos::shard {
namespace {

std::vector<std::string> SortedUnique(std::vector<std::string> pool) {
  std::sort(pool.begin(), pool.end());
  pool.erase(std::unique(pool.begin(), pool.end()), pool.end());
  return pool;
}

// The pass cadence: every lease and the registration are refreshed at a third of their TTL.
int64_t PassIntervalMs(const ZoneLeaseKeeperOptions& o) {
  return directory::RenewIntervalMs(std::min(o.lease_ttl_ms, o.shard_ttl_ms));
}

}  // namespace

ZoneLeaseKeeper::ZoneLeaseKeeper(ZoneLeaseKeeperOptions options, directory::Directory& directory,
                                 ZoneHosting& hosting, const Clock& clock, Logger& log,
                                 Metrics& metrics)
    : options_(std::move(options)),
      pool_(SortedUnique(options_.pool)),
      directory_(directory),
      hosting_(hosting),
      clock_(clock),
      log_(log),
      zones_held_(metrics.Gauge("shard_zones_held", "Zones this shard holds a lease on")),
      claims_total_(
          metrics.Counter("shard_zone_claims_total", "Zone leases won from the pool and started")),
      losses_total_(
          metrics.Counter("shard_zone_losses_total",
                          "Zones stopped because their lease was lost or unconfirmable")) {
  RELEASE_ASSERT(!options_.shard_id.empty(), "a zone lease keeper needs a shard id");
  RELEASE_ASSERT(!options_.endpoint.empty(), "a zone lease keeper needs an endpoint");
  RELEASE_ASSERT(options_.lease_ttl_ms >= 6, "lease_ttl_ms must leave a fence of 1 ms or more");
  RELEASE_ASSERT(options_.shard_ttl_ms >= 3, "shard_ttl_ms must allow a heartbeat interval");
  zones_held_.Set(0);
}

ZoneLeaseKeeper::~ZoneLeaseKeeper() {
  Stop(/*release=*/false);
}

Status ZoneLeaseKeeper::Register() {
  Status s = directory_.RegisterShard(options_.shard_id, options_.endpoint, options_.shard_ttl_ms);
  if (s.code() == StatusCode::kAlreadyExists) {
    // Name the live holder, so the operator sees which process owns the id.
    std::string holder = "an unknown endpoint";
    auto shards = directory_.ListShards();
    if (shards.ok()) {
      for (const directory::ShardInfo& info : *shards) {
        if (info.id == options_.shard_id) holder = info.endpoint;
      }
    }
    s = Status::AlreadyExists("shard id " + options_.shard_id +
                              " is already registered by a live shard at " + holder);
    log_.Error(
        "shard id refused",
        {{"shard", options_.shard_id}, {"endpoint", options_.endpoint}, {"error", s.ToString()}});
    return s;
  }
  if (!s.ok()) {
    log_.Warn("shard registration failed", {{"shard", options_.shard_id}, {"error", s.ToString()}});
    return s;
  }
  log_.Info("registered shard", {{"shard", options_.shard_id},
                                 {"endpoint", options_.endpoint},
                                 {"ttl_ms", options_.shard_ttl_ms}});
  return Status::Ok();
}

void ZoneLeaseKeeper::Tick() {
  RELEASE_ASSERT(!in_pass_.exchange(true), "ZoneLeaseKeeper::Tick must not run concurrently");
  const Instant pass_start = clock_.Now();
  std::set<std::string> stopped;  // zones stopped in this pass: not claimed again in it
  if (Heartbeat() == Registration::kIdTaken) {
    StopAll("shard id " + options_.shard_id + " is held by another endpoint");
    NoteStandby(/*claim_attempted=*/false);
  } else {
    RenewHeld(pass_start, stopped);
    ReconfirmSuspended(stopped);
    ClaimFree(stopped);
    NoteStandby(/*claim_attempted=*/true);
    // Only while the id is ours: a report under a taken id would describe the other process.
    ReportOccupancy();
  }
  in_pass_.store(false);
}

ZoneLeaseKeeper::Registration ZoneLeaseKeeper::Heartbeat() {
  const Status s =
      directory_.HeartbeatShard(options_.shard_id, options_.endpoint, options_.shard_ttl_ms);
  if (s.ok()) return Registration::kOk;
  if (s.code() == StatusCode::kFailedPrecondition) {
    // Lapsed (a long stall, or the directory lost it): take the id again.
    log_.Warn("shard registration lapsed: registering again", {{"shard", options_.shard_id}});
    const Status r = Register();
    if (r.ok()) return Registration::kOk;
    return r.code() == StatusCode::kAlreadyExists ? Registration::kIdTaken : Registration::kUnknown;
  }
  if (s.code() == StatusCode::kAlreadyExists) {
    log_.Error(
        "shard id taken by another endpoint: stopping every zone",
        {{"shard", options_.shard_id}, {"endpoint", options_.endpoint}, {"error", s.ToString()}});
    return Registration::kIdTaken;
  }
  log_.Warn("shard heartbeat failed", {{"shard", options_.shard_id}, {"error", s.ToString()}});
  return Registration::kUnknown;
}

void ZoneLeaseKeeper::RenewHeld(Instant pass_start, std::set<std::string>& stopped) {
  std::map<std::string, Lease> snapshot;
  {
    std::lock_guard lock(mu_);
    snapshot = held_;
  }
  for (const auto& [zone, lease] : snapshot) {
    // A fence that passed while this pass was blocked on other zones is not worth a renew: the
    // zone has already gone unconfirmed for as long as it may. One that had passed before the
    // pass began (the keeper was not running) is judged by the renew's answer instead.
    const Instant fence = FenceOf(lease);
    if (fence > pass_start && clock_.Now() >= fence) {
      if (FenceReached(zone, lease)) stopped.insert(zone);
      continue;
    }
    const Instant sent = clock_.Now();
    auto renewed =
        directory_.RenewZone(zone, options_.shard_id, lease.epoch, options_.lease_ttl_ms);
    if (renewed.ok()) {
      std::lock_guard lock(mu_);
      auto it = held_.find(zone);
      // Forgotten meanwhile: the lease is someone else's business now.
      if (it != held_.end() && it->second.epoch == lease.epoch) {
        it->second.deadline = sent + Millis(renewed->ttl_ms);
        it->second.last_failure = StatusCode::kOk;
      }
      continue;
    }
    const Status& s = renewed.status();
    if (s.code() == StatusCode::kFailedPrecondition) {
      if (DropAndStop(zone, lease.epoch, "lease lost: " + s.ToString(), /*fence=*/false)) {
        stopped.insert(zone);
      }
      continue;
    }
    // Unconfirmed: keep hosting only while the lease is surely still ours.
    Lease unconfirmed = lease;
    unconfirmed.last_failure = s.code();
    {
      std::lock_guard lock(mu_);
      auto it = held_.find(zone);
      if (it != held_.end() && it->second.epoch == lease.epoch) it->second.last_failure = s.code();
    }
    if (clock_.Now() >= fence) {
      if (FenceReached(zone, unconfirmed)) stopped.insert(zone);
      continue;
    }
    log_.Warn("lease renewal failed: keeping zone until its fence",
              {{"zone", zone},
               {"epoch", lease.epoch},
               {"fence_in_ms", ElapsedMs(clock_.Now(), fence)},
               {"error", s.ToString()}});
  }
}

void ZoneLeaseKeeper::ReconfirmSuspended(std::set<std::string>& stopped) {
  std::map<std::string, uint64_t> snapshot;
  {
    std::lock_guard lock(mu_);
    snapshot = suspended_;
  }
  for (const auto& [zone, epoch] : snapshot) {
    // These calls block; a held zone must not outlive its fence while they do.
    for (std::string& z : EnforceFences()) stopped.insert(std::move(z));
    const Instant sent = clock_.Now();
    auto confirmed = directory_.RenewZone(zone, options_.shard_id, epoch, options_.lease_ttl_ms);
    if (!confirmed.ok() && confirmed.status().code() == StatusCode::kFailedPrecondition) {
      // Lapsed while we were cut off (or the directory lost it): win it again if it is free.
      confirmed = directory_.ClaimZone(zone, options_.shard_id, options_.lease_ttl_ms,
                                       hosting_.EpochFloor(zone));
      if (!confirmed.ok() && confirmed.status().code() == StatusCode::kConflict) {
        {
          std::lock_guard lock(mu_);
          auto it = suspended_.find(zone);
          if (it == suspended_.end() || it->second != epoch) continue;
          suspended_.erase(it);
        }
        losses_total_.Increment();
        log_.Warn("lease lost while cut off from the directory: stopping zone",
                  {{"shard", options_.shard_id}, {"zone", zone}, {"epoch", epoch}});
        hosting_.StopZone(zone, "lease taken by a peer while cut off from the directory");
        stopped.insert(zone);
        continue;
      }
    }
    if (!confirmed.ok()) continue;  // still unreachable: stays suspended
    {
      std::lock_guard lock(mu_);
      auto it = suspended_.find(zone);
      if (it == suspended_.end() || it->second != epoch) continue;  // forgotten meanwhile
    }
    if (const Status resumed = hosting_.ResumeZone(zone, confirmed->epoch); !resumed.ok()) {
      const Status released = directory_.ReleaseZone(zone, options_.shard_id, confirmed->epoch);
      log_.Warn("zone not resumed: lease released, still single-shard",
                {{"zone", zone},
                 {"epoch", confirmed->epoch},
                 {"error", resumed.ToString()},
                 {"release", released.ToString()}});
      continue;
    }
    {
      std::lock_guard lock(mu_);
      auto it = suspended_.find(zone);
      if (it == suspended_.end() || it->second != epoch) continue;  // forgotten meanwhile
      suspended_.erase(it);
      held_[zone] = Lease{confirmed->epoch, sent + Millis(confirmed->ttl_ms)};
    }
    claims_total_.Increment();
    log_.Info("lease confirmed again: zone leaves single-shard mode", {{"shard", options_.shard_id},
                                                                       {"zone", zone},
                                                                       {"epoch", confirmed->epoch},
                                                                       {"previous_epoch", epoch}});
  }
}

bool ZoneLeaseKeeper::FenceReached(const std::string& zone, const Lease& lease) {
  if (lease.last_failure != StatusCode::kUnavailable) {
    return DropAndStop(zone, lease.epoch, "lease not confirmable", /*fence=*/true);
  }
  size_t count = 0;
  {
    std::lock_guard lock(mu_);
    auto it = held_.find(zone);
    if (it == held_.end() || it->second.epoch != lease.epoch) return false;
    held_.erase(it);
    suspended_[zone] = lease.epoch;
    count = held_.size();
  }
  zones_held_.Set(static_cast<double>(count));
  log_.Error("lease fence: directory unreachable, zone continues in single-shard mode",
             {{"shard", options_.shard_id}, {"zone", zone}, {"epoch", lease.epoch}});
  hosting_.SuspendZone(zone, "directory unreachable");
  return true;
}

void ZoneLeaseKeeper::ClaimFree(std::set<std::string>& stopped) {
  for (const std::string& zone : pool_) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      if (held_.contains(zone) || suspended_.contains(zone)) continue;
    }
    if (stopped.contains(zone)) continue;
    {
      std::lock_guard lock(mu_);
      watched_expiry_.erase(zone);  // set again below if a peer still holds it
    }
    // Claims block; a held zone must not outlive its fence while they do.
    for (std::string& z : EnforceFences()) stopped.insert(std::move(z));
    const Instant sent = clock_.Now();
    auto claimed = directory_.ClaimZone(zone, options_.shard_id, options_.lease_ttl_ms,
                                        hosting_.EpochFloor(zone));
    if (!claimed.ok()) {
      if (claimed.status().code() == StatusCode::kConflict) {
        log_.Debug("zone held by a live peer", {{"zone", zone}});
        WatchExpiry(zone);
      } else {
        log_.Warn("zone claim failed", {{"zone", zone}, {"error", claimed.status().ToString()}});
      }
      continue;
    }
    const uint64_t epoch = claimed->epoch;
    const Status started = hosting_.StartZone(zone, epoch);
    // AlreadyExists: adopted from a draining peer meanwhile, and running.
    if (!started.ok() && started.code() != StatusCode::kAlreadyExists) {
      const Status released = directory_.ReleaseZone(zone, options_.shard_id, epoch);
      log_.Error("zone failed to start: lease released", {{"zone", zone},
                                                          {"epoch", epoch},
                                                          {"error", started.ToString()},
                                                          {"release", released.ToString()}});
      continue;
    }
    Hold(zone, epoch, sent, claimed->ttl_ms, /*adopted=*/false);
  }
}

void ZoneLeaseKeeper::WatchExpiry(const std::string& zone) {
  // A peer's lease lapses at most lease_ttl_ms after its last renewal; waking only every pass
  // would add up to a pass interval to the time an orphaned zone waits. Wake just after it.
  const Instant now = clock_.Now();
  auto owner = directory_.OwnerOfZone(zone);
  if (!owner.ok() || !owner->has_value()) return;
  const Instant expiry = now + Millis((*owner)->ttl_ms + kExpiryMarginMs);
  std::lock_guard lock(mu_);
  watched_expiry_[zone] = expiry;
}

std::optional<Instant> ZoneLeaseKeeper::EarliestWatchedExpiry() const {
  std::lock_guard lock(mu_);
  std::optional<Instant> earliest;
  for (const auto& [zone, at] : watched_expiry_) {
    if (!earliest || at < *earliest) earliest = at;
  }
  return earliest;
}

void ZoneLeaseKeeper::ReportOccupancy() {
  std::function<std::vector<directory::ZoneCount>()> source;
  {
    std::lock_guard lock(mu_);
    source = occupancy_;
  }
  if (!source) return;
  const Status s = directory_.ReportOccupancy(options_.shard_id, source());
  if (!s.ok()) {
    log_.Warn("occupancy report failed", {{"shard", options_.shard_id}, {"error", s.ToString()}});
  }
}

std::vector<std::string> ZoneLeaseKeeper::EnforceFences() {
  const Instant now = clock_.Now();
  std::vector<std::pair<std::string, Lease>> due;
  {
    std::lock_guard lock(mu_);
    for (const auto& [zone, lease] : held_) {
      if (now >= FenceOf(lease)) due.emplace_back(zone, lease);
    }
  }
  std::vector<std::string> stopped;
  for (const auto& [zone, lease] : due) {
    if (FenceReached(zone, lease)) stopped.push_back(zone);
  }
  return stopped;
}

bool ZoneLeaseKeeper::DropAndStop(const std::string& zone, uint64_t epoch, const std::string& why,
                                  bool fence) {
  size_t count = 0;
  {
    std::lock_guard lock(mu_);
    auto it = held_.find(zone);
    if (it == held_.end() || it->second.epoch != epoch) return false;
    held_.erase(it);
    count = held_.size();
  }
  zones_held_.Set(static_cast<double>(count));
  losses_total_.Increment();
  if (fence) {
    // Nobody can confirm the lease, so there is no peer to hand the players to in a fenced step.
    log_.Error("lease fence: stopping without drain",
               {{"shard", options_.shard_id}, {"zone", zone}, {"epoch", epoch}, {"why", why}});
  } else {
    log_.Warn("lease lost: stopping zone",
              {{"shard", options_.shard_id}, {"zone", zone}, {"epoch", epoch}, {"why", why}});
  }
  hosting_.StopZone(zone, why);
  return true;
}

void ZoneLeaseKeeper::StopAll(const std::string& why) {
  std::map<std::string, Lease> snapshot;
  {
    std::lock_guard lock(mu_);
    snapshot = held_;
  }
  for (const auto& [zone, lease] : snapshot) {
    (void)DropAndStop(zone, lease.epoch, why, /*fence=*/false);
  }
  std::map<std::string, uint64_t> suspended;
  {
    std::lock_guard lock(mu_);
    suspended.swap(suspended_);
  }
  for (const auto& [zone, epoch] : suspended) {
    losses_total_.Increment();
    hosting_.StopZone(zone, why);
  }
}

void ZoneLeaseKeeper::NoteStandby(bool claim_attempted) {
  size_t count = 0, suspended = 0;
  {
    std::lock_guard lock(mu_);
    count = held_.size();
    suspended = suspended_.size();
  }
  zones_held_.Set(static_cast<double>(count));
  const bool standby_now = count + suspended == 0;
  if (standby_now) {
    if (!claim_attempted || standby_logged_ == true) return;
    log_.Info("won no zones: STANDBY",
              {{"shard", options_.shard_id}, {"pool", static_cast<int64_t>(pool_.size())}});
  } else if (standby_logged_ == true) {
    log_.Info("left standby: hosting zones",
              {{"shard", options_.shard_id}, {"zones", static_cast<int64_t>(count)}});
  }
  standby_logged_ = standby_now;
}

Instant ZoneLeaseKeeper::FenceOf(const Lease& lease) const {
  return lease.deadline - Millis(options_.lease_ttl_ms / 6);
}

std::optional<Instant> ZoneLeaseKeeper::EarliestFence() const {
  std::lock_guard lock(mu_);
  std::optional<Instant> earliest;
  for (const auto& [zone, lease] : held_) {
    const Instant fence = FenceOf(lease);
    if (!earliest || fence < *earliest) earliest = fence;
  }
  return earliest;
}

void ZoneLeaseKeeper::Start() {
  RELEASE_ASSERT(!thread_.joinable(), "ZoneLeaseKeeper::Start called twice");
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
  }
  {
    std::lock_guard lock(mu_);
    running_ = true;
  }
  thread_ = std::thread([this] { Run(); });
}

void ZoneLeaseKeeper::Run() {
  const Millis interval(PassIntervalMs(options_));
  Instant next_pass = clock_.Now();
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) break;
    }
    RunAdoptions();
    const auto expiry = EarliestWatchedExpiry();
    if (clock_.Now() >= next_pass || (expiry && clock_.Now() >= *expiry)) {
      next_pass = clock_.Now() + interval;
      Tick();
      // A watch the pass did not renew (the zone was adopted, or no claim ran) is spent: it
      // must not wake the thread again and again.
      const Instant now = clock_.Now();
      std::lock_guard lock(mu_);
      std::erase_if(watched_expiry_, [now](const auto& entry) { return entry.second <= now; });
    } else {
      (void)EnforceFences();
    }
    Instant wake = next_pass;
    if (auto fence = EarliestFence(); fence && *fence < wake) wake = *fence;
    if (auto watched = EarliestWatchedExpiry(); watched && *watched < wake) wake = *watched;
    std::unique_lock lock(mu_);
    const Duration wait = wake - clock_.Now();
    if (wait > Duration::zero()) {
      wake_.wait_for(lock, wait, [this] { return stopping_ || !adoptions_.empty(); });
    }
  }
  // Adoptions asked for as the thread stops are refused, not left waiting.
  std::deque<std::shared_ptr<Adoption>> refused;
  {
    std::lock_guard lock(mu_);
    refused.swap(adoptions_);
    running_ = false;
  }
  for (auto& adoption : refused) {
    adoption->done.set_value(Status::Unavailable("shard " + options_.shard_id + " is stopping"));
  }
}

void ZoneLeaseKeeper::Stop(bool release) {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (!release) return;

  std::map<std::string, Lease> snapshot;
  {
    std::lock_guard lock(mu_);
    snapshot.swap(held_);
  }
  zones_held_.Set(0);
  for (const auto& [zone, lease] : snapshot) {
    const Status s = directory_.ReleaseZone(zone, options_.shard_id, lease.epoch);
    if (s.ok()) {
      log_.Info("released zone",
                {{"shard", options_.shard_id}, {"zone", zone}, {"epoch", lease.epoch}});
    } else {
      // Lost already, or the directory is down: either way the lease lapses on its own.
      log_.Warn("zone release failed",
                {{"shard", options_.shard_id}, {"zone", zone}, {"error", s.ToString()}});
    }
  }
  const Status s = directory_.DeregisterShard(options_.shard_id, options_.endpoint);
  if (s.ok()) {
    log_.Info("deregistered shard", {{"shard", options_.shard_id}});
  } else {
    log_.Warn("shard deregistration failed",
              {{"shard", options_.shard_id}, {"error", s.ToString()}});
  }
}

std::map<std::string, uint64_t> ZoneLeaseKeeper::held() const {
  std::lock_guard lock(mu_);
  std::map<std::string, uint64_t> out;
  for (const auto& [zone, lease] : held_) out.emplace(zone, lease.epoch);
  return out;
}

bool ZoneLeaseKeeper::standby() const {
  std::lock_guard lock(mu_);
  return held_.empty() && suspended_.empty();
}

std::map<std::string, uint64_t> ZoneLeaseKeeper::suspended() const {
  std::lock_guard lock(mu_);
  return suspended_;
}

void ZoneLeaseKeeper::Hold(const std::string& zone, uint64_t epoch, Instant sent, int64_t ttl_ms,
                           bool adopted) {
  size_t count = 0;
  {
    std::lock_guard lock(mu_);
    held_[zone] = Lease{epoch, sent + Millis(ttl_ms)};
    watched_expiry_.erase(zone);  // ours now: nothing to wait for
    count = held_.size();
  }
  claims_total_.Increment();
  zones_held_.Set(static_cast<double>(count));
  log_.Info("claimed zone", {{"shard", options_.shard_id},
                             {"zone", zone},
                             {"epoch", epoch},
                             {"ttl_ms", ttl_ms},
                             {"adopted", adopted}});
}

Status ZoneLeaseKeeper::Adopt(const std::string& zone, uint64_t epoch) {
  // The host is driven from one thread only: while the thread runs, the adoption is its work.
  auto request = std::make_shared<Adoption>(Adoption{zone, epoch, {}});
  std::future<Status> done = request->done.get_future();
  {
    std::unique_lock lock(mu_);
    // Stopping (or stopped: the zones are being frozen out): a zone started now would be
    // neither drained nor saved by this stop.
    if (stopping_) return Status::Unavailable("shard " + options_.shard_id + " is stopping");
    if (!running_) {
      // Before Start() (or in a test driving Tick() by hand) the caller is the owner's thread.
      lock.unlock();
      return AdoptNow(zone, epoch);
    }
    adoptions_.push_back(request);
  }
  wake_.notify_all();
  // A pass in flight finishes first; its directory calls are each bounded by TTL/6.
  if (done.wait_for(Millis(options_.lease_ttl_ms)) != std::future_status::ready) {
    return Status::DeadlineExceeded("zone " + zone + ": the lease keeper did not take it in time");
  }
  return done.get();
}

void ZoneLeaseKeeper::RunAdoptions() {
  std::deque<std::shared_ptr<Adoption>> adoptions;
  {
    std::lock_guard lock(mu_);
    adoptions.swap(adoptions_);
  }
  for (auto& adoption : adoptions)
    adoption->done.set_value(AdoptNow(adoption->zone, adoption->epoch));
}

Status ZoneLeaseKeeper::AdoptNow(const std::string& zone, uint64_t epoch) {
  const Instant sent = clock_.Now();
  auto renewed = directory_.RenewZone(zone, options_.shard_id, epoch, options_.lease_ttl_ms);
  if (!renewed.ok()) return renewed.status();
  const Status started = hosting_.StartZone(zone, epoch);
  if (!started.ok() && started.code() != StatusCode::kAlreadyExists) return started;
  Hold(zone, epoch, sent, renewed->ttl_ms, /*adopted=*/true);
  return Status::Ok();
}

void ZoneLeaseKeeper::Forget(const std::string& zone) {
  size_t count = 0;
  {
    std::lock_guard lock(mu_);
    if (held_.erase(zone) + suspended_.erase(zone) == 0) return;
    count = held_.size();
  }
  zones_held_.Set(static_cast<double>(count));
  log_.Info("zone forgotten", {{"shard", options_.shard_id}, {"zone", zone}});
}

void ZoneLeaseKeeper::SetOccupancySource(
    std::function<std::vector<directory::ZoneCount>()> source) {
  std::lock_guard lock(mu_);
  occupancy_ = std::move(source);
}

}  // namespace telos::shard
