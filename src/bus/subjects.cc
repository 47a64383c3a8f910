// Subject validation and escaping (bus.h).
#include <string>
#include <string_view>

#include "telos/bus/bus.h"

namespace telos::bus {

bool ValidSubject(std::string_view s, bool allow_wildcards) {
  if (s.empty() || s.size() > kSubjectBytesMax) return false;
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    const bool last = dot == std::string_view::npos;
    const std::string_view token = s.substr(start, last ? std::string_view::npos : dot - start);
    if (token.empty()) return false;
    if (token == "*" || token == ">") {
      if (!allow_wildcards) return false;
      if (token == ">" && !last) return false;
    } else {
      for (const char c : token) {
        const auto byte = static_cast<unsigned char>(c);
        // Space and every control character, including DEL; '*' and '>' only as whole tokens.
        if (byte <= 0x20 || byte == 0x7f || c == '*' || c == '>') return false;
      }
    }
    if (last) return true;
    start = dot + 1;
  }
}

std::string SubjectToken(std::string_view text) {
  if (text.empty()) return "_";
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      out += c;
      continue;
    }
    const auto byte = static_cast<unsigned char>(c);
    out += '_';
    out += kHex[byte >> 4];
    out += kHex[byte & 0x0f];
  }
  return out;
}

}  // namespace telos::bus
