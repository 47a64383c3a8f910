#include "telos/shard/fleet_messages.h"

#include <boost/json.hpp>

#include "telos/base/limits.h"

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

}  // namespace

PlayerMessage DecodePlayerMessage(std::string_view data) {
  const json::object body = ParseObject(data);
  const std::string kind = Field(body, "kind");
  PlayerMessage out;
  if (kind == "tell") {
    out.kind = PlayerMessage::Kind::kTell;
    out.text = Field(body, "text");
  } else if (kind == "mail") {
    out.kind = PlayerMessage::Kind::kMail;
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
  return ChannelLine{Field(line, "origin"), Field(line, "channel"), Field(line, "from"),
                     Field(line, "text")};
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

}  // namespace telos::shard
