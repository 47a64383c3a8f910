// ForwardingDirectory: a Directory that passes every call to another one. Tests derive from it
// to inject faults or delays into the few calls they care about (LevelDB's EnvWrapper is the
// model), instead of each writing out the whole interface.
//
// Thread safety: as the inner directory's. The inner directory outlives this object.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "telos/directory/directory.h"

namespace telos::directory {

class ForwardingDirectory : public Directory {
 public:
  explicit ForwardingDirectory(Directory& inner) : in_(inner) {}

  Status RegisterShard(std::string_view id, std::string_view ep, int64_t ttl) override {
    return in_.RegisterShard(id, ep, ttl);
  }
  Status HeartbeatShard(std::string_view id, std::string_view ep, int64_t ttl) override {
    return in_.HeartbeatShard(id, ep, ttl);
  }
  Status DeregisterShard(std::string_view id, std::string_view ep) override {
    return in_.DeregisterShard(id, ep);
  }
  Result<std::vector<ShardInfo>> ListShards() override { return in_.ListShards(); }
  Status MarkShardDraining(std::string_view id, std::string_view ep, int64_t ttl) override {
    return in_.MarkShardDraining(id, ep, ttl);
  }
  using Directory::ClaimZone;
  Result<LeaseGrant> ClaimZone(std::string_view zone, std::string_view id, int64_t ttl,
                               uint64_t min_epoch) override {
    return in_.ClaimZone(zone, id, ttl, min_epoch);
  }
  Result<LeaseGrant> RenewZone(std::string_view zone, std::string_view id, uint64_t epoch,
                               int64_t ttl) override {
    return in_.RenewZone(zone, id, epoch, ttl);
  }
  Status ReleaseZone(std::string_view zone, std::string_view id, uint64_t epoch) override {
    return in_.ReleaseZone(zone, id, epoch);
  }
  Result<LeaseGrant> TransferZone(std::string_view zone, std::string_view from, uint64_t from_epoch,
                                  std::string_view to, int64_t ttl) override {
    return in_.TransferZone(zone, from, from_epoch, to, ttl);
  }
  Result<std::optional<ZoneOwner>> OwnerOfZone(std::string_view zone) override {
    return in_.OwnerOfZone(zone);
  }
  Result<LeaseGrant> Campaign(std::string_view s, std::string_view c, int64_t ttl) override {
    return in_.Campaign(s, c, ttl);
  }
  Result<LeaseGrant> RenewLeadership(std::string_view s, std::string_view c, uint64_t term,
                                     int64_t ttl) override {
    return in_.RenewLeadership(s, c, term, ttl);
  }
  Status Resign(std::string_view s, std::string_view c, uint64_t term) override {
    return in_.Resign(s, c, term);
  }
  Result<LeaseGrant> ConfirmLeadership(std::string_view s, std::string_view c,
                                       uint64_t term) override {
    return in_.ConfirmLeadership(s, c, term);
  }
  Result<std::optional<Leader>> LeaderOf(std::string_view s) override { return in_.LeaderOf(s); }
  Status HandoffPlacement(std::string_view p, const Placement& pl) override {
    return in_.HandoffPlacement(p, pl);
  }
  Status RegisterPlacement(std::string_view p, const Placement& pl) override {
    return in_.RegisterPlacement(p, pl);
  }
  Result<bool> TombstonePlacement(std::string_view p, std::string_view s, uint64_t e,
                                  std::string_view n, std::string_view z) override {
    return in_.TombstonePlacement(p, s, e, n, z);
  }
  Status DeletePlacement(std::string_view p) override { return in_.DeletePlacement(p); }
  Result<std::optional<Placement>> LookupPlacement(std::string_view p) override {
    return in_.LookupPlacement(p);
  }
  Status SetPresence(std::string_view p, std::string_view g, std::string_view s,
                     int64_t ttl) override {
    return in_.SetPresence(p, g, s, ttl);
  }
  Status ClearPresence(std::string_view p, std::string_view g) override {
    return in_.ClearPresence(p, g);
  }
  Result<std::optional<Presence>> GetPresence(std::string_view p) override {
    return in_.GetPresence(p);
  }
  Result<std::vector<Presence>> ListPresence() override { return in_.ListPresence(); }
  Status ReportOccupancy(std::string_view s, const std::vector<ZoneCount>& z) override {
    return in_.ReportOccupancy(s, z);
  }
  Result<std::vector<Occupancy>> ListOccupancy() override { return in_.ListOccupancy(); }
  Result<Reservation> Reserve(std::string_view t, int64_t a, int64_t ttl) override {
    return in_.Reserve(t, a, ttl);
  }
  Status ReleaseReservation(std::string_view t, std::string_view id) override {
    return in_.ReleaseReservation(t, id);
  }
  Result<int64_t> ReservedSum(std::string_view t) override { return in_.ReservedSum(t); }
  Result<DrainTarget> SelectDrainTarget(const DrainTargetRequest& r) override {
    return in_.SelectDrainTarget(r);
  }
  Status IssueDirective(std::string_view scope, uint64_t epoch, std::string_view z,
                        std::string_view f, std::string_view t, int64_t ttl) override {
    return in_.IssueDirective(scope, epoch, z, f, t, ttl);
  }
  Result<std::vector<Directive>> ListDirectives(std::string_view f) override {
    return in_.ListDirectives(f);
  }
  Status CompleteDirective(std::string_view z, std::string_view f) override {
    return in_.CompleteDirective(z, f);
  }
  Status StartCooldown(std::string_view z, int64_t ttl) override {
    return in_.StartCooldown(z, ttl);
  }
  Result<int64_t> CooldownRemainingMs(std::string_view z) override {
    return in_.CooldownRemainingMs(z);
  }
  Result<std::optional<PackVersion>> ReadPackVersion() override { return in_.ReadPackVersion(); }
  Status SwapPackVersion(std::string_view expected, const PackVersion& next) override {
    return in_.SwapPackVersion(expected, next);
  }

 private:
  Directory& in_;
};

}  // namespace telos::directory
