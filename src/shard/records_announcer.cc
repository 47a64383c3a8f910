#include "telos/shard/records_announcer.h"

#include <cctype>
#include <utility>

#include "telos/shard/fleet_messages.h"
#include "telos/world/who_json.h"

namespace telos::shard {

std::string AppliedEventText(const world::Pack& pack, const store::GameEvent& event,
                             int64_t count) {
  if (event.kind != "boss_kill") return "";
  world::RecordLine line;
  line.subject = event.subject;
  std::string name = world::RecordSubjectName(pack, line);
  if (!name.empty()) name[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[0])));
  const std::string by = event.actor.empty() ? std::string() : " to " + event.actor;
  if (count == 1) {
    return name + " has fallen" + by + ", the first time in all the realm's memory!";
  }
  return name + " has fallen" + by + " (" + std::to_string(count) + " times in all).";
}

RecordsAnnouncer::RecordsAnnouncer(bus::Bus& bus, std::string subject_prefix,
                                   std::shared_ptr<const world::Pack> pack,
                                   store::RecordsStore& records, Logger& log)
    : bus_(bus),
      subject_prefix_(std::move(subject_prefix)),
      pack_(std::move(pack)),
      records_(records),
      log_(log) {}

void RecordsAnnouncer::OnApplied(const store::GameEvent& event) {
  // The count as of now: with one leader applying in stream order it is this event's.
  int64_t count = 0;
  auto tallies = records_.Tallies();
  if (!tallies.ok()) {
    // The store went away since the apply: the records still hold it, only the line is lost.
    log_.Warn(
        "game event not announced: cannot read its tally",
        {{"kind", event.kind}, {"subject", event.subject}, {"error", tallies.status().ToString()}});
    return;
  }
  for (const store::Tally& t : *tallies) {
    if (t.kind == event.kind && t.subject == event.subject) count = t.count;
  }
  if (count == 0) return;
  const std::string text = AppliedEventText(*pack_, event, count);
  if (text.empty()) return;
  const Status sent = bus_.Publish(AnnouncementSubject(subject_prefix_),
                                   EncodeAnnouncement({std::string(kDirectorOrigin), "", text}));
  if (!sent.ok()) {
    log_.Warn("game event not announced: the bus is down",
              {{"kind", event.kind}, {"subject", event.subject}, {"error", sent.ToString()}});
  }
}

}  // namespace telos::shard
