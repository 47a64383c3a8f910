#include "telos/world/party.h"

#include <algorithm>
#include <array>
#include <utility>

#include "party_json.h"
#include "telos/base/utf8.h"
#include "telos/world/names.h"

namespace telos::world {
namespace {

namespace json = boost::json;

constexpr std::array<std::pair<PartyMessage::Op, std::string_view>, 12> kOps = {{
    {PartyMessage::Op::kInvite, "invite"},
    {PartyMessage::Op::kJoin, "join"},
    {PartyMessage::Op::kHello, "hello"},
    {PartyMessage::Op::kLeave, "leave"},
    {PartyMessage::Op::kRoster, "roster"},
    {PartyMessage::Op::kRefused, "refused"},
    {PartyMessage::Op::kGone, "gone"},
    {PartyMessage::Op::kKicked, "kicked"},
    {PartyMessage::Op::kDisband, "disband"},
    {PartyMessage::Op::kChat, "chat"},
    {PartyMessage::Op::kUnreachable, "unreachable"},
    {PartyMessage::Op::kNotice, "notice"},
}};

PartyMessage::Op OpNamed(std::string_view name) {
  for (const auto& [op, text] : kOps) {
    if (text == name) return op;
  }
  return PartyMessage::Op::kUnknown;
}

// A string field no longer than `max`; absent reads as empty. False: present but not a string,
// or too long.
bool BoundedString(const json::object& object, std::string_view key, size_t max, std::string* out) {
  const json::value* value = object.if_contains(key);
  if (value == nullptr) {
    out->clear();
    return true;
  }
  if (!value->is_string() || value->as_string().size() > max) return false;
  *out = std::string(value->as_string());
  return true;
}

// A name that came off the bus: one that would drive a terminal (control bytes) is no name.
bool CleanName(std::string_view name) {
  return std::none_of(name.begin(), name.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) == 0x7F;
  });
}

bool Names(const json::object& object, std::string_view key, size_t max,
           std::vector<std::string>* out) {
  out->clear();
  const json::value* value = object.if_contains(key);
  if (value == nullptr) return true;
  if (!value->is_array() || value->as_array().size() > max) return false;
  for (const json::value& item : value->as_array()) {
    if (!item.is_string() || item.as_string().empty() ||
        item.as_string().size() > limits::kCharacterNameBytesMax || !CleanName(item.as_string())) {
      return false;
    }
    out->emplace_back(item.as_string());
  }
  return true;
}

json::array ToArray(const std::vector<std::string>& names) {
  json::array out;
  for (const std::string& name : names) out.emplace_back(SanitizeUtf8(name));
  return out;
}

// Party ids are "<leader key>.<ms>": a name and a number, never longer than this.
constexpr size_t kPartyIdBytesMax = limits::kCharacterNameBytesMax + 24;

}  // namespace

bool PartyState::Has(std::string_view name) const {
  const std::string key = NameKey(name);
  return std::any_of(members.begin(), members.end(),
                     [&](const std::string& member) { return NameKey(member) == key; });
}

json::object PartyToJson(const PartyState& party) {
  return json::object{{"id", SanitizeUtf8(party.id)},
                      {"leader", SanitizeUtf8(party.leader)},
                      {"members", ToArray(party.members)},
                      {"invited", ToArray(party.invited)},
                      {"version", party.version}};
}

bool PartyFromJson(const json::value& value, PartyState* out) {
  if (!value.is_object()) return false;
  const json::object& object = value.as_object();
  PartyState party;
  if (!BoundedString(object, "id", kPartyIdBytesMax, &party.id) ||
      !BoundedString(object, "leader", limits::kCharacterNameBytesMax, &party.leader) ||
      !CleanName(party.leader) ||
      !Names(object, "members", limits::kPartyMembersMax, &party.members) ||
      !Names(object, "invited", limits::kPartyInvitesMax, &party.invited)) {
    return false;
  }
  const json::value* version = object.if_contains("version");
  if (version != nullptr) {
    if (!version->is_int64() || version->as_int64() < 0) return false;
    party.version = version->as_int64();
  }
  // An empty id is "no party", whatever else came with it.
  if (party.id.empty()) {
    *out = PartyState{};
    return true;
  }
  // A party names its leader among its members.
  if (party.leader.empty() || !party.Has(party.leader)) return false;
  *out = std::move(party);
  return true;
}

json::object InviteToJson(const PartyInvite& invite) {
  return json::object{{"party", SanitizeUtf8(invite.party_id)},
                      {"from", SanitizeUtf8(invite.from)},
                      {"expires_ms", invite.expires_ms}};
}

bool InviteFromJson(const json::value& value, PartyInvite* out) {
  if (!value.is_object()) return false;
  const json::object& object = value.as_object();
  PartyInvite invite;
  if (!BoundedString(object, "party", kPartyIdBytesMax, &invite.party_id) ||
      !BoundedString(object, "from", limits::kCharacterNameBytesMax, &invite.from) ||
      !CleanName(invite.from)) {
    return false;
  }
  const json::value* expires = object.if_contains("expires_ms");
  if (expires == nullptr || !expires->is_int64()) return false;
  invite.expires_ms = expires->as_int64();
  *out = std::move(invite);
  return true;
}

std::string_view PartyOpName(PartyMessage::Op op) {
  for (const auto& [known, text] : kOps) {
    if (known == op) return text;
  }
  return "unknown";
}

std::string EncodePartyMessage(const PartyMessage& message) {
  json::object out{{"op", PartyOpName(message.op)},
                   {"party", SanitizeUtf8(message.party_id)},
                   {"from", SanitizeUtf8(message.from)},
                   {"text", SanitizeUtf8(message.text)}};
  if (!message.roster.empty()) out["roster"] = PartyToJson(message.roster);
  if (message.op == PartyMessage::Op::kUnreachable) out["failed"] = PartyOpName(message.failed);
  return json::serialize(out);
}

PartyMessage DecodePartyMessage(std::string_view data) {
  boost::system::error_code ec;
  json::value root = json::parse(data, ec);
  if (ec || !root.is_object()) return {};
  const json::object& object = root.as_object();
  PartyMessage out;
  std::string op;
  if (!BoundedString(object, "op", 16, &op)) return {};
  out.op = OpNamed(op);
  if (out.op == PartyMessage::Op::kUnknown) return {};
  if (!BoundedString(object, "party", kPartyIdBytesMax, &out.party_id) ||
      !BoundedString(object, "from", limits::kCharacterNameBytesMax, &out.from) ||
      !CleanName(out.from) ||
      !BoundedString(object, "text", limits::kInputLineBytesMax, &out.text)) {
    return {};
  }
  if (const json::value* roster = object.if_contains("roster")) {
    if (!PartyFromJson(*roster, &out.roster)) return {};
  }
  if (out.op == PartyMessage::Op::kUnreachable) {
    std::string failed;
    if (!BoundedString(object, "failed", 16, &failed)) return {};
    out.failed = OpNamed(failed);
  }
  // Every message names its sender; an invite and a roster carry the party they are about.
  if (out.from.empty()) return {};
  if ((out.op == PartyMessage::Op::kInvite || out.op == PartyMessage::Op::kRoster) &&
      (out.roster.empty() || out.roster.id != out.party_id)) {
    return {};
  }
  return out;
}

}  // namespace telos::world
