// Directory: the shared record every distributed guarantee of a TelosMUD fleet rests on.
//
// It holds the shard registry, zone leases (with a per-zone fencing epoch), leader leases,
// per-player placement records, the presence roster, occupancy reports, drain-target
// reservations, rebalance directives and per-zone cooldowns. Two backends implement it with the
// same observable rules, checked by one conformance suite (conformance_test.h):
//   - MemoryDirectory (memory_directory.h): the embedded default and single-shard mode. Time is
//     the injected Clock.
//   - RedisDirectory (redis_directory.h): the fleet. Every read-then-write is one Lua script, and
//     every expiry is judged by the Redis server's own clock, never the caller's.
//
// Time. Callers never pass instants, only durations (ttl_ms). The directory decides "now" on its
// own time line, so a caller whose clock is skewed cannot make a live lease look expired. Every
// `ttl_ms` in a result is the time left as the directory judged it when it answered.
//
// Synchronous API. Every call blocks the calling thread until the directory answers (the Redis
// backend does a network round trip), so zone executors must not call it directly: run it on the
// blocking pool and post the result back (DESIGN.md section 5).
//
// Errors, shared by every method:
//   kInvalidArgument    an id is empty, too long or has control characters; a ttl or amount
//                       is out of range.
//   kUnavailable        the backend cannot be reached; nothing was applied. Retry later.
//   kUnknownResult      the request reached Redis but no answer came back: a mutating call may
//                       or may not have been applied. Re-read (or rely on the epoch fences)
//                       before retrying.
//   kConflict           someone else holds the thing right now (a live lease, a live leader).
//   kAlreadyExists      a create found a live, different holder (shard id, directive).
//   kFailedPrecondition the caller's fence is stale: not the owner, wrong epoch or term, an
//                       older placement epoch, a lapsed registration.
//   kNotFound           nothing live matches.
//
// Ids (shard, zone, player, scope, gate, endpoint, nonce) are opaque byte strings of at most
// kIdBytesMax bytes with no control characters. Epochs and terms stay below 2^53 (Lua numbers).
//
// Thread safety: every implementation may be called from any number of threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "telos/base/limits.h"
#include "telos/base/status.h"

namespace telos::directory {

// --- Defaults and bounds. Units are in the names.
inline constexpr int64_t kZoneLeaseTtlMsDefault = 15'000;
inline constexpr int64_t kLeaderLeaseTtlMsDefault = 15'000;
inline constexpr int64_t kShardTtlMsDefault = 15'000;
inline constexpr int64_t kPresenceTtlMsDefault = 60'000;
// A drain's reservation must outlast the drain: the 45 s outer drain deadline plus one
// presence-reflect window.
inline constexpr int64_t kReservationTtlMsDefault = 60'000;
// A draining mark must outlast the drain it announces (the same 45 s outer deadline plus a
// margin); a drainer that crashed mid-drain is a candidate target again once it lapses.
inline constexpr int64_t kShardDrainingTtlMsDefault = 60'000;
inline constexpr int64_t kDrainTargetCeilingDefault = 1'500;  // players per shard, soft
inline constexpr int64_t kDirectiveTtlMsDefault = 90'000;
inline constexpr int64_t kZoneCooldownMsDefault = 5 * 60'000;
inline constexpr int64_t kTtlMsMin = 1;
inline constexpr int64_t kTtlMsMax = limits::kDirectoryTtlMsMax;
inline constexpr int64_t kReservationAmountMax = limits::kDirectoryReservationAmountMax;
inline constexpr size_t kIdBytesMax = limits::kDirectoryIdBytesMax;
inline constexpr size_t kZonesPerOccupancyReportMax = limits::kDirectoryZonesPerOccupancyReportMax;

// The renewal cadence the spec recommends for a lease of `ttl_ms`. Renewing is the caller's job.
inline constexpr int64_t RenewIntervalMs(int64_t ttl_ms) {
  return ttl_ms / 3;
}

struct ShardInfo {
  std::string id;
  std::string endpoint;
  int64_t ttl_ms = 0;
  // The shard marked itself draining (MarkShardDraining) and the mark has not lapsed: it is
  // leaving, so nothing may be moved onto it.
  bool draining = false;
  bool operator==(const ShardInfo&) const = default;
};

// A granted (or confirmed) lease. `epoch` is the fencing token: it grows by one every time the
// lease goes to a new tenure and never goes back, so it rides on every side effect of the owner.
struct LeaseGrant {
  uint64_t epoch = 0;
  int64_t ttl_ms = 0;
};

struct ZoneOwner {
  std::string shard_id;
  std::string endpoint;  // empty if the owner's shard registration has lapsed
  uint64_t epoch = 0;
  int64_t ttl_ms = 0;
};

struct Leader {
  std::string holder;
  uint64_t term = 0;
  int64_t ttl_ms = 0;
};

// One player's placement record. `zone` routes; `epoch` fences handoffs and marks existence;
// `nonce` fences the logout tombstone against a same-shard relog (empty: no nonce); `shard` is
// dropped by the tombstone (empty: logged out).
struct Placement {
  std::string zone;
  uint64_t epoch = 0;
  std::string nonce;
  std::string shard;
  bool operator==(const Placement&) const = default;
};

struct Presence {
  std::string player;
  std::string gate;
  std::string shard;
  int64_t ttl_ms = 0;
};

struct ZoneCount {
  std::string zone;
  int64_t players = 0;
  bool operator==(const ZoneCount&) const = default;
};

struct Occupancy {
  std::string shard;
  std::vector<ZoneCount> zones;  // sorted by zone
  int64_t reported_at_ms = 0;    // on the directory's time line (Redis: unix ms from TIME)
  int64_t age_ms = 0;            // how long ago, as judged by the directory
  int64_t Total() const;
};

struct Reservation {
  std::string target;
  std::string id;
  int64_t amount = 0;
  int64_t ttl_ms = 0;
};

struct DrainTargetRequest {
  std::vector<std::string> exclude;  // the source shard (draining shards are skipped anyway)
  int64_t amount = 0;                // players about to arrive
  int64_t ttl_ms = kReservationTtlMsDefault;
  int64_t ceiling = kDrainTargetCeilingDefault;
  // Who holds the reservation: the draining shard's id (empty: an anonymous hold). A further
  // pick by the same holder onto the same target rebases that holder's live hold there instead
  // of adding another: the amounts add up (never past kReservationAmountMax, where the sum
  // stops) and the expiry becomes the later of the two, so one drain keeps one hold per target
  // that outlasts its last zone. A holder's hold therefore covers every zone that holder sent to
  // that target while it lived, not one zone: its id comes back for each of them, and releasing
  // it releases them all. Nobody else's hold changes.
  std::string holder;
};

struct DrainTarget {
  Reservation reservation;  // already taken on the chosen target
  int64_t load = 0;         // occupancy + unexpired reservations before this one
  bool over_ceiling = false;
};

// A rebalance-drain directive, with the leader tenure that issued it: `scope` names the leader
// lease and `epoch` is its term at the time, so whoever acts on it can tell which leader spoke.
struct Directive {
  std::string zone;
  std::string from;  // the shard that must act
  std::string to;
  int64_t ttl_ms = 0;
  std::string scope;
  uint64_t epoch = 0;
};

// The content pack a fleet runs, as content hot reload records it (src/shard/pack_reload.h) and
// the fail-closed pack-divergence check at boot reads it. While a reload is under way the
// record names both packs (`previous_hash` is the one being replaced), so worlds running either
// are accepted; once every world has reloaded it names only the new one, and a world that
// boots with any other pack is refused.
struct PackVersion {
  std::string hash;           // lower-case hex content hash (Pack::content_hash)
  std::string previous_hash;  // while a reload is under way; empty otherwise
  bool reloading() const { return !previous_hash.empty(); }
  bool operator==(const PackVersion&) const = default;
};

class Directory {
 public:
  virtual ~Directory() = default;

  // ---------------------------------------------------------------- shard registry
  // Registers id -> endpoint for ttl_ms: a new incarnation of the shard (a process calls it when
  // it starts, and again only after its registration lapsed; a live one heartbeats). It clears
  // any draining mark of the id, even when the same endpoint re-registers within the TTL (a
  // drainer restarted in place). kAlreadyExists while a *different* endpoint holds a live
  // registration of that id.
  virtual Status RegisterShard(std::string_view shard_id, std::string_view endpoint,
                               int64_t ttl_ms) = 0;
  // Refreshes a live registration. kFailedPrecondition if it lapsed (re-register) and
  // kAlreadyExists if another endpoint now holds the id.
  virtual Status HeartbeatShard(std::string_view shard_id, std::string_view endpoint,
                                int64_t ttl_ms) = 0;
  // Removes the registration and the shard's occupancy report. OK if already gone;
  // kFailedPrecondition if another endpoint holds the id.
  virtual Status DeregisterShard(std::string_view shard_id, std::string_view endpoint) = 0;
  // Live shards, sorted by id, each with its draining flag. Lapsed ones are pruned.
  virtual Result<std::vector<ShardInfo>> ListShards() = 0;
  // Marks a live registration as draining for ttl_ms (re-marking refreshes the TTL): until the
  // mark lapses or the shard deregisters, ListShards reports it draining and SelectDrainTarget
  // never picks it, so two shards draining at once never choose each other. The TTL is what
  // frees the id of a drainer that crashed; a heartbeat keeps the mark, and a fresh
  // registration (RegisterShard: a new process, on any endpoint) starts unmarked.
  // kFailedPrecondition if the registration lapsed;
  // kAlreadyExists if another endpoint holds the id.
  virtual Status MarkShardDraining(std::string_view shard_id, std::string_view endpoint,
                                   int64_t ttl_ms) = 0;

  // ---------------------------------------------------------------- zone leases
  // Granted if the zone is unowned, its lease lapsed, or it is already this shard's (then the
  // epoch is kept and the lease refreshed). A grant to a new tenure returns epoch + 1.
  // kConflict while another shard holds a live lease.
  // `min_epoch` (0: none) is a floor for the epoch granted: when the stored epoch is below it,
  // the grant is a new tenure at exactly min_epoch (also for the current holder). It lets a
  // shard that found a durable fence above the directory's epoch — the directory lost its data —
  // restart the epochs above every tenure that ever wrote.
  virtual Result<LeaseGrant> ClaimZone(std::string_view zone, std::string_view shard_id,
                                       int64_t ttl_ms, uint64_t min_epoch) = 0;
  Result<LeaseGrant> ClaimZone(std::string_view zone, std::string_view shard_id, int64_t ttl_ms) {
    return ClaimZone(zone, shard_id, ttl_ms, 0);
  }
  // Extends a live lease held by shard_id at `epoch`. kFailedPrecondition otherwise (lapsed,
  // moved away, or re-granted under a newer epoch): the shard must stop writing the zone.
  virtual Result<LeaseGrant> RenewZone(std::string_view zone, std::string_view shard_id,
                                       uint64_t epoch, int64_t ttl_ms) = 0;
  // Gives the zone up; the epoch is kept so the next grant still increments it.
  // kFailedPrecondition unless shard_id holds it at `epoch`.
  virtual Status ReleaseZone(std::string_view zone, std::string_view shard_id, uint64_t epoch) = 0;
  // Moves a live lease from `from` (at from_epoch) to `to` in one step, so the zone is never
  // ownerless. Returns the new epoch. kFailedPrecondition if `from` does not hold it live.
  // REQUIRES: from != to.
  virtual Result<LeaseGrant> TransferZone(std::string_view zone, std::string_view from,
                                          uint64_t from_epoch, std::string_view to,
                                          int64_t ttl_ms) = 0;
  // The live owner with its registered endpoint, or nullopt.
  virtual Result<std::optional<ZoneOwner>> OwnerOfZone(std::string_view zone) = 0;

  // ---------------------------------------------------------------- leader leases
  // The same lease rules per named scope (the director, each arcade game); the epoch is the term.
  virtual Result<LeaseGrant> Campaign(std::string_view scope, std::string_view candidate,
                                      int64_t ttl_ms) = 0;
  virtual Result<LeaseGrant> RenewLeadership(std::string_view scope, std::string_view candidate,
                                             uint64_t term, int64_t ttl_ms) = 0;
  virtual Status Resign(std::string_view scope, std::string_view candidate, uint64_t term) = 0;
  // OK with the time left while `candidate` still leads at `term`; kFailedPrecondition once it
  // has lost the lease, which is the signal to step down.
  virtual Result<LeaseGrant> ConfirmLeadership(std::string_view scope, std::string_view candidate,
                                               uint64_t term) = 0;
  virtual Result<std::optional<Leader>> LeaderOf(std::string_view scope) = 0;

  // ---------------------------------------------------------------- placement records
  // Handoff CAS: writes the whole record only if there is none or the stored epoch is strictly
  // smaller than placement.epoch; kFailedPrecondition otherwise.
  virtual Status HandoffPlacement(std::string_view player, const Placement& placement) = 0;
  // Residency registration: accepts an equal or greater epoch (the stored epoch stays the
  // maximum); kFailedPrecondition when the stored epoch is newer.
  virtual Status RegisterPlacement(std::string_view player, const Placement& placement) = 0;
  // Logout tombstone: if the record still names `shard` at `epoch` and, when it carries a nonce,
  // that nonce equals `nonce`, drops the shard field and records `zone` (if non-empty). Returns
  // whether it applied; a mismatch is a successful no-op (false).
  virtual Result<bool> TombstonePlacement(std::string_view player, std::string_view shard,
                                          uint64_t epoch, std::string_view nonce,
                                          std::string_view zone) = 0;
  // Character deletion: removes the record outright.
  virtual Status DeletePlacement(std::string_view player) = 0;
  // The record, or nullopt if the player does not exist.
  virtual Result<std::optional<Placement>> LookupPlacement(std::string_view player) = 0;

  // ---------------------------------------------------------------- presence roster
  // Who is connected now. Never used for routing. SetPresence (re)writes and refreshes the TTL.
  virtual Status SetPresence(std::string_view player, std::string_view gate, std::string_view shard,
                             int64_t ttl_ms) = 0;
  // Removes the entry if `gate` still holds it; OK if absent; kFailedPrecondition if the player
  // has since connected through another gate.
  virtual Status ClearPresence(std::string_view player, std::string_view gate) = 0;
  virtual Result<std::optional<Presence>> GetPresence(std::string_view player) = 0;
  virtual Result<std::vector<Presence>> ListPresence() = 0;  // sorted by player

  // ---------------------------------------------------------------- occupancy heartbeats
  // Replaces shard's report with these live per-zone counts, stamped with the directory's time.
  // REQUIRES: zones.size() <= kZonesPerOccupancyReportMax, counts >= 0.
  virtual Status ReportOccupancy(std::string_view shard, const std::vector<ZoneCount>& zones) = 0;
  virtual Result<std::vector<Occupancy>> ListOccupancy() = 0;  // sorted by shard

  // ---------------------------------------------------------------- drain-target reservations
  // Adds one reservation of `amount` on `target`, expiring ttl_ms from now on the directory's
  // clock. It never changes any other reservation's expiry.
  virtual Result<Reservation> Reserve(std::string_view target, int64_t amount, int64_t ttl_ms) = 0;
  // Retires one reservation early. OK if it already expired or was released.
  virtual Status ReleaseReservation(std::string_view target, std::string_view id) = 0;
  // The sum of the target's unexpired reservations; expired ones are pruned.
  virtual Result<int64_t> ReservedSum(std::string_view target) = 0;
  // Picks the live, not draining shard (not excluded) with the least occupancy + reservations
  // whose load plus request.amount fits under request.ceiling, and reserves on it atomically. If
  // none fits it still picks the least loaded and sets over_ceiling. Ties go to the smaller id.
  // With request.holder set, a live hold of that holder on the chosen target is rebased (see
  // DrainTargetRequest::holder) and returned with its id, the summed amount (at most
  // kReservationAmountMax) and the new time left; `load` then counts that hold's earlier amount.
  // kNotFound if there is no live candidate at all.
  virtual Result<DrainTarget> SelectDrainTarget(const DrainTargetRequest& request) = 0;

  // ---------------------------------------------------------------- directives and cooldowns
  // One rebalance-drain directive per zone, issued by the leader of `scope` at term `epoch`.
  // The leader fence is checked in the same atomic step as the write: kFailedPrecondition unless
  // `epoch` is the term of the scope's live leader lease (a deposed, lapsed or resigned leader
  // is refused, and nothing is stored). Then kAlreadyExists while a live directive exists for
  // the zone.
  virtual Status IssueDirective(std::string_view scope, uint64_t epoch, std::string_view zone,
                                std::string_view from, std::string_view to, int64_t ttl_ms) = 0;
  // The live directives the shard `from` must act on, sorted by zone. Expired ones are pruned.
  virtual Result<std::vector<Directive>> ListDirectives(std::string_view from) = 0;
  // Retires a directive. kNotFound if there is no live directive for the zone from `from`.
  virtual Status CompleteDirective(std::string_view zone, std::string_view from) = 0;
  // (Re)starts the zone's cooldown for ttl_ms.
  virtual Status StartCooldown(std::string_view zone, int64_t ttl_ms) = 0;
  // Time left on the zone's cooldown, 0 when none.
  virtual Result<int64_t> CooldownRemainingMs(std::string_view zone) = 0;

  // ---------------------------------------------------------------- content pack version
  // The record, or nullopt when no reload has written one. It never expires.
  virtual Result<std::optional<PackVersion>> ReadPackVersion() = 0;
  // Writes `next` if the record's hash is `expected_hash` now (empty: no record yet), so two
  // reloads cannot interleave unseen. FailedPrecondition (naming the hash found) when it is
  // not; InvalidArgument for an empty or malformed next.hash.
  virtual Status SwapPackVersion(std::string_view expected_hash, const PackVersion& next) = 0;
};

}  // namespace telos::directory
