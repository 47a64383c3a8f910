#include "telos/store/game_events.h"

#include <boost/json.hpp>

#include <string>

#include "backend_checks.h"
#include "telos/bus/bus.h"

namespace telos::store {
namespace json = boost::json;

bus::StreamSpec GameEventStreamSpec() {
  bus::StreamSpec spec;
  spec.name = std::string(kGameEventStream);
  spec.subjects = std::string(kGameEventSubjects);
  return spec;
}

std::string EncodeGameEvent(const GameEvent& event) {
  return json::serialize(json::object{{"source", event.source},
                                      {"sequence", event.sequence},
                                      {"kind", event.kind},
                                      {"subject", event.subject},
                                      {"actor", event.actor},
                                      {"at_ms", event.at_ms}});
}

Result<GameEvent> DecodeGameEvent(std::string_view data) {
  boost::system::error_code ec;
  json::value parsed = json::parse(data, ec);
  if (ec || !parsed.is_object()) return Status::InvalidArgument("game event: not a JSON object");
  const json::object& o = parsed.as_object();
  GameEvent event;
  for (auto [key, out] : {std::pair{"source", &event.source}, std::pair{"kind", &event.kind},
                          std::pair{"subject", &event.subject}, std::pair{"actor", &event.actor}}) {
    const json::value* v = o.if_contains(key);
    if (v == nullptr || !v->is_string()) {
      return Status::InvalidArgument(std::string("game event: '") + key + "' is not a string");
    }
    *out = std::string(v->as_string());
  }
  for (auto [key, out] :
       {std::pair{"sequence", &event.sequence}, std::pair{"at_ms", &event.at_ms}}) {
    const json::value* v = o.if_contains(key);
    if (v == nullptr || !v->is_int64()) {
      return Status::InvalidArgument(std::string("game event: '") + key + "' is not an integer");
    }
    *out = v->as_int64();
  }
  // The same rules as RecordsStore::Apply, so a poisoned event is refused here, once.
  TELOS_RETURN_IF_ERROR(CheckGameEvent("decoder", event));
  return event;
}

std::string GameEventSubject(std::string_view kind, std::string_view source) {
  return "game.event." + bus::SubjectToken(kind) + "." + bus::SubjectToken(source);
}

bool GameEventSubjectMatches(std::string_view subject, const GameEvent& event) {
  return subject == GameEventSubject(event.kind, event.source);
}

std::string GameEventMsgId(const GameEvent& event) {
  return event.source + ":" + std::to_string(event.sequence);
}

}  // namespace telos::store
