// ZoneTenure: what a world shard does when its lease keeper wins, loses, suspends or resumes a
// zone — the zone-tenure fence of invariant 1 carried to storage (ARCHITECTURE.md, "The zone
// fence"). It is the ZoneHosting the keeper drives.
//
//   StartZone(zone, epoch)  raises the store's zone fence to `epoch` *before* the zone runs, so
//                           every save of an older tenure is refused from then on; then stamps
//                           the epoch on the zone's saves and starts it. A fence already above
//                           `epoch` means the directory lost its epochs (an empty Redis): the
//                           start is refused and EpochFloor() asks the keeper to claim again
//                           above the fence. With the store known down the zone starts anyway
//                           (its first save raises the fence itself).
//   StopZone(zone)          the lease is lost: what the zone did since is not ours to write, so
//                           its unwritten saves are dropped and its players, frozen out, are
//                           handed to `evacuate` (their gates route them to the next owner,
//                           who loads their last write).
//   SuspendZone / ResumeZone  single-shard mode: saves are held while the lease cannot be
//                           confirmed, and released (the store's fence judges them) once it is.
//
// Ownership: borrows the host, the persistence, the store and the logger; all outlive it.
// Thread safety: the keeper calls the ZoneHosting methods from its thread; EpochFloor and the
// others may also be called from the thread of a drain's Adopt. The floor table has its own
// small lock; nothing is held across a call out.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "telos/base/log.h"
#include "telos/base/status.h"
#include "telos/shard/store_ports.h"
#include "telos/shard/zone_lease_keeper.h"
#include "telos/store/character_store.h"
#include "telos/world/world_host.h"

namespace telos::shard {

struct ZoneTenureDeps {
  world::WorldHost* host = nullptr;
  StorePersistence* persistence = nullptr;
  store::CharacterStore* characters = nullptr;
  Logger* log = nullptr;
  std::string shard_id;
  // Whether the character store is known to answer (the degradation ladder's probe): when it
  // is not, raising the fence would only wait out a connect timeout in the keeper's pass.
  std::function<bool()> store_up;
  // Players frozen out of a zone whose lease was lost (called on the zone's executor).
  std::function<void(std::vector<world::PlayerTransfer>)> evacuate;
};

class ZoneTenure final : public ZoneHosting {
 public:
  // REQUIRES: every pointer and function in `deps` set.
  explicit ZoneTenure(ZoneTenureDeps deps);

  Status StartZone(const std::string& zone, uint64_t epoch) override;
  void StopZone(const std::string& zone, const std::string& why) override;
  void SuspendZone(const std::string& zone, const std::string& why) override;
  Status ResumeZone(const std::string& zone, uint64_t epoch) override;
  uint64_t EpochFloor(const std::string& zone) override;

 private:
  // OK when the durable fence is at or below `epoch` (raised to it now), or could not be read.
  Status RaiseFence(const std::string& zone, uint64_t epoch);

  const ZoneTenureDeps deps_;
  std::mutex mu_;
  std::map<std::string, uint64_t> floors_;  // guarded by mu_
};

}  // namespace telos::shard
