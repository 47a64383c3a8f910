#include "telos/net/text.h"

namespace telos::net {
namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 when the bytes there are not one.
size_t ValidSequenceLength(std::string_view s, size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return 1;
  size_t len;
  uint32_t cp;
  uint32_t min;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  // C1 control characters (U+0080..U+009F) are dropped like C0 ones.
  if (cp >= 0x80 && cp <= 0x9F) return 0;
  return len;
}

const char* AnsiFor(char code) {
  switch (code) {
    case 'x': return "\x1b[0m";
    case 'r': return "\x1b[31m";
    case 'g': return "\x1b[32m";
    case 'y': return "\x1b[33m";
    case 'b': return "\x1b[34m";
    case 'm': return "\x1b[35m";
    case 'c': return "\x1b[36m";
    case 'w': return "\x1b[37m";
    case 'R': return "\x1b[1;31m";
    case 'G': return "\x1b[1;32m";
    case 'Y': return "\x1b[1;33m";
    case 'B': return "\x1b[1;34m";
    case 'M': return "\x1b[1;35m";
    case 'C': return "\x1b[1;36m";
    case 'W': return "\x1b[1;37m";
    default: return nullptr;
  }
}

}  // namespace

std::string SanitizeInput(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c == '\t') {
        out.push_back(' ');
      } else if (c >= 0x20 && c != 0x7F) {
        out.push_back(static_cast<char>(c));
      }
      ++i;
      continue;
    }
    const size_t len = ValidSequenceLength(text, i);
    if (len == 0) {
      // A C1 control is a valid two-byte sequence we drop whole; anything else that is not
      // valid UTF-8 is replaced, one byte at a time.
      const bool c1 = c == 0xC2 && i + 1 < text.size() &&
                      static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                      static_cast<unsigned char>(text[i + 1]) <= 0x9F;
      if (c1) {
        i += 2;
      } else {
        out += "\xEF\xBF\xBD";
        ++i;
      }
      continue;
    }
    out.append(text.substr(i, len));
    i += len;
  }
  return out;
}

std::string_view CutAtCharacter(std::string_view text, size_t bytes_max) {
  if (text.size() <= bytes_max) return text;
  size_t end = bytes_max;
  // Step back over continuation bytes so a multi-byte character is never split.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

void LineReader::EndLine(std::vector<InputLine>& lines) {
  InputLine line;
  line.text = SanitizeInput(buffer_);
  line.truncated = overflowed_;
  if (line.text.size() > line_bytes_max_) {
    line.text = std::string(CutAtCharacter(line.text, line_bytes_max_));
    line.truncated = true;
  }
  lines.push_back(std::move(line));
  buffer_.clear();
  if (buffer_.capacity() > 256) buffer_.shrink_to_fit();  // idle sessions hold little memory
  overflowed_ = false;
}

void LineReader::Feed(std::string_view data, std::vector<InputLine>& lines) {
  for (const char c : data) {
    if (after_cr_) {
      after_cr_ = false;
      if (c == '\n' || c == '\0') continue;  // the second half of CR LF or CR NUL
    }
    if (c == '\r' || c == '\n') {
      after_cr_ = c == '\r';
      EndLine(lines);
      continue;
    }
    // Keep a little beyond the limit so the cut can land on a character boundary.
    if (buffer_.size() < line_bytes_max_ + 4) {
      buffer_.push_back(c);
    } else {
      overflowed_ = true;
    }
  }
}

std::string RenderColour(std::string_view text, bool colour) {
  std::string out;
  out.reserve(text.size() + 16);
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c != '{' || i + 1 >= text.size()) {
      out.push_back(c);
      continue;
    }
    const char code = text[i + 1];
    if (code == '{') {
      out.push_back('{');
      ++i;
      continue;
    }
    const char* ansi = AnsiFor(code);
    if (ansi == nullptr || i + 2 >= text.size() || text[i + 2] != '}') {
      out.push_back(c);
      continue;
    }
    if (colour) out += ansi;
    i += 2;
  }
  return out;
}

}  // namespace telos::net
