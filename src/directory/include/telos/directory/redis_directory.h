// RedisDirectory: the fleet Directory, on one Redis server.
//
// Every operation that reads and then writes is one Lua script, run with EVALSHA (and loaded
// again when the server answers NOSCRIPT, e.g. after a restart), so each is atomic on the
// server. Every expiry is judged inside the script from redis.call('TIME'): callers send
// durations, never instants, so a client whose clock is skewed cannot steal a live lease. The
// Lua sources live in one place (redis/scripts.cc).
//
// Keys. Every key starts with "{<key_namespace>}:", so several fleets (or tests) share one Redis
// without colliding, and all keys of one namespace hash to one cluster slot.
//
// Connections. Two blocking hiredis connections per instance: one reserved for lease and
// leadership writes (registration, heartbeats, claims, renewals, releases, transfers,
// campaigns), so that a renewal never waits behind the placements, presence and routing reads of
// a busy shard, which share the other. Each is made lazily on its first call and again after any
// failure. Connecting is bounded by connect_timeout_ms and each command by
// command_timeout_ms. After a failed attempt, calls return kUnavailable at once (no network
// round trip) until the backoff has passed; the backoff doubles from reconnect_backoff_min_ms up
// to reconnect_backoff_max_ms and resets on success. A command whose request was sent but whose
// answer never came returns kUnknownResult (it may have been applied); every other failure to
// reach Redis returns kUnavailable, and a refused password kPermissionDenied. Nothing here
// throws or aborts on a Redis failure.
//
// Threads: every method may be called from any thread; calls on one connection are serialised
// by its mutex. For parallelism give each blocking-pool thread its own instance.
// Calls block the caller for up to connect_timeout_ms + command_timeout_ms, so never make them
// on a zone executor (DESIGN.md section 5).
//
// Ownership: borrows `clock` (used only to pace reconnect attempts; it never judges a lease),
// which must outlive the directory.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "telos/base/clock.h"
#include "telos/base/status.h"
#include "telos/directory/directory.h"

namespace telos::redis {
class Connection;  // telos/redis/connection.h
}  // namespace telos::redis

namespace telos::directory {

struct RedisOptions {
  static constexpr int64_t kConnectTimeoutMsDefault = 500;
  static constexpr int64_t kCommandTimeoutMsDefault = 2'000;
  static constexpr int64_t kReconnectBackoffMinMsDefault = 50;
  static constexpr int64_t kReconnectBackoffMaxMsDefault = 2'000;

  std::string host = "127.0.0.1";
  int port = 6379;
  // ACL credentials, sent with AUTH on every (re)connect (telos/redis/connection.h). Empty
  // password: no AUTH; empty username with a password: "AUTH password".
  std::string username;
  std::string password;
  // REQUIRES: non-empty, no '{', '}' or control characters.
  std::string key_namespace = "telos";
  int64_t connect_timeout_ms = kConnectTimeoutMsDefault;
  int64_t command_timeout_ms = kCommandTimeoutMsDefault;
  int64_t reconnect_backoff_min_ms = kReconnectBackoffMinMsDefault;
  int64_t reconnect_backoff_max_ms = kReconnectBackoffMaxMsDefault;
};

// Parses "redis://[user[:password]@]host:port" (a trailing "/" or "/0" is accepted) into host,
// port and credentials, leaving the other fields at their defaults. kInvalidArgument on anything
// else, "rediss://" included (redis::ParseUrl says why).
Result<RedisOptions> RedisOptionsFromUrl(std::string_view url);

class RedisDirectory final : public Directory {
 public:
  // Does not connect: the first call does. REQUIRES: options.key_namespace is valid (see above).
  RedisDirectory(RedisOptions options, const Clock& clock);
  ~RedisDirectory() override;

  RedisDirectory(const RedisDirectory&) = delete;
  RedisDirectory& operator=(const RedisDirectory&) = delete;

  const RedisOptions& options() const { return options_; }

  // The prefix every key of this directory starts with, e.g. "{telos}:".
  const std::string& key_prefix() const { return prefix_; }

  // Connects now (if needed) and sends PING. kUnavailable if Redis cannot be reached.
  Status Ping();

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
  std::string Key(std::string_view kind, std::string_view id = {}) const;

  RedisOptions options_;
  std::string prefix_;
  std::unique_ptr<redis::Connection> conn_;
  // Lease and leadership writes only (shard registration and heartbeat, zone claims, renewals,
  // releases and transfers, leader campaigns): they must never queue behind placements,
  // presence and routing reads, or a renewal could wait past the local fence.
  std::unique_ptr<redis::Connection> lease_conn_;
};

}  // namespace telos::directory
