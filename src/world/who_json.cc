#include "telos/world/who_json.h"

#include <boost/json.hpp>

#include "telos/base/utf8.h"

namespace telos::world {

std::string WhoJson(const std::vector<WhoEntry>& who) {
  namespace json = boost::json;
  json::array players;
  players.reserve(who.size());
  for (const WhoEntry& entry : who) {
    json::object player{{"name", SanitizeUtf8(entry.name)},
                        {"level", entry.level},
                        {"zone", SanitizeUtf8(entry.zone)}};
    if (!entry.char_class.empty()) {
      player["race"] = SanitizeUtf8(entry.race);
      player["class"] = SanitizeUtf8(entry.char_class);
    }
    players.emplace_back(std::move(player));
  }
  const json::object doc{{"count", who.size()}, {"players", std::move(players)}};
  return json::serialize(doc);
}

std::string RecordSubjectName(const Pack& pack, const RecordLine& record) {
  if (auto ref = ParseRef(record.subject, ""); ref && !ref->zone.empty()) {
    if (const MobDef* mob = pack.FindMob(*ref)) return mob->name;
  }
  return record.subject;
}

std::string RecordsJson(const Pack& pack, const std::vector<RecordLine>& records) {
  namespace json = boost::json;
  json::array out;
  out.reserve(records.size());
  for (const RecordLine& r : records) {
    out.emplace_back(json::object{
        {"kind", SanitizeUtf8(r.kind)},
        {"subject", SanitizeUtf8(r.subject)},
        {"name", SanitizeUtf8(RecordSubjectName(pack, r))},
        {"count", r.count},
        {"first", json::object{{"actor", SanitizeUtf8(r.first_actor)}, {"at_ms", r.first_at_ms}}},
        {"last", json::object{{"actor", SanitizeUtf8(r.last_actor)}, {"at_ms", r.last_at_ms}}}});
  }
  const json::object doc{{"count", records.size()}, {"records", std::move(out)}};
  return json::serialize(doc);
}

}  // namespace telos::world
