// ShardDrain: the zero-drop drain of a world shard (spec 000, "Graceful drain"; invariant 10),
// run on SIGTERM before the shard stops, and the same move for one zone alone, which a
// rebalance directive asks for (DirectiveExecutor).
//
// Moving one zone: move its lease to the target in one fenced step (TransferZone: the zone is
// never ownerless), ask the target to adopt the zone now, and stop the zone here, handing its
// frozen players over to the target with their sockets open. Stopping the zone tears it down
// at runtime (its heartbeat, resets and Lua VM go with it) and the lease keeper forgets it, so
// nothing renews it here any more; if it comes back later it is adopted as a new tenure and
// started fresh. Whatever cannot be handed over is saved and routed again by the gates
// (reclaimed, counted in shard_drain_reclaimed_total by `fault`).
//
// Run() (SIGTERM) marks the shard draining in the directory first, so no peer's drain and no
// director picks it as a target while it leaves, and so peers that are themselves draining
// (which would refuse the Adopt and strand the lease until it lapsed) are never picked by it.
// Targets come from the leader director when a DrainTargetAsk is set and answers in time; each
// zone without a usable answer is placed by the directory's own selector
// (Directory::SelectDrainTarget, holder = this shard, so one hold per target is rebased rather
// than piled up). Every reservation lasts the drain deadline plus one presence-reflect window.
// The lobby, which every shard runs, hands its players to the least loaded peer.
//
// Deadlines, on the injected Clock: the whole drain ends by `deadline_ms`, and each zone's
// hand-over is waited for at most `zone_deadline_ms` from its start (inside the outer one), so
// one stuck zone cannot hold the rest. Reservations are released when the waiting ends.
//
// Ownership: borrows everything it is given; all outlive it. Thread safety: Run() and
// DrainZone() block their caller (the stopping thread or the directive executor's, never a zone
// executor or an io thread); the hand-over callbacks arrive on other threads. Run() and
// DrainZone() must not run at once (the owner stops the directive executor before Run()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "telos/base/clock.h"
#include "telos/base/limits.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/base/status.h"
#include "telos/directory/directory.h"
#include "telos/shard/zone_lease_keeper.h"
#include "telos/world/world_host.h"

namespace telos::shard {

// What a drain needs of the shard's fleet side (WorldShard implements it).
class DrainHandOver {
 public:
  virtual ~DrainHandOver() = default;
  // From now on, logins of characters not already here are refused (they are routed again).
  // Only the SIGTERM drain calls it; moving one zone leaves the shard serving.
  virtual void BeginDrain() = 0;
  // Asks `to` to adopt `zone`, whose lease this shard has just moved to it at `epoch`.
  // DeadlineExceeded, UnknownResult or Cancelled: no answer, so maybe adopted; Conflict: the
  // peer is draining and passed the zone on (the directory names the new owner); any other
  // error is the peer's refusal.
  virtual Status CallAdopt(const directory::ZoneOwner& to, const std::string& zone,
                           uint64_t epoch) = 0;
  // Hands players frozen out of a zone now owned by `to` over to it; `done(redirected,
  // reclaimed)` runs once every one of them is settled (on any thread).
  virtual void HandOver(std::vector<world::PlayerTransfer> players, directory::ZoneOwner to,
                        std::function<void(size_t, size_t)> done) = 0;
};

// One zone of a drain, as the director is asked about it.
struct DrainZoneLoad {
  std::string zone;
  int64_t players = 0;
};
// The director's answer for one zone: where it goes and the reservation it took there.
struct DirectedTarget {
  std::string zone;
  std::string target;
  std::string reservation;
};
// Asks the leader director for targets for `zones`, each reservation to last
// `reservation_ttl_ms`; blocks at most a short timeout. An error (no director, no answer in
// time) makes the drain choose alone. Zones the answer leaves out are chosen alone too.
using DrainTargetAsk = std::function<Result<std::vector<DirectedTarget>>(
    const std::vector<DrainZoneLoad>& zones, int64_t reservation_ttl_ms)>;

struct ShardDrainOptions {
  std::string shard_id;
  std::string lobby_zone;
  int64_t lease_ttl_ms = directory::kZoneLeaseTtlMsDefault;  // granted to the peer
  int64_t deadline_ms = limits::kShardDrainDeadlineMs;
  // The shard's registered endpoint, which the draining mark is checked against.
  std::string endpoint;
  // REQUIRES: 0 < zone_deadline_ms <= deadline_ms.
  int64_t zone_deadline_ms = limits::kShardDrainZoneDeadlineMs;
  // How long each reservation holds room on a target: the drain deadline plus one
  // presence-reflect window (0: that sum).
  int64_t reservation_ttl_ms = 0;
};

struct DrainResult {
  bool complete = false;  // every zone's players settled before the deadline
  size_t zones_moved = 0;
  size_t zones_left = 0;  // still handing over when the waiting ended
  // Of zones_left, those whose own zone deadline passed (the others hit the outer deadline).
  size_t zones_timed_out = 0;
  // Moved, but the peer's Adopt did not answer in time: maybe adopted (handed over as if).
  size_t zones_adoption_unknown = 0;
  size_t zones_directed = 0;  // moved to a target the leader director named
  size_t redirected = 0;      // handed to a peer, socket open
  size_t reclaimed = 0;       // saved and routed again by their gates
  int64_t took_ms = 0;
};

// One zone moved alone (DrainZone).
struct ZoneDrainResult {
  bool settled = false;  // its players were handed over before the zone deadline
  bool adoption_unknown = false;
  bool adoption_refused = false;
  uint64_t epoch = 0;  // the target's new tenure
  size_t redirected = 0;
  size_t reclaimed = 0;
  int64_t took_ms = 0;
};

class ShardDrain {
 public:
  ShardDrain(ShardDrainOptions options, directory::Directory& directory, ZoneLeaseKeeper& keeper,
             world::WorldHost& host, DrainHandOver& hand_over, const Clock& clock, Logger& log,
             Metrics& metrics);
  ~ShardDrain();

  // Where Run() asks the leader director for targets. REQUIRES: before Run().
  void SetTargetAsk(DrainTargetAsk ask) { ask_ = std::move(ask); }

  // Drains every held zone and the lobby; blocks until done or the deadline. Logs each step and
  // the outcome ("drain complete" or "graceful drain incomplete").
  DrainResult Run();

  // Moves one held zone to `target` (a rebalance directive) and tears it down here; blocks
  // until its players are settled or zone_deadline_ms passes. The shard keeps serving.
  // FailedPrecondition if the zone is not held here or `target` is not a live, not draining
  // peer (nothing is changed then); the directory's error if the lease transfer failed (the
  // zone keeps running here).
  Result<ZoneDrainResult> DrainZone(const std::string& zone, const std::string& target);

 private:
  struct Progress;
  // Why a zone's unsettled players are reclaimed, for the `fault` label.
  enum class Fault { kHandoff, kAdoptRefused, kAdoptUnknown };
  // Transfers the lease and asks `to` to adopt; `next` gets the owner the players follow: `to`,
  // or the shard `to` passed the zone on to when it answered Conflict ("moved": it turned out
  // to be draining), as the directory names it. Error: the lease did not move (the zone keeps
  // running here).
  Result<Fault> Move(const std::string& zone, uint64_t epoch, const directory::ShardInfo& to,
                     directory::ZoneOwner* next);
  // Stops `zone` here and hands its players to `to` once they are frozen.
  void HandOverZone(const std::string& zone, const directory::ZoneOwner& to, Fault fault,
                    const std::shared_ptr<Progress>& progress);
  void CountReclaimed(const std::map<Fault, size_t>& by_fault);
  int64_t ReservationTtlMs() const;

  const ShardDrainOptions options_;
  directory::Directory& directory_;
  ZoneLeaseKeeper& keeper_;
  world::WorldHost& host_;
  DrainHandOver& hand_over_;
  const Clock& clock_;
  Logger& log_;
  DrainTargetAsk ask_;
  prometheus::Counter& redirected_;
  std::map<Fault, prometheus::Counter*> reclaimed_;  // by fault; filled at construction
};

}  // namespace telos::shard
