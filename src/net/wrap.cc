#include "telos/net/wrap.h"

#include <algorithm>

#include "telos/base/assert.h"

namespace telos::net {
namespace {

// Length of the escape sequence starting at text[i] (an ESC): CSI sequences to their final
// byte, any other escape as ESC and the byte after it.
size_t EscapeLength(std::string_view text, size_t i) {
  size_t end = i + 1;
  if (end < text.size() && text[end] == '[') {
    ++end;
    while (end < text.size() && static_cast<unsigned char>(text[end]) >= 0x20 &&
           static_cast<unsigned char>(text[end]) <= 0x3F) {
      ++end;
    }
  }
  return std::min(end + 1, text.size()) - i;
}

}  // namespace

std::string WrapText(std::string_view text, size_t columns) {
  ASSERT(columns > 0, "wrap width must be positive");
  std::string out;
  out.reserve(text.size() + text.size() / columns + 1);
  size_t column = 0;                    // visible columns on the current output line
  size_t space_at = std::string::npos;  // index in `out` of the line's last space
  size_t column_after_space = 0;        // `column` just after that space
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '\n') {
      out.push_back(c);
      column = 0;
      space_at = std::string::npos;
      ++i;
      continue;
    }
    if (c == '\x1b') {
      const size_t n = EscapeLength(text, i);
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    if (c == '\r') {
      out.push_back(c);
      ++i;
      continue;
    }
    // One character: a byte, or a UTF-8 lead byte with its continuation bytes.
    size_t n = 1;
    while (i + n < text.size() && (static_cast<unsigned char>(text[i + n]) & 0xC0) == 0x80) ++n;
    if (column >= columns) {
      if (c == ' ') {  // the line is full and this space is where it ends
        out.push_back('\n');
        column = 0;
        space_at = std::string::npos;
        i += n;
        continue;
      }
      if (space_at != std::string::npos) {
        out[space_at] = '\n';
        column -= column_after_space;
      } else {  // one word fills the line: break it
        out.push_back('\n');
        column = 0;
      }
      space_at = std::string::npos;
    }
    out.append(text.substr(i, n));
    ++column;
    if (c == ' ') {
      space_at = out.size() - 1;
      column_after_space = column;
    }
    i += n;
  }
  return out;
}

}  // namespace telos::net
