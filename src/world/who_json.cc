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

}  // namespace telos::world
