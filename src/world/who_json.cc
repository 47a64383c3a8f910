#include "telos/world/who_json.h"

#include <boost/json.hpp>

#include "telos/base/utf8.h"

namespace telos::world {

std::string WhoJson(const std::vector<WhoEntry>& who) {
  namespace json = boost::json;
  json::array players;
  players.reserve(who.size());
  for (const WhoEntry& entry : who) {
    players.emplace_back(json::object{{"name", SanitizeUtf8(entry.name)},
                                      {"level", entry.level},
                                      {"zone", SanitizeUtf8(entry.zone)}});
  }
  const json::object doc{{"count", who.size()}, {"players", std::move(players)}};
  return json::serialize(doc);
}

}  // namespace telos::world
