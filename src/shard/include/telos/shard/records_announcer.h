// RecordsAnnouncer: the visible effect of a game event beyond the records — the leader
// director, having applied it once (GameEventTally's on_applied), tells every world's players
// what happened: "The Hollow Abbot has fallen to Aldric, the first in all the realm to slay
// him!" or "...(3 times in all)".
//
// The announcement is a transient down-broadcast (FleetComms' <prefix>.announce, origin
// "director"): at most once, and a world the bus cannot reach misses it; the records are the
// durable part. Used from the tally's consumer thread: it reads the tally (a short blocking
// store call) and publishes without waiting.
//
// Ownership: borrows the bus, the store and the logger, which must outlive it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "telos/base/log.h"
#include "telos/bus/bus.h"
#include "telos/store/records_store.h"
#include "telos/world/content.h"

namespace telos::shard {

// The origin the director's announcements carry (a shard must not take this id: it would skip
// them as its own).
inline constexpr std::string_view kDirectorOrigin = "director";

// The line for an applied event whose tally now reads `count`. Empty for a kind nobody is told
// about.
std::string AppliedEventText(const world::Pack& pack, const store::GameEvent& event, int64_t count);

class RecordsAnnouncer {
 public:
  RecordsAnnouncer(bus::Bus& bus, std::string subject_prefix,
                   std::shared_ptr<const world::Pack> pack, store::RecordsStore& records,
                   Logger& log);

  // GameEventTallyOptions::on_applied.
  void OnApplied(const store::GameEvent& event);

 private:
  bus::Bus& bus_;
  const std::string subject_prefix_;
  const std::shared_ptr<const world::Pack> pack_;
  store::RecordsStore& records_;
  Logger& log_;
};

}  // namespace telos::shard
