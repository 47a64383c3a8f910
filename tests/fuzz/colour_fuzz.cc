// libFuzzer target for RenderColour, which turns the colour codes in every line of game text
// ({r} ... {x}, "{{" for a literal brace) into ANSI escapes, or strips them for a player who
// turned colour off. Checks: stripping never adds an escape byte and never lengthens the text;
// text without a brace comes out unchanged either way.
//
// The zone's own renderer (world::ApplyColour, private to src/world) is reached through the
// command target, whose "say" lines carry codes.
//
// Run locally:  build/dev/tests/fuzz/colour_fuzz tests/fuzz/corpus/colour \
//                 -dict=tests/fuzz/dict/colour.dict -max_total_time=600
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_checks.h"
#include "telos/net/text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using telos::fuzz::Check;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string plain = telos::net::RenderColour(text, false);
  const std::string coloured = telos::net::RenderColour(text, true);
  Check(plain.size() <= text.size());
  Check(std::count(plain.begin(), plain.end(), '\x1b') ==
        std::count(text.begin(), text.end(), '\x1b'));
  if (text.find('{') == std::string_view::npos) {
    Check(plain == text);
    Check(coloured == text);
  }
  return 0;
}
