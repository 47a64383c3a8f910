#include "telos/shard/zone_tenure.h"

#include "telos/base/assert.h"

namespace telos::shard {

ZoneTenure::ZoneTenure(ZoneTenureDeps deps) : deps_(std::move(deps)) {
  RELEASE_ASSERT(deps_.host != nullptr && deps_.persistence != nullptr &&
                     deps_.characters != nullptr && deps_.log != nullptr && deps_.store_up &&
                     deps_.evacuate,
                 "ZoneTenure needs every dependency");
}

Status ZoneTenure::StartZone(const std::string& zone, uint64_t epoch) {
  if (Status fenced = RaiseFence(zone, epoch); !fenced.ok()) return fenced;
  deps_.persistence->SetLeaseEpoch(zone, epoch);
  deps_.persistence->ReleaseZone(zone);  // a new tenure writes again
  return deps_.host->StartZone(zone);
}

void ZoneTenure::StopZone(const std::string& zone, const std::string& why) {
  // Lost, or past its fence (or suspended and then won by a peer): what the zone did since is
  // not ours to write, and neither are its players' saves as they are frozen out (invariant 1).
  deps_.persistence->DropZone(zone);
  const Status s = deps_.host->StopZone(zone, [log = deps_.log, evacuate = deps_.evacuate,
                                               zone](std::vector<world::PlayerTransfer> players) {
    log->Warn("zone stopped", {{"zone", zone}, {"players", static_cast<int64_t>(players.size())}});
    evacuate(std::move(players));
  });
  if (!s.ok()) {
    deps_.log->Warn("zone stop failed", {{"zone", zone}, {"why", why}, {"error", s.ToString()}});
  }
}

void ZoneTenure::SuspendZone(const std::string& zone, const std::string&) {
  deps_.persistence->HoldZone(zone);
}

Status ZoneTenure::ResumeZone(const std::string& zone, uint64_t epoch) {
  if (Status fenced = RaiseFence(zone, epoch); !fenced.ok()) return fenced;
  // Saves held meanwhile carry the old epoch: written if this is the same tenure, refused by
  // the store's zone fence if the lease was won anew (the next save carries the new one).
  deps_.persistence->SetLeaseEpoch(zone, epoch);
  deps_.persistence->ReleaseZone(zone);
  return Status::Ok();
}

uint64_t ZoneTenure::EpochFloor(const std::string& zone) {
  std::lock_guard lock(mu_);
  auto it = floors_.find(zone);
  return it == floors_.end() ? 0 : it->second;
}

Status ZoneTenure::RaiseFence(const std::string& zone, uint64_t epoch) {
  if (!deps_.store_up()) {
    deps_.log->Warn("zone fence not raised (PostgreSQL down): the first save will raise it",
                    {{"zone", zone}, {"epoch", epoch}});
    return Status::Ok();
  }
  auto fence = deps_.characters->RaiseZoneFence(zone, static_cast<int64_t>(epoch), deps_.shard_id);
  if (!fence.ok()) {
    deps_.log->Warn("zone fence not raised: the first save will raise it",
                    {{"zone", zone}, {"epoch", epoch}, {"error", fence.status().ToString()}});
    return Status::Ok();
  }
  if (*fence > static_cast<int64_t>(epoch)) {
    {
      std::lock_guard lock(mu_);
      floors_[zone] = static_cast<uint64_t>(*fence) + 1;
    }
    deps_.log->Warn("lease epoch below the zone's durable fence: claiming again above it",
                    {{"zone", zone}, {"epoch", epoch}, {"fence", *fence}});
    return Status::FailedPrecondition("zone " + zone + " was written at lease epoch " +
                                      std::to_string(*fence) + ", above " + std::to_string(epoch));
  }
  return Status::Ok();
}

}  // namespace telos::shard
