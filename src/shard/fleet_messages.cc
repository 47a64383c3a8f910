#include "telos/shard/fleet_messages.h"

#include <boost/json.hpp>

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

}  // namespace telos::shard
