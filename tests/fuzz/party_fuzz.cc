// libFuzzer target for DecodePartyMessage, which reads every party message another world (or
// anything else able to publish on a player's subject) sends. Besides "never crashes": whatever
// decodes as a known message must survive being sent on, i.e. EncodePartyMessage then
// DecodePartyMessage gives back the same op, sender, party and roster, and every name in it is
// within the limits the zone relies on.
//
// Run locally:  build/dev/tests/fuzz/party_fuzz tests/fuzz/corpus/party \
//                 -dict=tests/fuzz/dict/party.dict -max_total_time=600
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_checks.h"
#include "telos/base/limits.h"
#include "telos/world/party.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using telos::fuzz::Check;
  using telos::world::PartyMessage;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const PartyMessage decoded = telos::world::DecodePartyMessage(text);
  if (decoded.op == PartyMessage::Op::kUnknown) return 0;
  Check(!decoded.from.empty() && decoded.from.size() <= telos::limits::kCharacterNameBytesMax);
  Check(decoded.roster.members.size() <= telos::limits::kPartyMembersMax);
  Check(decoded.roster.empty() || decoded.roster.Has(decoded.roster.leader));
  const PartyMessage again =
      telos::world::DecodePartyMessage(telos::world::EncodePartyMessage(decoded));
  Check(again.op == decoded.op);
  Check(again.from == decoded.from);
  Check(again.party_id == decoded.party_id);
  Check(again.text == decoded.text);
  Check(again.roster == decoded.roster);
  Check(again.failed == decoded.failed);
  return 0;
}
