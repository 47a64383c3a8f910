#include "telos/shard/fleet_messages.h"

#include <boost/json.hpp>

#include "telos/base/limits.h"
#include "telos/base/utf8.h"

namespace telos::shard {
namespace {

namespace json = boost::json;

// A message from the bus, as an object; empty when it is not one (a stray publisher).
json::object ParseObject(std::string_view data) {
  boost::system::error_code ec;
  json::value value = json::parse(data, ec);
  if (ec || !value.is_object()) return {};
  return std::move(value.as_object());
}

std::string Field(const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(key);
  return value != nullptr && value->is_string() ? std::string(value->as_string()) : std::string();
}

// The strings of an array field; non-strings and anything past `max` are skipped.
std::vector<std::string> Strings(const json::object& object, std::string_view key, size_t max) {
  std::vector<std::string> out;
  const json::value* value = object.if_contains(key);
  if (value == nullptr || !value->is_array()) return out;
  for (const json::value& item : value->as_array()) {
    if (out.size() >= max) break;
    if (item.is_string()) out.emplace_back(item.as_string());
  }
  return out;
}

int64_t Count(const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(key);
  return value != nullptr && value->is_int64() && value->as_int64() >= 0 ? value->as_int64() : 0;
}

json::array ToArray(const std::vector<std::string>& items) {
  json::array out;
  for (const std::string& item : items) out.emplace_back(item);
  return out;
}

int64_t IntField(const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(key);
  return value != nullptr && value->is_int64() ? value->as_int64() : 0;
}

constexpr world::StaffKind kStaffKinds[] = {world::StaffKind::kKick,   world::StaffKind::kMute,
                                            world::StaffKind::kUnmute, world::StaffKind::kTransfer,
                                            world::StaffKind::kStat,   world::StaffKind::kLocate};

// The issuer's assertion is binary (a serialized SignedBlob) and JSON strings are UTF-8: it
// travels as lower-case hex.
std::string ToHex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    out.push_back(kDigits[byte >> 4]);
    out.push_back(kDigits[byte & 0xf]);
  }
  return out;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// The bytes of `hex`; empty when it is not lower-case hex of at most `max_bytes` bytes (checked
// before anything is decoded).
std::string FromHex(std::string_view hex, size_t max_bytes) {
  if (hex.size() % 2 != 0 || hex.size() > max_bytes * 2) return {};
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int high = HexDigit(hex[i]);
    const int low = HexDigit(hex[i + 1]);
    if (high < 0 || low < 0) return {};
    out.push_back(static_cast<char>((high << 4) | low));
  }
  return out;
}

world::Ref RefField(const json::object& object, std::string_view key) {
  return world::ParseRef(Field(object, key), "").value_or(world::Ref{});
}

}  // namespace

std::string EncodeStaffOrder(const world::StaffOrder& order) {
  return json::serialize(json::object{{"kind", "staff"},
                                      {"order", world::StaffKindName(order.kind)},
                                      {"from", order.issuer},
                                      {"roles", order.issuer_roles},
                                      {"room", order.room.empty() ? "" : order.room.ToString()},
                                      {"until", order.mute_until_unix_ms},
                                      {"reason", order.reason},
                                      {"assertion", ToHex(order.issuer_assertion)},
                                      {"world", order.origin_world}});
}

std::string EncodeStaffOutcome(const world::StaffOutcome& outcome) {
  return json::serialize(json::object{{"code", static_cast<int64_t>(outcome.status.code())},
                                      {"text", outcome.text},
                                      {"room", outcome.room.empty() ? "" : outcome.room.ToString()},
                                      {"name", outcome.target_name}});
}

world::StaffOutcome DecodeStaffOutcome(std::string_view data) {
  const json::object body = ParseObject(data);
  world::StaffOutcome out;
  const int64_t code = IntField(body, "code");
  const std::string text = Field(body, "text");
  if (body.empty() || code < 0 || code > static_cast<int64_t>(kStatusCodeLast)) {
    out.status = Status::Internal("unreadable staff reply");
    return out;
  }
  out.status = code == 0 ? Status::Ok() : Status(static_cast<StatusCode>(code), text);
  out.text = text;
  out.room = RefField(body, "room");
  out.target_name = Field(body, "name");
  return out;
}

PlayerMessage DecodePlayerMessage(std::string_view data) {
  const json::object body = ParseObject(data);
  const std::string kind = Field(body, "kind");
  PlayerMessage out;
  if (kind == "tell") {
    out.kind = PlayerMessage::Kind::kTell;
    out.text = Field(body, "text");
  } else if (kind == "mail") {
    out.kind = PlayerMessage::Kind::kMail;
  } else if (kind == "staff") {
    const std::string order = Field(body, "order");
    for (const world::StaffKind candidate : kStaffKinds) {
      if (order == world::StaffKindName(candidate)) {
        out.kind = PlayerMessage::Kind::kStaff;
        out.staff.kind = candidate;
      }
    }
    if (out.kind != PlayerMessage::Kind::kStaff) return out;
    out.staff.issuer = Field(body, "from");
    const int64_t roles = IntField(body, "roles");
    out.staff.issuer_roles =
        roles > 0 && RolesKnown(static_cast<Roles>(roles)) ? static_cast<Roles>(roles) : 0;
    out.staff.room = RefField(body, "room");
    out.staff.mute_until_unix_ms = IntField(body, "until");
    out.staff.reason = Field(body, "reason");
    // Oversize or not hex: no assertion, which the receiving world refuses.
    out.staff.issuer_assertion = FromHex(Field(body, "assertion"), limits::kStaffAssertionBytesMax);
    out.staff.origin_world = Field(body, "world");
  } else if (kind == "party") {
    out.kind = PlayerMessage::Kind::kParty;
    out.text = Field(body, "text");
  } else {
    return out;
  }
  out.from = Field(body, "from");
  return out;
}

TellReply DecodeTellReply(std::string_view data) {
  const json::object body = ParseObject(data);
  return TellReply{Field(body, "outcome") == "delivered", Field(body, "name")};
}

ChannelLine DecodeChannelLine(std::string_view data) {
  const json::object line = ParseObject(data);
  ChannelLine out{Field(line, "origin"),
                  Field(line, "channel"),
                  Field(line, "from"),
                  Field(line, "text"),
                  {},
                  {}};
  if (out.channel == "guild") {
    out.guild = Field(line, "guild");
    out.to = Strings(line, "to", limits::kGuildMembersMax);
  }
  return out;
}

std::string EncodeReloadRequest(const ReloadRequest& request) {
  const char* op = request.op == ReloadRequest::Op::kCheck   ? "check"
                   : request.op == ReloadRequest::Op::kApply ? "apply"
                                                             : "";
  return json::serialize(json::object{{"op", op}, {"hash", request.hash}});
}

ReloadRequest DecodeReloadRequest(std::string_view data) {
  const json::object body = ParseObject(data);
  const std::string op = Field(body, "op");
  ReloadRequest out;
  if (op == "check") {
    out.op = ReloadRequest::Op::kCheck;
  } else if (op == "apply") {
    out.op = ReloadRequest::Op::kApply;
  } else {
    return out;
  }
  out.hash = Field(body, "hash");
  return out;
}

std::string EncodeReloadAnswer(const ReloadAnswer& answer) {
  return json::serialize(json::object{{"ok", answer.ok},
                                      {"shard", answer.shard},
                                      {"running", answer.running},
                                      {"error", answer.error},
                                      {"problems", ToArray(answer.problems)},
                                      {"rebuilt", ToArray(answer.rebuilt)},
                                      {"players", answer.players},
                                      {"relocated", answer.relocated}});
}

ReloadAnswer DecodeReloadAnswer(std::string_view data) {
  const json::object body = ParseObject(data);
  ReloadAnswer out;
  const json::value* ok = body.if_contains("ok");
  out.ok = ok != nullptr && ok->is_bool() && ok->as_bool();
  out.shard = Field(body, "shard");
  out.running = Field(body, "running");
  out.error = Field(body, "error");
  out.problems = Strings(body, "problems", limits::kReloadListMax);
  out.rebuilt = Strings(body, "rebuilt", limits::kReloadListMax);
  out.players = Count(body, "players");
  out.relocated = Count(body, "relocated");
  if (!out.ok && out.error.empty()) out.error = "the world's answer could not be read";
  return out;
}

Announcement DecodeAnnouncement(std::string_view data) {
  const json::object body = ParseObject(data);
  return Announcement{Field(body, "origin"), Field(body, "zone"), Field(body, "text")};
}

std::string EncodeAnnouncement(const Announcement& announcement) {
  // Bytes that are not UTF-8 would make the whole message unreadable as JSON.
  return json::serialize(json::object{{"origin", SanitizeUtf8(announcement.origin)},
                                      {"zone", SanitizeUtf8(announcement.zone)},
                                      {"text", SanitizeUtf8(announcement.text)}});
}

std::string AnnouncementSubject(std::string_view subject_prefix) {
  return std::string(subject_prefix) + ".announce";
}

}  // namespace telos::shard
