#include "telos/base/utf8.h"

namespace telos {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool IsContinuation(unsigned char b) {
  return (b & 0xC0) == 0x80;
}

// What the bytes at text[i] are: a valid character of `length` bytes, or an ill-formed subpart
// of `length` bytes (the lead byte and the continuation bytes that could still have begun a
// valid character), which repair turns into one U+FFFD.
struct Scan {
  size_t length;
  bool valid;
};

Scan ScanAt(std::string_view text, size_t i) {
  const auto b0 = static_cast<unsigned char>(text[i]);
  if (b0 < 0x80) return {1, true};
  size_t need;
  // The second byte's range carries the rules that are not about shape: it is what excludes
  // overlong three- and four-byte forms (E0, F0), surrogates (ED) and values past U+10FFFF (F4).
  unsigned char second_lo = 0x80;
  unsigned char second_hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 3;
    if (b0 == 0xE0) second_lo = 0xA0;
    if (b0 == 0xED) second_hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 4;
    if (b0 == 0xF0) second_lo = 0x90;
    if (b0 == 0xF4) second_hi = 0x8F;
  } else {
    // 80..BF cannot lead, C0 and C1 only lead overlong two-byte forms, F5..FF lead values
    // beyond U+10FFFF.
    return {1, false};
  }
  for (size_t k = 1; k < need; ++k) {
    if (i + k >= text.size()) return {k, false};
    const auto b = static_cast<unsigned char>(text[i + k]);
    const bool ok = k == 1 ? (b >= second_lo && b <= second_hi) : IsContinuation(b);
    if (!ok) return {k, false};
  }
  return {need, true};
}

// Whether the valid character of `length` bytes at text[i] is a C0, DEL or C1 control.
bool IsControl(std::string_view text, size_t i, size_t length) {
  const auto b0 = static_cast<unsigned char>(text[i]);
  if (length == 1) return b0 < 0x20 || b0 == 0x7F;
  // U+0080..U+009F are C2 80..C2 9F; the scan already checked the second byte is 80..BF.
  return length == 2 && b0 == 0xC2 && static_cast<unsigned char>(text[i + 1]) <= 0x9F;
}

}  // namespace

size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const Scan scan = ScanAt(text, i);
  return scan.valid ? scan.length : 0;
}

bool IsValidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const Scan scan = ScanAt(text, i);
    if (!scan.valid) return false;
    i += scan.length;
  }
  return true;
}

std::string_view Utf8Prefix(std::string_view text, size_t max) {
  if (text.size() <= max) return text;
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut);
}

void AppendSanitizedUtf8(std::string& out, std::string_view text, Utf8Controls controls) {
  out.reserve(out.size() + text.size());
  // Runs of characters that pass are copied in one append, so clean text costs one scan.
  size_t run = 0;
  for (size_t i = 0; i < text.size();) {
    const Scan scan = ScanAt(text, i);
    const bool drop =
        scan.valid && controls == Utf8Controls::kDrop && IsControl(text, i, scan.length);
    if (scan.valid && !drop) {
      i += scan.length;
      continue;
    }
    out.append(text.substr(run, i - run));
    if (!scan.valid) out.append(kReplacement);
    i += scan.length;
    run = i;
  }
  out.append(text.substr(run));
}

std::string SanitizeUtf8(std::string_view text, Utf8Controls controls) {
  std::string out;
  AppendSanitizedUtf8(out, text, controls);
  return out;
}

}  // namespace telos
