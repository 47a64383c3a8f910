// libFuzzer target for the arcade's one parser: arcade::HashFromHex, which reads the round
// hashes a player pastes into the verifier (/api/arcade/rounds/ID and the casino's `verify`).
//
// Checks: a parse succeeds exactly when the input is 64 hex digits; a parsed hash prints back
// as the input in lower case; verifying the parsed hash against its own SHA-256 holds and
// against itself does not (the chain never cycles in one step).
//
// Run locally:  build/dev/tests/fuzz/round_hash_fuzz tests/fuzz/corpus/round_hash \
//                 -dict=tests/fuzz/dict/round_hash.dict -max_total_time=600
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_checks.h"
#include "telos/arcade/digest.h"
#include "telos/arcade/hash_chain.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using telos::fuzz::Check;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  bool all_hex = text.size() == 64;
  for (char c : text) all_hex = all_hex && std::isxdigit(static_cast<unsigned char>(c));
  auto parsed = telos::arcade::HashFromHex(text);
  Check(parsed.ok() == all_hex);
  if (!parsed.ok()) return 0;
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  Check(telos::arcade::ToHex(*parsed) == lower);
  Check(telos::arcade::VerifyAgainstNext(*parsed, telos::arcade::Sha256(*parsed)));
  Check(!telos::arcade::VerifyAgainstNext(*parsed, *parsed));
  return 0;
}
