// The JSON messages FleetComms reads off the bus, decoded apart from the comms.
//
// Anyone who can publish on the fleet's NATS subjects can send these bytes, a stray or broken
// publisher included, so decoding never fails: a message that is not a JSON object, or a field
// that is missing or not a string, reads as empty (and an unknown "kind" as kUnknown), which the
// comms then treat as nothing to do. The layouts, as FleetComms writes them:
//   <prefix>.player.<token>  {"kind":"tell","from":F,"text":T} | {"kind":"mail","from":F}
//                            | {"kind":"party","from":F,"text":M}  (M: world::EncodePartyMessage)
//   its reply to a tell      {"outcome":"delivered"|"unavailable","name":N}  (a party message's
//                            reply is the same)
//   <prefix>.chan.<token>    {"origin":SHARD,"channel":C,"from":F,"text":T}
//   <prefix>.chan.guild      {"origin":SHARD,"channel":"guild","guild":G,"from":F,"text":T,
//                             "to":[name keys]}
//   <prefix>.reload.<shard>  {"op":"check"|"apply","hash":H}          (pack_reload.h)
//   its reply                {"ok":B,"shard":S,"running":H,"error":E,"problems":[..],
//                             "rebuilt":[..],"players":N,"relocated":N}
//   <prefix>.player.<token>  {"kind":"staff","order":KIND,"from":F,"roles":N,"room":"z:r",
//                             "until":MS,"reason":R,"assertion":HEX,"world":SHARD}  (a staff
//                             order, telos/world/staff.h; HEX: the issuer's signed assertion,
//                             at most kStaffAssertionBytesMax bytes, else read as none; "roles"
//                             is the issuer's view only and never trusted by the receiver)
//   its reply                {"code":N,"text":T,"room":"z:r","name":N}
//   <prefix>.announce        {"origin":O,"zone":Z,"text":T}   (Z empty: world-wide)
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "telos/world/staff.h"

namespace telos::shard {

struct PlayerMessage {
  enum class Kind { kUnknown, kTell, kMail, kStaff, kParty };
  Kind kind = Kind::kUnknown;
  std::string from;
  std::string text;         // kTell: the line; kParty: the party message
  world::StaffOrder staff;  // kStaff only; an unknown order kind reads as kUnknown
};
PlayerMessage DecodePlayerMessage(std::string_view data);

struct TellReply {
  bool delivered = false;  // "outcome" is exactly "delivered"
  std::string name;        // the recipient's display name; empty when the reply has none
};
TellReply DecodeTellReply(std::string_view data);

// A staff order for `target` as FleetComms sends it, and the reply its far end sends back.
std::string EncodeStaffOrder(const world::StaffOrder& order);
std::string EncodeStaffOutcome(const world::StaffOutcome& outcome);
// A reply that is not one reads as Unknown with no text.
world::StaffOutcome DecodeStaffOutcome(std::string_view data);

struct ChannelLine {
  std::string origin;  // the shard that published it
  std::string channel;
  std::string from;
  std::string text;
  // Channel "guild" only: the guild and the members (name keys, at most kGuildMembersMax) the
  // line is for; every other channel is for everyone.
  std::string guild;
  std::vector<std::string> to;
};
ChannelLine DecodeChannelLine(std::string_view data);

// ---- content hot reload (pack_reload.h)
struct ReloadRequest {
  enum class Op { kUnknown, kCheck, kApply };
  Op op = Op::kUnknown;
  std::string hash;  // the pack the coordinator validated
};
std::string EncodeReloadRequest(const ReloadRequest& request);
ReloadRequest DecodeReloadRequest(std::string_view data);

struct ReloadAnswer {
  bool ok = false;  // "ok" is exactly true
  std::string shard;
  std::string running;                // the pack hash the world runs after answering
  std::string error;                  // why not, when !ok
  std::vector<std::string> problems;  // the pack's file:line problems, as the world read it
  std::vector<std::string> rebuilt;   // zones rebuilt (apply)
  int64_t players = 0;
  int64_t relocated = 0;
};
std::string EncodeReloadAnswer(const ReloadAnswer& answer);
// A reply that is not a well-formed answer reads as not ok, with an error saying so.
ReloadAnswer DecodeReloadAnswer(std::string_view data);

// A scoped announcement (WorldHost::Announce) for the players of one zone on every shard, or of
// every zone when `zone` is empty. `origin` is the shard that published it (and delivered it to
// its own players already), or a process that hosts no players ("director").
struct Announcement {
  std::string origin;
  std::string zone;
  std::string text;
};
Announcement DecodeAnnouncement(std::string_view data);
std::string EncodeAnnouncement(const Announcement& announcement);
// "<prefix>.announce": one subject for every scope, so a shard needs one subscription.
std::string AnnouncementSubject(std::string_view subject_prefix);

}  // namespace telos::shard
