// ShardDrain: the zero-drop drain of a world shard (spec 000, "Graceful drain"; invariant 10),
// run on SIGTERM before the shard stops.
//
// For each zone the lease keeper holds, in turn: pick a live peer (Directory::SelectDrainTarget,
// which reserves room for the zone's players on it), move the lease to it in one fenced step
// (TransferZone: the zone is never ownerless), ask it to adopt the zone now, and stop the zone
// here, handing its frozen players over to the peer with their sockets open. The lobby, which
// every shard runs, hands its players to the least loaded peer. Whatever cannot be handed over
// is saved and routed again by the gates (reclaimed).
//
// The whole drain is bounded by `deadline_ms` on the injected Clock; Run() returns when every
// zone's players are settled or the deadline passes, and releases its reservations either way.
//
// Ownership: borrows everything it is given; all outlive it. Thread safety: Run() blocks its
// caller (the stopping thread, never a zone executor or an io thread); the hand-over callbacks
// arrive on other threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "telos/base/clock.h"
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
  virtual void BeginDrain() = 0;
  // Asks `to` to adopt `zone`, whose lease this shard has just moved to it at `epoch`.
  // DeadlineExceeded, UnknownResult or Cancelled: no answer, so maybe adopted; any other error
  // is the peer's refusal.
  virtual Status CallAdopt(const directory::ZoneOwner& to, const std::string& zone,
                           uint64_t epoch) = 0;
  // Hands players frozen out of a zone now owned by `to` over to it; `done(redirected,
  // reclaimed)` runs once every one of them is settled (on any thread).
  virtual void HandOver(std::vector<world::PlayerTransfer> players, directory::ZoneOwner to,
                        std::function<void(size_t, size_t)> done) = 0;
};

struct ShardDrainOptions {
  std::string shard_id;
  std::string lobby_zone;
  int64_t lease_ttl_ms = directory::kZoneLeaseTtlMsDefault;  // granted to the peer
  int64_t deadline_ms = 45'000;
};

struct DrainResult {
  bool complete = false;  // every zone's players settled before the deadline
  size_t zones_moved = 0;
  size_t zones_left = 0;  // still handing over at the deadline
  // Moved, but the peer's Adopt did not answer in time: maybe adopted (handed over as if).
  size_t zones_adoption_unknown = 0;
  size_t redirected = 0;  // handed to a peer, socket open
  size_t reclaimed = 0;   // saved and routed again by their gates
  int64_t took_ms = 0;
};

class ShardDrain {
 public:
  ShardDrain(ShardDrainOptions options, directory::Directory& directory, ZoneLeaseKeeper& keeper,
             world::WorldHost& host, DrainHandOver& hand_over, const Clock& clock, Logger& log,
             Metrics& metrics);

  // Drains every held zone and the lobby; blocks until done or the deadline. Logs each step and
  // the outcome ("drain complete" or "graceful drain incomplete").
  DrainResult Run();

 private:
  const ShardDrainOptions options_;
  directory::Directory& directory_;
  ZoneLeaseKeeper& keeper_;
  world::WorldHost& host_;
  DrainHandOver& hand_over_;
  const Clock& clock_;
  Logger& log_;
  prometheus::Counter& redirected_;
  prometheus::Counter& reclaimed_;
};

}  // namespace telos::shard
