// libFuzzer target for the JSON messages FleetComms reads off NATS (fleet_messages.h): a tell,
// mail ping or staff order on a player subject, the reply to a tell or to a staff order, a
// channel line, a content reload request and its answer, an announcement. Anyone who can publish
// on the fleet's subjects controls these bytes. Besides "never crashes": an unknown kind carries
// nothing, a mail ping carries no text, and a staff order carries only known roles.
//
// Run locally:  build/dev/tests/fuzz/bus_fuzz tests/fuzz/corpus/bus \
//                 -dict=tests/fuzz/dict/bus.dict -max_total_time=600
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_checks.h"
#include "telos/shard/fleet_messages.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using telos::fuzz::Check;
  using telos::shard::PlayerMessage;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const PlayerMessage message = telos::shard::DecodePlayerMessage(bytes);
  if (message.kind == PlayerMessage::Kind::kUnknown) Check(message.from.empty());
  if (message.kind != PlayerMessage::Kind::kTell) Check(message.text.empty());
  if (message.kind == PlayerMessage::Kind::kStaff) {
    Check(telos::RolesKnown(message.staff.issuer_roles));
  }
  (void)telos::shard::DecodeTellReply(bytes);
  (void)telos::shard::DecodeStaffOutcome(bytes);
  (void)telos::shard::DecodeChannelLine(bytes);
  // A content reload request or answer: an unknown op carries no hash, and an answer that is
  // not ok always says why.
  const telos::shard::ReloadRequest request = telos::shard::DecodeReloadRequest(bytes);
  if (request.op == telos::shard::ReloadRequest::Op::kUnknown) Check(request.hash.empty());
  const telos::shard::ReloadAnswer answer = telos::shard::DecodeReloadAnswer(bytes);
  if (!answer.ok) Check(!answer.error.empty());
  Check(answer.players >= 0 && answer.relocated >= 0);
  // An announcement re-encoded reads back as itself (the encoder repairs what is not UTF-8, so
  // compare after one round).
  const auto announcement = telos::shard::DecodeAnnouncement(bytes);
  const auto once =
      telos::shard::DecodeAnnouncement(telos::shard::EncodeAnnouncement(announcement));
  const auto twice = telos::shard::DecodeAnnouncement(telos::shard::EncodeAnnouncement(once));
  Check(once.origin == twice.origin && once.zone == twice.zone && once.text == twice.text);
  return 0;
}
