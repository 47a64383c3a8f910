// libFuzzer target for DecodeCharacter, which reads every character row the stores hold (and the
// state_json of every handoff between worlds). Besides "never crashes": whatever decodes must
// survive a save, i.e. EncodeCharacter then DecodeCharacter gives back an equal state, since a
// state that changed or stopped decoding on its next save would lose a player's character.
//
// Run locally:  build/dev/tests/fuzz/character_fuzz tests/fuzz/corpus/character \
//                 -dict=tests/fuzz/dict/character.dict -max_total_time=600
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_checks.h"
#include "telos/world/character_state.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using telos::fuzz::Check;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto decoded = telos::world::DecodeCharacter(text);
  if (!decoded.ok()) return 0;
  const std::string saved = telos::world::EncodeCharacter(*decoded);
  auto again = telos::world::DecodeCharacter(saved);
  Check(again.ok());
  Check(*again == *decoded);
  return 0;
}
