// Helpers shared by the fuzz targets: a check that libFuzzer reports as a crash, and the text
// promises the servers make (clean UTF-8 without control characters).
#pragma once

#include <cstdlib>
#include <string_view>

namespace telos::fuzz {

// abort() rather than an assertion macro: it fires in every build type and libFuzzer saves the
// input that caused it.
inline void Check(bool ok) {
  if (!ok) std::abort();
}

// Valid UTF-8 (no overlong or surrogate checks: SanitizeInput's contract is structural) with no
// C0 control character and no DEL.
inline bool CleanUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7F) return false;
    const size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
    if ((c & 0xC0) == 0x80 || c >= 0xF8 || i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += len;
  }
  return true;
}

}  // namespace telos::fuzz
