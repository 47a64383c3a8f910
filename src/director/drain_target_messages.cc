// The drain-targets exchange's codec (see the header). Every decode failure is a Status; nothing
// here throws: boost::json is used only through its error_code and if_* accessors.
#include "telos/director/drain_target_messages.h"

#include <boost/json.hpp>
#include <optional>
#include <set>

#include "telos/base/limits.h"
#include "telos/base/utf8.h"
#include "telos/bus/bus.h"

namespace telos::director {
namespace {

namespace json = boost::json;

// Epochs stay below 2^53 (directory.h).
constexpr uint64_t kEpochMax = (uint64_t{1} << 53) - 1;

Status Bad(std::string what) {
  return Status::InvalidArgument("drain-targets message: " + std::move(what));
}

Result<json::object> ParseObject(std::string_view data) {
  if (data.size() > limits::kDirectorDrainMessageBytesMax) return Bad("too large");
  boost::system::error_code ec;
  json::value value = json::parse(data, ec);
  if (ec) return Bad("not JSON: " + ec.message());
  if (!value.is_object()) return Bad("not a JSON object");
  return std::move(value.as_object());
}

bool ValidId(std::string_view id) {
  if (id.empty() || id.size() > limits::kDirectoryIdBytesMax) return false;
  for (const char c : id) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7F) return false;
  }
  return true;
}

Result<std::string> IdField(const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(key);
  if (value == nullptr || !value->is_string()) {
    return Bad("\"" + std::string(key) + "\" is missing or not a string");
  }
  std::string id(value->as_string());
  if (!ValidId(id)) return Bad("\"" + std::string(key) + "\" is not a valid id");
  return id;
}

// An integer field in [min, max]; a double (1.5, 1e3) is refused, as is anything out of range.
Result<int64_t> IntField(const json::object& object, std::string_view key, int64_t min,
                         int64_t max) {
  const json::value* value = object.if_contains(key);
  int64_t n = 0;
  if (value != nullptr && value->is_int64()) {
    n = value->get_int64();
  } else if (value != nullptr && value->is_uint64()) {
    if (value->get_uint64() > static_cast<uint64_t>(max)) {
      return Bad("\"" + std::string(key) + "\" is out of range");
    }
    n = static_cast<int64_t>(value->get_uint64());
  } else {
    return Bad("\"" + std::string(key) + "\" is missing or not an integer");
  }
  if (n < min || n > max) return Bad("\"" + std::string(key) + "\" is out of range");
  return n;
}

Result<const json::array*> ArrayField(const json::object& object, std::string_view key,
                                      size_t max_size) {
  const json::value* value = object.if_contains(key);
  if (value == nullptr || !value->is_array()) {
    return Bad("\"" + std::string(key) + "\" is missing or not an array");
  }
  if (value->as_array().size() > max_size) return Bad("\"" + std::string(key) + "\" is too long");
  return &value->as_array();
}

std::optional<StatusCode> CodeNamed(std::string_view name) {
  for (int c = static_cast<int>(StatusCode::kInvalidArgument);
       c <= static_cast<int>(kStatusCodeLast); ++c) {
    const auto code = static_cast<StatusCode>(c);
    if (StatusCodeName(code) == name) return code;
  }
  return std::nullopt;
}

}  // namespace

std::string DrainTargetsSubject(std::string_view subject_prefix, std::string_view scope) {
  std::string subject(subject_prefix);
  subject += ".director.";
  subject += bus::SubjectToken(scope);
  subject += ".drain-targets";
  return subject;
}

std::string EncodeDrainTargetsRequest(const DrainTargetsRequest& request) {
  json::array zones;
  zones.reserve(request.zones.size());
  for (const DrainZoneNeed& need : request.zones) {
    zones.push_back(json::object{{"zone", need.zone}, {"players", need.players}});
  }
  return json::serialize(json::object{
      {"shard", request.shard}, {"zones", std::move(zones)}, {"ttl_ms", request.ttl_ms}});
}

Result<DrainTargetsRequest> DecodeDrainTargetsRequest(std::string_view data) {
  Result<json::object> body = ParseObject(data);
  if (!body.ok()) return body.status();
  DrainTargetsRequest out;
  Result<std::string> shard = IdField(*body, "shard");
  if (!shard.ok()) return shard.status();
  out.shard = std::move(*shard);
  Result<int64_t> ttl_ms = IntField(*body, "ttl_ms", 1, limits::kDirectoryTtlMsMax);
  if (!ttl_ms.ok()) return ttl_ms.status();
  out.ttl_ms = *ttl_ms;
  Result<const json::array*> zones =
      ArrayField(*body, "zones", limits::kDirectorDrainZonesPerRequestMax);
  if (!zones.ok()) return zones.status();
  if ((*zones)->empty()) return Bad("\"zones\" is empty");
  std::set<std::string, std::less<>> seen;
  out.zones.reserve((*zones)->size());
  for (const json::value& entry : **zones) {
    if (!entry.is_object()) return Bad("a \"zones\" entry is not an object");
    Result<std::string> zone = IdField(entry.as_object(), "zone");
    if (!zone.ok()) return zone.status();
    Result<int64_t> players =
        IntField(entry.as_object(), "players", 0, limits::kDirectorZonePlayersMax);
    if (!players.ok()) return players.status();
    if (!seen.insert(*zone).second) return Bad("zone \"" + *zone + "\" appears twice");
    out.zones.push_back(DrainZoneNeed{std::move(*zone), *players});
  }
  return out;
}

std::string EncodeDrainTargetsReply(const DrainTargetsReply& reply) {
  json::array targets;
  targets.reserve(reply.targets.size());
  for (const DrainZoneTarget& target : reply.targets) {
    targets.push_back(json::object{{"zone", target.zone},
                                   {"target", target.target},
                                   {"reservation", target.reservation},
                                   {"over_ceiling", target.over_ceiling}});
  }
  return json::serialize(json::object{
      {"leader", reply.leader}, {"epoch", reply.epoch}, {"targets", std::move(targets)}});
}

std::string EncodeDrainTargetsError(const Status& status) {
  RELEASE_ASSERT(!status.ok(), "an error reply needs an error");
  // The text may quote a requester's bytes (a shard or zone id is any byte string), and the
  // serializer copies bytes as they are: repaired first, so the reply always parses. Cut before
  // the repair too, so a huge message costs no more than the bound.
  const std::string text = SanitizeUtf8(
      std::string_view(status.message()).substr(0, limits::kDirectorErrorTextBytesMax));
  return json::serialize(
      json::object{{"error", StatusCodeName(status.code())},
                   {"message", Utf8Prefix(text, limits::kDirectorErrorTextBytesMax)}});
}

Result<DrainTargetsReply> DecodeDrainTargetsReply(std::string_view data) {
  Result<json::object> body = ParseObject(data);
  if (!body.ok()) return body.status();
  if (const json::value* error = body->if_contains("error"); error != nullptr) {
    if (!error->is_string()) return Bad("\"error\" is not a string");
    const json::value* message = body->if_contains("message");
    std::string text =
        message != nullptr && message->is_string()
            ? std::string(Utf8Prefix(message->as_string(), limits::kDirectorErrorTextBytesMax))
            : std::string();
    const std::optional<StatusCode> code = CodeNamed(error->as_string());
    if (!code.has_value()) {
      return Status::Internal(
          "director error \"" +
          std::string(Utf8Prefix(error->as_string(), limits::kDirectoryIdBytesMax)) +
          "\": " + text);
    }
    return Status(*code, "director: " + text);
  }
  DrainTargetsReply out;
  Result<std::string> leader = IdField(*body, "leader");
  if (!leader.ok()) return leader.status();
  out.leader = std::move(*leader);
  Result<int64_t> epoch = IntField(*body, "epoch", 1, static_cast<int64_t>(kEpochMax));
  if (!epoch.ok()) return epoch.status();
  out.epoch = static_cast<uint64_t>(*epoch);
  Result<const json::array*> targets =
      ArrayField(*body, "targets", limits::kDirectorDrainZonesPerRequestMax);
  if (!targets.ok()) return targets.status();
  std::set<std::string, std::less<>> seen;
  out.targets.reserve((*targets)->size());
  for (const json::value& entry : **targets) {
    if (!entry.is_object()) return Bad("a \"targets\" entry is not an object");
    const json::object& object = entry.as_object();
    DrainZoneTarget target;
    Result<std::string> zone = IdField(object, "zone");
    if (!zone.ok()) return zone.status();
    Result<std::string> shard = IdField(object, "target");
    if (!shard.ok()) return shard.status();
    Result<std::string> reservation = IdField(object, "reservation");
    if (!reservation.ok()) return reservation.status();
    if (const json::value* over = object.if_contains("over_ceiling"); over != nullptr) {
      if (!over->is_bool()) return Bad("\"over_ceiling\" is not a boolean");
      target.over_ceiling = over->get_bool();
    }
    if (!seen.insert(*zone).second) return Bad("zone \"" + *zone + "\" appears twice");
    target.zone = std::move(*zone);
    target.target = std::move(*shard);
    target.reservation = std::move(*reservation);
    out.targets.push_back(std::move(target));
  }
  return out;
}

}  // namespace telos::director
