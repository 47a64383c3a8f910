#include "telos/net/text.h"

#include <algorithm>

#include "telos/base/utf8.h"

namespace telos::net {
namespace {

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
  // A tab is the one control a player means as text; every other control (C0, DEL, C1) would
  // drive the terminals of those who see the line, so it goes. Validity is the base rule.
  if (text.find('\t') == std::string_view::npos) return SanitizeUtf8(text, Utf8Controls::kDrop);
  std::string spaced(text);
  std::replace(spaced.begin(), spaced.end(), '\t', ' ');
  return SanitizeUtf8(spaced, Utf8Controls::kDrop);
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
