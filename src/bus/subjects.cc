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

bool SubjectMatches(std::string_view pattern, std::string_view subject) {
  size_t p = 0;
  size_t s = 0;
  while (true) {
    const size_t p_dot = pattern.find('.', p);
    const size_t s_dot = subject.find('.', s);
    const std::string_view p_token =
        pattern.substr(p, p_dot == std::string_view::npos ? std::string_view::npos : p_dot - p);
    if (p_token == ">") return true;  // one or more tokens are left: the loop stops at the last
    const std::string_view s_token =
        subject.substr(s, s_dot == std::string_view::npos ? std::string_view::npos : s_dot - s);
    if (p_token != "*" && p_token != s_token) return false;
    const bool p_last = p_dot == std::string_view::npos;
    const bool s_last = s_dot == std::string_view::npos;
    if (p_last || s_last) return p_last && s_last;
    p = p_dot + 1;
    s = s_dot + 1;
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
