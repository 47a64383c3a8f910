// The JSON messages FleetComms reads off the bus, decoded apart from the comms.
//
// Anyone who can publish on the fleet's NATS subjects can send these bytes, a stray or broken
// publisher included, so decoding never fails: a message that is not a JSON object, or a field
// that is missing or not a string, reads as empty (and an unknown "kind" as kUnknown), which the
// comms then treat as nothing to do. The layouts, as FleetComms writes them:
//   <prefix>.player.<token>  {"kind":"tell","from":F,"text":T} | {"kind":"mail","from":F}
//   its reply to a tell      {"outcome":"delivered"|"unavailable","name":N}
//   <prefix>.chan.<token>    {"origin":SHARD,"channel":C,"from":F,"text":T}
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace telos::shard {

struct PlayerMessage {
  enum class Kind { kUnknown, kTell, kMail };
  Kind kind = Kind::kUnknown;
  std::string from;
  std::string text;  // kTell only
};
PlayerMessage DecodePlayerMessage(std::string_view data);

struct TellReply {
  bool delivered = false;  // "outcome" is exactly "delivered"
  std::string name;        // the recipient's display name; empty when the reply has none
};
TellReply DecodeTellReply(std::string_view data);

struct ChannelLine {
  std::string origin;  // the shard that published it
  std::string channel;
  std::string from;
  std::string text;
};
ChannelLine DecodeChannelLine(std::string_view data);

}  // namespace telos::shard
