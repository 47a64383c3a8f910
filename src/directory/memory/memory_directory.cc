#include "telos/directory/memory_directory.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "validate.h"

namespace telos::directory {

namespace {

// A lease as stored: zone leases and leader leases share it. `expires_ms` is on the clock's
// millisecond line; an empty owner means released. The epoch survives release and lapse.
struct LeaseRow {
  std::string owner;
  int64_t expires_ms = 0;
  uint64_t epoch = 0;
};

bool Live(const LeaseRow& row, int64_t now_ms) {
  return !row.owner.empty() && row.expires_ms > now_ms;
}

struct ShardRow {
  std::string endpoint;
  int64_t expires_ms = 0;
};

struct PresenceRow {
  std::string gate;
  std::string shard;
  int64_t expires_ms = 0;
};

struct OccupancyRow {
  std::vector<ZoneCount> zones;
  int64_t reported_at_ms = 0;
};

struct ReservationRow {
  int64_t amount = 0;
  int64_t expires_ms = 0;
  std::string holder;  // empty: anonymous (never rebased)
};

struct DirectiveRow {
  std::string from;
  std::string to;
  int64_t expires_ms = 0;
  std::string scope;  // the leader lease that issued it, and its term then
  uint64_t epoch = 0;
};

using Leases = std::map<std::string, LeaseRow, std::less<>>;

// The lease rules, written once for zones and leaders.
Result<LeaseGrant> LeaseClaim(Leases& leases, std::string_view key, std::string_view holder,
                              int64_t ttl_ms, int64_t now_ms, uint64_t min_epoch = 0) {
  LeaseRow& row = leases[std::string(key)];
  const bool live = Live(row, now_ms);
  if (live && row.owner != holder) {
    return Status::Conflict("held by " + row.owner + " for another " +
                            std::to_string(row.expires_ms - now_ms) + " ms");
  }
  if (!live || row.epoch < min_epoch) {
    row.epoch = std::max(row.epoch + 1, min_epoch);
    row.owner = std::string(holder);
  }
  row.expires_ms = now_ms + ttl_ms;
  return LeaseGrant{row.epoch, ttl_ms};
}

Result<LeaseGrant> LeaseRenew(Leases& leases, std::string_view key, std::string_view holder,
                              uint64_t epoch, int64_t ttl_ms, int64_t now_ms, bool refresh) {
  auto it = leases.find(key);
  if (it == leases.end() || !Live(it->second, now_ms) || it->second.owner != holder ||
      it->second.epoch != epoch) {
    return Status::FailedPrecondition("lease not held by " + std::string(holder) + " at epoch " +
                                      std::to_string(epoch));
  }
  if (refresh) it->second.expires_ms = now_ms + ttl_ms;
  return LeaseGrant{epoch, it->second.expires_ms - now_ms};
}

Status LeaseRelease(Leases& leases, std::string_view key, std::string_view holder, uint64_t epoch) {
  auto it = leases.find(key);
  if (it == leases.end() || it->second.owner != holder || it->second.epoch != epoch) {
    return Status::FailedPrecondition("lease not held by " + std::string(holder) + " at epoch " +
                                      std::to_string(epoch));
  }
  it->second.owner.clear();
  it->second.expires_ms = 0;
  return Status::Ok();
}

// The refusal of a directive whose issuer does not hold the scope's live lease at that term.
std::string NotTheLeader(std::string_view scope, uint64_t epoch) {
  return "not the leader of scope " + std::string(scope) + " at epoch " + std::to_string(epoch);
}

}  // namespace

struct MemoryDirectory::State {
  std::map<std::string, ShardRow, std::less<>> shards;
  std::map<std::string, int64_t, std::less<>> draining;  // shard id -> mark expires_ms
  Leases zones;
  Leases leaders;
  std::map<std::string, Placement, std::less<>> placements;
  std::map<std::string, PresenceRow, std::less<>> presence;
  std::map<std::string, OccupancyRow, std::less<>> occupancy;
  // target -> reservation id -> row
  std::map<std::string, std::map<std::string, ReservationRow, std::less<>>, std::less<>>
      reservations;
  uint64_t reservation_seq = 0;
  std::map<std::string, DirectiveRow, std::less<>> directives;
  std::map<std::string, int64_t, std::less<>> cooldowns;  // zone -> expires_ms
  std::optional<PackVersion> pack_version;

  void PruneShards(int64_t now_ms) {
    std::erase_if(shards, [&](const auto& kv) { return kv.second.expires_ms <= now_ms; });
    std::erase_if(draining, [&](const auto& kv) { return kv.second <= now_ms; });
  }
  bool Draining(std::string_view id, int64_t now_ms) const {
    auto it = draining.find(id);
    return it != draining.end() && it->second > now_ms;
  }
  bool ShardLive(std::string_view id, int64_t now_ms) const {
    auto it = shards.find(id);
    return it != shards.end() && it->second.expires_ms > now_ms;
  }
  // Drops expired reservations everywhere, then returns the target's unexpired sum.
  void PruneReservations(int64_t now_ms) {
    for (auto& [target, rows] : reservations) {
      std::erase_if(rows, [&](const auto& kv) { return kv.second.expires_ms <= now_ms; });
    }
    std::erase_if(reservations, [](const auto& kv) { return kv.second.empty(); });
  }
  int64_t ReservedOn(std::string_view target) const {
    auto it = reservations.find(target);
    if (it == reservations.end()) return 0;
    int64_t sum = 0;
    for (const auto& [id, row] : it->second) sum += row.amount;
    return sum;
  }
  Reservation AddReservation(std::string_view target, int64_t amount, int64_t ttl_ms,
                             int64_t now_ms, std::string_view holder = {}) {
    std::string id = std::to_string(++reservation_seq);
    reservations[std::string(target)][id] =
        ReservationRow{amount, now_ms + ttl_ms, std::string(holder)};
    return Reservation{std::string(target), std::move(id), amount, ttl_ms};
  }
  // The holder's live hold on target rebased by one more reserve, or a new hold. Only a
  // holder's own hold is ever touched, so a crashed drainer's hold still runs out on time.
  // REQUIRES: expired holds were pruned.
  Reservation ReserveAs(std::string_view target, int64_t amount, int64_t ttl_ms, int64_t now_ms,
                        std::string_view holder) {
    if (!holder.empty()) {
      if (auto rows = reservations.find(target); rows != reservations.end()) {
        for (auto& [id, row] : rows->second) {
          if (row.holder != holder) continue;
          // One hold covers every zone this holder sends to the target; it stays within the
          // bound a single reservation has.
          row.amount = std::min(row.amount + amount, kReservationAmountMax);
          row.expires_ms = std::max(row.expires_ms, now_ms + ttl_ms);
          return Reservation{std::string(target), id, row.amount, row.expires_ms - now_ms};
        }
      }
    }
    return AddReservation(target, amount, ttl_ms, now_ms, holder);
  }
  void PruneDirectives(int64_t now_ms) {
    std::erase_if(directives, [&](const auto& kv) { return kv.second.expires_ms <= now_ms; });
  }
};

using internal::CheckAmount;
using internal::CheckEpoch;
using internal::CheckId;
using internal::CheckOptionalId;
using internal::CheckTtl;

MemoryDirectory::MemoryDirectory(const Clock& clock)
    : clock_(clock), state_(std::make_unique<State>()) {}

MemoryDirectory::~MemoryDirectory() = default;

int64_t MemoryDirectory::NowMs() const {
  return std::chrono::duration_cast<Millis>(clock_.Now().time_since_epoch()).count();
}

// ------------------------------------------------------------------ shards

Status MemoryDirectory::RegisterShard(std::string_view shard_id, std::string_view endpoint,
                                      int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("shard_id", shard_id));
  TELOS_RETURN_IF_ERROR(CheckId("endpoint", endpoint));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  std::lock_guard lock(mu_);
  const int64_t now = NowMs();
  auto it = state_->shards.find(shard_id);
  if (it != state_->shards.end() && it->second.expires_ms > now &&
      it->second.endpoint != endpoint) {
    return Status::AlreadyExists("shard id " + std::string(shard_id) + " is live at " +
                                 it->second.endpoint);
  }
  // A registration is a new incarnation (the live process heartbeats instead): whatever
  // draining mark the id had belonged to the one before, even one that restarted on this
  // endpoint within the registration TTL.
  state_->draining.erase(std::string(shard_id));
  state_->shards[std::string(shard_id)] = ShardRow{std::string(endpoint), now + ttl_ms};
  return Status::Ok();
}

Status MemoryDirectory::HeartbeatShard(std::string_view shard_id, std::string_view endpoint,
                                       int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("shard_id", shard_id));
  TELOS_RETURN_IF_ERROR(CheckId("endpoint", endpoint));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  std::lock_guard lock(mu_);
  const int64_t now = NowMs();
  auto it = state_->shards.find(shard_id);
  if (it == state_->shards.end() || it->second.expires_ms <= now) {
    return Status::FailedPrecondition("registration of " + std::string(shard_id) + " lapsed");
  }
  if (it->second.endpoint != endpoint) {
    return Status::AlreadyExists("shard id " + std::string(shard_id) + " is live at " +
                                 it->second.endpoint);
  }
  it->second.expires_ms = now + ttl_ms;
  return Status::Ok();
}

Status MemoryDirectory::DeregisterShard(std::string_view shard_id, std::string_view endpoint) {
  TELOS_RETURN_IF_ERROR(CheckId("shard_id", shard_id));
  TELOS_RETURN_IF_ERROR(CheckId("endpoint", endpoint));
  std::lock_guard lock(mu_);
  auto it = state_->shards.find(shard_id);
  if (it != state_->shards.end()) {
    if (it->second.endpoint != endpoint) {
      return Status::FailedPrecondition("shard id " + std::string(shard_id) + " belongs to " +
                                        it->second.endpoint);
    }
    state_->shards.erase(it);
  }
  if (auto mark = state_->draining.find(shard_id); mark != state_->draining.end()) {
    state_->draining.erase(mark);
  }
  if (auto occ = state_->occupancy.find(shard_id); occ != state_->occupancy.end()) {
    state_->occupancy.erase(occ);
  }
  return Status::Ok();
}

Result<std::vector<ShardInfo>> MemoryDirectory::ListShards() {
  std::lock_guard lock(mu_);
  const int64_t now = NowMs();
  state_->PruneShards(now);
  std::vector<ShardInfo> out;
  for (const auto& [id, row] : state_->shards) {
    out.push_back(ShardInfo{id, row.endpoint, row.expires_ms - now, state_->Draining(id, now)});
  }
  return out;
}

Status MemoryDirectory::MarkShardDraining(std::string_view shard_id, std::string_view endpoint,
                                          int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("shard_id", shard_id));
  TELOS_RETURN_IF_ERROR(CheckId("endpoint", endpoint));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  std::lock_guard lock(mu_);
  const int64_t now = NowMs();
  auto it = state_->shards.find(shard_id);
  if (it == state_->shards.end() || it->second.expires_ms <= now) {
    return Status::FailedPrecondition("registration of " + std::string(shard_id) + " lapsed");
  }
  if (it->second.endpoint != endpoint) {
    return Status::AlreadyExists("shard id " + std::string(shard_id) + " is live at " +
                                 it->second.endpoint);
  }
  state_->draining[std::string(shard_id)] = now + ttl_ms;
  return Status::Ok();
}

// ------------------------------------------------------------------ zone leases

Result<LeaseGrant> MemoryDirectory::ClaimZone(std::string_view zone, std::string_view shard_id,
                                              int64_t ttl_ms, uint64_t min_epoch) {
  TELOS_RETURN_IF_ERROR(CheckId("zone", zone));
  TELOS_RETURN_IF_ERROR(CheckId("shard_id", shard_id));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  std::lock_guard lock(mu_);
  return LeaseClaim(state_->zones, zone, shard_id, ttl_ms, NowMs(), min_epoch);
}

Result<LeaseGrant> MemoryDirectory::RenewZone(std::string_view zone, std::string_view shard_id,
                                              uint64_t epoch, int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("zone", zone));
  TELOS_RETURN_IF_ERROR(CheckId("shard_id", shard_id));
  TELOS_RETURN_IF_ERROR(CheckEpoch(epoch));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  std::lock_guard lock(mu_);
  return LeaseRenew(state_->zones, zone, shard_id, epoch, ttl_ms, NowMs(), /*refresh=*/true);
}

Status MemoryDirectory::ReleaseZone(std::string_view zone, std::string_view shard_id,
                                    uint64_t epoch) {
  TELOS_RETURN_IF_ERROR(CheckId("zone", zone));
  TELOS_RETURN_IF_ERROR(CheckId("shard_id", shard_id));
  TELOS_RETURN_IF_ERROR(CheckEpoch(epoch));
  std::lock_guard lock(mu_);
  return LeaseRelease(state_->zones, zone, shard_id, epoch);
}

Result<LeaseGrant> MemoryDirectory::TransferZone(std::string_view zone, std::string_view from,
                                                 uint64_t from_epoch, std::string_view to,
                                                 int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("zone", zone));
  TELOS_RETURN_IF_ERROR(CheckId("from", from));
  TELOS_RETURN_IF_ERROR(CheckEpoch(from_epoch));
  TELOS_RETURN_IF_ERROR(CheckId("to", to));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  if (from == to) return Status::InvalidArgument("transfer to the same shard");
  std::lock_guard lock(mu_);
  const int64_t now = NowMs();
  auto it = state_->zones.find(zone);
  if (it == state_->zones.end() || !Live(it->second, now) || it->second.owner != from ||
      it->second.epoch != from_epoch) {
    return Status::FailedPrecondition(std::string(from) + " does not hold a live lease on " +
                                      std::string(zone) + " at epoch " +
                                      std::to_string(from_epoch));
  }
  it->second.owner = std::string(to);
  it->second.epoch += 1;
  it->second.expires_ms = now + ttl_ms;
  return LeaseGrant{it->second.epoch, ttl_ms};
}

Result<std::optional<ZoneOwner>> MemoryDirectory::OwnerOfZone(std::string_view zone) {
  TELOS_RETURN_IF_ERROR(CheckId("zone", zone));
  std::lock_guard lock(mu_);
  const int64_t now = NowMs();
  auto it = state_->zones.find(zone);
  if (it == state_->zones.end() || !Live(it->second, now)) return std::optional<ZoneOwner>();
  ZoneOwner owner{it->second.owner, "", it->second.epoch, it->second.expires_ms - now};
  auto shard = state_->shards.find(it->second.owner);
  if (shard != state_->shards.end() && shard->second.expires_ms > now) {
    owner.endpoint = shard->second.endpoint;
  }
  return std::optional<ZoneOwner>(std::move(owner));
}

// ------------------------------------------------------------------ leader leases

Result<LeaseGrant> MemoryDirectory::Campaign(std::string_view scope, std::string_view candidate,
                                             int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("scope", scope));
  TELOS_RETURN_IF_ERROR(CheckId("candidate", candidate));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  std::lock_guard lock(mu_);
  return LeaseClaim(state_->leaders, scope, candidate, ttl_ms, NowMs());
}

Result<LeaseGrant> MemoryDirectory::RenewLeadership(std::string_view scope,
                                                    std::string_view candidate, uint64_t term,
                                                    int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("scope", scope));
  TELOS_RETURN_IF_ERROR(CheckId("candidate", candidate));
  TELOS_RETURN_IF_ERROR(CheckEpoch(term));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  std::lock_guard lock(mu_);
  return LeaseRenew(state_->leaders, scope, candidate, term, ttl_ms, NowMs(), /*refresh=*/true);
}

Status MemoryDirectory::Resign(std::string_view scope, std::string_view candidate, uint64_t term) {
  TELOS_RETURN_IF_ERROR(CheckId("scope", scope));
  TELOS_RETURN_IF_ERROR(CheckId("candidate", candidate));
  TELOS_RETURN_IF_ERROR(CheckEpoch(term));
  std::lock_guard lock(mu_);
  return LeaseRelease(state_->leaders, scope, candidate, term);
}

Result<LeaseGrant> MemoryDirectory::ConfirmLeadership(std::string_view scope,
                                                      std::string_view candidate, uint64_t term) {
  TELOS_RETURN_IF_ERROR(CheckId("scope", scope));
  TELOS_RETURN_IF_ERROR(CheckId("candidate", candidate));
  TELOS_RETURN_IF_ERROR(CheckEpoch(term));
  std::lock_guard lock(mu_);
  return LeaseRenew(state_->leaders, scope, candidate, term, 0, NowMs(), /*refresh=*/false);
}

Result<std::optional<Leader>> MemoryDirectory::LeaderOf(std::string_view scope) {
  TELOS_RETURN_IF_ERROR(CheckId("scope", scope));
  std::lock_guard lock(mu_);
  const int64_t now = NowMs();
  auto it = state_->leaders.find(scope);
  if (it == state_->leaders.end() || !Live(it->second, now)) return std::optional<Leader>();
  return std::optional<Leader>(
      Leader{it->second.owner, it->second.epoch, it->second.expires_ms - now});
}

// ------------------------------------------------------------------ placement records

Status MemoryDirectory::HandoffPlacement(std::string_view player, const Placement& placement) {
  TELOS_RETURN_IF_ERROR(CheckId("player", player));
  TELOS_RETURN_IF_ERROR(internal::CheckPlacement(placement));
  std::lock_guard lock(mu_);
  auto it = state_->placements.find(player);
  if (it != state_->placements.end() && it->second.epoch >= placement.epoch) {
    return Status::FailedPrecondition("stored placement epoch " + std::to_string(it->second.epoch) +
                                      " is not older than " + std::to_string(placement.epoch));
  }
  state_->placements[std::string(player)] = placement;
  return Status::Ok();
}

Status MemoryDirectory::RegisterPlacement(std::string_view player, const Placement& placement) {
  TELOS_RETURN_IF_ERROR(CheckId("player", player));
  TELOS_RETURN_IF_ERROR(internal::CheckPlacement(placement));
  std::lock_guard lock(mu_);
  auto it = state_->placements.find(player);
  if (it != state_->placements.end() && it->second.epoch > placement.epoch) {
    return Status::FailedPrecondition("stored placement epoch " + std::to_string(it->second.epoch) +
                                      " is newer than " + std::to_string(placement.epoch));
  }
  // The stored epoch is <= the new one here, so writing it keeps the maximum.
  state_->placements[std::string(player)] = placement;
  return Status::Ok();
}

Result<bool> MemoryDirectory::TombstonePlacement(std::string_view player, std::string_view shard,
                                                 uint64_t epoch, std::string_view nonce,
                                                 std::string_view zone) {
  TELOS_RETURN_IF_ERROR(CheckId("player", player));
  TELOS_RETURN_IF_ERROR(CheckId("shard", shard));
  TELOS_RETURN_IF_ERROR(CheckEpoch(epoch));
  TELOS_RETURN_IF_ERROR(CheckOptionalId("nonce", nonce));
  TELOS_RETURN_IF_ERROR(CheckOptionalId("zone", zone));
  std::lock_guard lock(mu_);
  auto it = state_->placements.find(player);
  if (it == state_->placements.end()) return false;
  Placement& rec = it->second;
  if (rec.shard != shard || rec.epoch != epoch) return false;
  if (!rec.nonce.empty() && rec.nonce != nonce) return false;
  rec.shard.clear();
  if (!zone.empty()) rec.zone = std::string(zone);
  return true;
}

Status MemoryDirectory::DeletePlacement(std::string_view player) {
  TELOS_RETURN_IF_ERROR(CheckId("player", player));
  std::lock_guard lock(mu_);
  if (auto it = state_->placements.find(player); it != state_->placements.end()) {
    state_->placements.erase(it);
  }
  return Status::Ok();
}

Result<std::optional<Placement>> MemoryDirectory::LookupPlacement(std::string_view player) {
  TELOS_RETURN_IF_ERROR(CheckId("player", player));
  std::lock_guard lock(mu_);
  auto it = state_->placements.find(player);
  if (it == state_->placements.end()) return std::optional<Placement>();
  return std::optional<Placement>(it->second);
}

// ------------------------------------------------------------------ presence

Status MemoryDirectory::SetPresence(std::string_view player, std::string_view gate,
                                    std::string_view shard, int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("player", player));
  TELOS_RETURN_IF_ERROR(CheckId("gate", gate));
  TELOS_RETURN_IF_ERROR(CheckOptionalId("shard", shard));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  std::lock_guard lock(mu_);
  state_->presence[std::string(player)] =
      PresenceRow{std::string(gate), std::string(shard), NowMs() + ttl_ms};
  return Status::Ok();
}

Status MemoryDirectory::ClearPresence(std::string_view player, std::string_view gate) {
  TELOS_RETURN_IF_ERROR(CheckId("player", player));
  TELOS_RETURN_IF_ERROR(CheckId("gate", gate));
  std::lock_guard lock(mu_);
  const int64_t now = NowMs();
  auto it = state_->presence.find(player);
  if (it == state_->presence.end()) return Status::Ok();
  if (it->second.expires_ms > now && it->second.gate != gate) {
    return Status::FailedPrecondition(std::string(player) + " is connected through " +
                                      it->second.gate);
  }
  state_->presence.erase(it);
  return Status::Ok();
}

Result<std::optional<Presence>> MemoryDirectory::GetPresence(std::string_view player) {
  TELOS_RETURN_IF_ERROR(CheckId("player", player));
  std::lock_guard lock(mu_);
  const int64_t now = NowMs();
  auto it = state_->presence.find(player);
  if (it == state_->presence.end() || it->second.expires_ms <= now) {
    return std::optional<Presence>();
  }
  return std::optional<Presence>(
      Presence{it->first, it->second.gate, it->second.shard, it->second.expires_ms - now});
}

Result<std::vector<Presence>> MemoryDirectory::ListPresence() {
  std::lock_guard lock(mu_);
  const int64_t now = NowMs();
  std::erase_if(state_->presence, [&](const auto& kv) { return kv.second.expires_ms <= now; });
  std::vector<Presence> out;
  for (const auto& [player, row] : state_->presence) {
    out.push_back(Presence{player, row.gate, row.shard, row.expires_ms - now});
  }
  return out;
}

// ------------------------------------------------------------------ occupancy

Status MemoryDirectory::ReportOccupancy(std::string_view shard,
                                        const std::vector<ZoneCount>& zones) {
  TELOS_RETURN_IF_ERROR(internal::CheckOccupancy(shard, zones));
  std::vector<ZoneCount> sorted = zones;
  std::sort(sorted.begin(), sorted.end(),
            [](const ZoneCount& a, const ZoneCount& b) { return a.zone < b.zone; });
  std::lock_guard lock(mu_);
  state_->occupancy[std::string(shard)] = OccupancyRow{std::move(sorted), NowMs()};
  return Status::Ok();
}

Result<std::vector<Occupancy>> MemoryDirectory::ListOccupancy() {
  std::lock_guard lock(mu_);
  const int64_t now = NowMs();
  std::vector<Occupancy> out;
  for (const auto& [shard, row] : state_->occupancy) {
    out.push_back(Occupancy{shard, row.zones, row.reported_at_ms, now - row.reported_at_ms});
  }
  return out;
}

// ------------------------------------------------------------------ reservations

Result<Reservation> MemoryDirectory::Reserve(std::string_view target, int64_t amount,
                                             int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("target", target));
  TELOS_RETURN_IF_ERROR(CheckAmount(amount, /*positive=*/true));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  std::lock_guard lock(mu_);
  const int64_t now = NowMs();
  state_->PruneReservations(now);
  return state_->AddReservation(target, amount, ttl_ms, now);
}

Status MemoryDirectory::ReleaseReservation(std::string_view target, std::string_view id) {
  TELOS_RETURN_IF_ERROR(CheckId("target", target));
  TELOS_RETURN_IF_ERROR(CheckId("id", id));
  std::lock_guard lock(mu_);
  auto it = state_->reservations.find(target);
  if (it != state_->reservations.end()) {
    if (auto row = it->second.find(id); row != it->second.end()) it->second.erase(row);
    if (it->second.empty()) state_->reservations.erase(it);
  }
  return Status::Ok();
}

Result<int64_t> MemoryDirectory::ReservedSum(std::string_view target) {
  TELOS_RETURN_IF_ERROR(CheckId("target", target));
  std::lock_guard lock(mu_);
  state_->PruneReservations(NowMs());
  return state_->ReservedOn(target);
}

Result<DrainTarget> MemoryDirectory::SelectDrainTarget(const DrainTargetRequest& request) {
  TELOS_RETURN_IF_ERROR(internal::CheckDrainRequest(request));
  std::lock_guard lock(mu_);
  const int64_t now = NowMs();
  state_->PruneReservations(now);
  // The map is ordered by id, so a strict "<" keeps the smaller id on a tie.
  const std::string* best = nullptr;
  int64_t best_load = 0;
  const std::string* best_fit = nullptr;
  int64_t best_fit_load = 0;
  for (const auto& [id, row] : state_->shards) {
    if (row.expires_ms <= now || state_->Draining(id, now)) continue;
    if (std::find(request.exclude.begin(), request.exclude.end(), id) != request.exclude.end()) {
      continue;
    }
    int64_t load = state_->ReservedOn(id);
    if (auto occ = state_->occupancy.find(id); occ != state_->occupancy.end()) {
      for (const ZoneCount& z : occ->second.zones) load += z.players;
    }
    if (best == nullptr || load < best_load) {
      best = &id;
      best_load = load;
    }
    if (load + request.amount <= request.ceiling && (best_fit == nullptr || load < best_fit_load)) {
      best_fit = &id;
      best_fit_load = load;
    }
  }
  if (best == nullptr) return Status::NotFound("no live drain target");
  DrainTarget out;
  const std::string* chosen = best_fit != nullptr ? best_fit : best;
  out.load = best_fit != nullptr ? best_fit_load : best_load;
  out.over_ceiling = best_fit == nullptr;
  out.reservation = state_->ReserveAs(*chosen, request.amount, request.ttl_ms, now, request.holder);
  return out;
}

// ------------------------------------------------------------------ directives and cooldowns

Status MemoryDirectory::IssueDirective(std::string_view scope, uint64_t epoch,
                                       std::string_view zone, std::string_view from,
                                       std::string_view to, int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("scope", scope));
  TELOS_RETURN_IF_ERROR(CheckEpoch(epoch));
  TELOS_RETURN_IF_ERROR(CheckId("zone", zone));
  TELOS_RETURN_IF_ERROR(CheckId("from", from));
  TELOS_RETURN_IF_ERROR(CheckId("to", to));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  std::lock_guard lock(mu_);
  const int64_t now = NowMs();
  // The leader fence, under the same lock as the write: a leader deposed between this check
  // and the insert is impossible, because nothing else changes the lease meanwhile.
  auto lease = state_->leaders.find(scope);
  if (lease == state_->leaders.end() || !Live(lease->second, now) || lease->second.epoch != epoch) {
    return Status::FailedPrecondition(NotTheLeader(scope, epoch));
  }
  state_->PruneDirectives(now);
  if (state_->directives.contains(zone)) {
    return Status::AlreadyExists("zone " + std::string(zone) + " already has a live directive");
  }
  state_->directives[std::string(zone)] =
      DirectiveRow{std::string(from), std::string(to), now + ttl_ms, std::string(scope), epoch};
  return Status::Ok();
}

Result<std::vector<Directive>> MemoryDirectory::ListDirectives(std::string_view from) {
  TELOS_RETURN_IF_ERROR(CheckId("from", from));
  std::lock_guard lock(mu_);
  const int64_t now = NowMs();
  state_->PruneDirectives(now);
  std::vector<Directive> out;
  for (const auto& [zone, row] : state_->directives) {
    if (row.from == from) {
      out.push_back(Directive{zone, row.from, row.to, row.expires_ms - now, row.scope, row.epoch});
    }
  }
  return out;
}

Status MemoryDirectory::CompleteDirective(std::string_view zone, std::string_view from) {
  TELOS_RETURN_IF_ERROR(CheckId("zone", zone));
  TELOS_RETURN_IF_ERROR(CheckId("from", from));
  std::lock_guard lock(mu_);
  state_->PruneDirectives(NowMs());
  auto it = state_->directives.find(zone);
  if (it == state_->directives.end() || it->second.from != from) {
    return Status::NotFound("no live directive for " + std::string(zone) + " from " +
                            std::string(from));
  }
  state_->directives.erase(it);
  return Status::Ok();
}

Status MemoryDirectory::StartCooldown(std::string_view zone, int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("zone", zone));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  std::lock_guard lock(mu_);
  state_->cooldowns[std::string(zone)] = NowMs() + ttl_ms;
  return Status::Ok();
}

Result<int64_t> MemoryDirectory::CooldownRemainingMs(std::string_view zone) {
  TELOS_RETURN_IF_ERROR(CheckId("zone", zone));
  std::lock_guard lock(mu_);
  const int64_t now = NowMs();
  auto it = state_->cooldowns.find(zone);
  if (it == state_->cooldowns.end()) return int64_t{0};
  if (it->second <= now) {
    state_->cooldowns.erase(it);
    return int64_t{0};
  }
  return it->second - now;
}

// ---------------------------------------------------------------- content pack version

Result<std::optional<PackVersion>> MemoryDirectory::ReadPackVersion() {
  std::lock_guard lock(mu_);
  return state_->pack_version;
}

Status MemoryDirectory::SwapPackVersion(std::string_view expected_hash, const PackVersion& next) {
  TELOS_RETURN_IF_ERROR(CheckId("pack hash", next.hash));
  TELOS_RETURN_IF_ERROR(CheckOptionalId("previous pack hash", next.previous_hash));
  TELOS_RETURN_IF_ERROR(CheckOptionalId("expected pack hash", expected_hash));
  std::lock_guard lock(mu_);
  const std::string current = state_->pack_version ? state_->pack_version->hash : "";
  if (current != expected_hash) {
    return Status::FailedPrecondition("the fleet's pack version is '" + current + "', not '" +
                                      std::string(expected_hash) + "'");
  }
  state_->pack_version = next;
  return Status::Ok();
}

}  // namespace telos::directory
