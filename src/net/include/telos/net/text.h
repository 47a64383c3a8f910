// Text hygiene for everything players type and everything we show them.
//
// Input: LineReader turns a stream of data bytes into lines — any of CR LF, LF, CR NUL or a
// lone CR ends a line; a line longer than its limit keeps its first bytes (cut on a character
// boundary) and is flagged so the session can say so; invalid UTF-8 becomes U+FFFD by the one
// rule of telos/base/utf8.h; NUL, escape and the other C0, DEL and C1 controls are dropped (a
// tab becomes a space).
// Output: colour codes in game text ({r} {g} ... {x}) become ANSI escapes, or vanish for a
// player who turned colour off.
//
// Thread safety: a LineReader belongs to one connection; the free functions are pure.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace telos::net {

struct InputLine {
  std::string text;        // valid UTF-8, no control characters
  bool truncated = false;  // the client sent more than the limit; the rest was discarded
};

class LineReader {
 public:
  explicit LineReader(size_t line_bytes_max) : line_bytes_max_(line_bytes_max) {}

  // Appends each line completed by `data` to `lines`.
  void Feed(std::string_view data, std::vector<InputLine>& lines);
  // Bytes held for the line still being typed.
  size_t pending_bytes() const { return buffer_.size(); }

 private:
  void EndLine(std::vector<InputLine>& lines);
  size_t line_bytes_max_;
  std::string buffer_;
  bool overflowed_ = false;
  bool after_cr_ = false;
};

// Repairs and cleans one line of input (see the header comment). Never longer than `text`
// plus the expansion of replaced bytes.
std::string SanitizeInput(std::string_view text);

// Cuts `text` to at most `bytes_max` bytes without splitting a UTF-8 sequence.
std::string_view CutAtCharacter(std::string_view text, size_t bytes_max);

// Replaces colour codes with ANSI SGR escapes when `colour` is true, or removes them.
// "{{" is a literal "{". Unknown codes are left as they are.
std::string RenderColour(std::string_view text, bool colour);

}  // namespace telos::net
