// MemoryDirectory: the in-process Directory, the embedded default and single-shard mode.
//
// It follows exactly the rules of directory.h, with the injected Clock standing in for the
// Redis server's clock: every expiry is judged by clock.Now() at the moment of the call, and the
// "server time" it reports (Occupancy::reported_at_ms) is milliseconds on that clock's monotonic
// line. Every component of the process shares one instance, which is what "many clients" means
// here; there is no client-side clock to skew.
//
// Ownership: borrows the clock, which must outlive the directory.
// Threads: every method may be called from any thread; one mutex serialises them. Calls are
// short and never block on I/O, so a zone executor may call it directly.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "telos/base/clock.h"
#include "telos/directory/directory.h"

namespace telos::directory {

class MemoryDirectory final : public Directory {
 public:
  explicit MemoryDirectory(const Clock& clock);
  ~MemoryDirectory() override;

  MemoryDirectory(const MemoryDirectory&) = delete;
  MemoryDirectory& operator=(const MemoryDirectory&) = delete;

  Status RegisterShard(std::string_view shard_id, std::string_view endpoint,
                       int64_t ttl_ms) override;
  Status HeartbeatShard(std::string_view shard_id, std::string_view endpoint,
                        int64_t ttl_ms) override;
  Status DeregisterShard(std::string_view shard_id, std::string_view endpoint) override;
  Result<std::vector<ShardInfo>> ListShards() override;
  Status MarkShardDraining(std::string_view shard_id, std::string_view endpoint,
                           int64_t ttl_ms) override;

  using Directory::ClaimZone;
  Result<LeaseGrant> ClaimZone(std::string_view zone, std::string_view shard_id, int64_t ttl_ms,
                               uint64_t min_epoch) override;
  Result<LeaseGrant> RenewZone(std::string_view zone, std::string_view shard_id, uint64_t epoch,
                               int64_t ttl_ms) override;
  Status ReleaseZone(std::string_view zone, std::string_view shard_id, uint64_t epoch) override;
  Result<LeaseGrant> TransferZone(std::string_view zone, std::string_view from, uint64_t from_epoch,
                                  std::string_view to, int64_t ttl_ms) override;
  Result<std::optional<ZoneOwner>> OwnerOfZone(std::string_view zone) override;

  Result<LeaseGrant> Campaign(std::string_view scope, std::string_view candidate,
                              int64_t ttl_ms) override;
  Result<LeaseGrant> RenewLeadership(std::string_view scope, std::string_view candidate,
                                     uint64_t term, int64_t ttl_ms) override;
  Status Resign(std::string_view scope, std::string_view candidate, uint64_t term) override;
  Result<LeaseGrant> ConfirmLeadership(std::string_view scope, std::string_view candidate,
                                       uint64_t term) override;
  Result<std::optional<Leader>> LeaderOf(std::string_view scope) override;

  Status HandoffPlacement(std::string_view player, const Placement& placement) override;
  Status RegisterPlacement(std::string_view player, const Placement& placement) override;
  Result<bool> TombstonePlacement(std::string_view player, std::string_view shard, uint64_t epoch,
                                  std::string_view nonce, std::string_view zone) override;
  Status DeletePlacement(std::string_view player) override;
  Result<std::optional<Placement>> LookupPlacement(std::string_view player) override;

  Status SetPresence(std::string_view player, std::string_view gate, std::string_view shard,
                     int64_t ttl_ms) override;
  Status ClearPresence(std::string_view player, std::string_view gate) override;
  Result<std::optional<Presence>> GetPresence(std::string_view player) override;
  Result<std::vector<Presence>> ListPresence() override;

  Status ReportOccupancy(std::string_view shard, const std::vector<ZoneCount>& zones) override;
  Result<std::vector<Occupancy>> ListOccupancy() override;

  Result<Reservation> Reserve(std::string_view target, int64_t amount, int64_t ttl_ms) override;
  Status ReleaseReservation(std::string_view target, std::string_view id) override;
  Result<int64_t> ReservedSum(std::string_view target) override;
  Result<DrainTarget> SelectDrainTarget(const DrainTargetRequest& request) override;

  Status IssueDirective(std::string_view scope, uint64_t epoch, std::string_view zone,
                        std::string_view from, std::string_view to, int64_t ttl_ms) override;
  Result<std::vector<Directive>> ListDirectives(std::string_view from) override;
  Status CompleteDirective(std::string_view zone, std::string_view from) override;
  Status StartCooldown(std::string_view zone, int64_t ttl_ms) override;
  Result<int64_t> CooldownRemainingMs(std::string_view zone) override;

  Result<std::optional<PackVersion>> ReadPackVersion() override;
  Status SwapPackVersion(std::string_view expected_hash, const PackVersion& next) override;

 private:
  struct State;  // every table; touched only with mu_ held

  int64_t NowMs() const;

  const Clock& clock_;
  std::mutex mu_;
  std::unique_ptr<State> state_;  // GUARDED_BY(mu_)
};

}  // namespace telos::directory
