// UTF-8 validity and repair: the one rule every module applies to text from outside (what
// players type, operator-set ids, content) before it is shown, logged or put into JSON.
//
// Valid means RFC 3629: each character is the shortest encoding of a Unicode scalar value, so
// overlong forms, UTF-16 surrogates (U+D800..U+DFFF), code points above U+10FFFF and truncated
// sequences are all invalid. Repair replaces each maximal ill-formed subpart with one U+FFFD
// (the Unicode standard's recommended practice, chapter 3, and what WHATWG decoders do): a
// character cut short becomes one U+FFFD, a stray byte one U+FFFD, and the valid text around it
// is kept byte for byte.
//
// Control characters (C0 U+0000..U+001F, DEL U+007F and C1 U+0080..U+009F) are valid UTF-8;
// whether they stay is the caller's choice, never part of the validity rule: a JSON writer keeps
// them (the serializer escapes them), player input drops them (they would drive terminals).
//
// Boost.JSON's serializer copies string bytes as they are, so text goes through SanitizeUtf8
// before it becomes a json::string; otherwise one bad byte makes the whole document unparsable.
//
// Thread safety: pure functions, callable from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace telos {

// Length (1 to 4) of the valid UTF-8 character starting at text[i], or 0 if the bytes there do
// not begin one. REQUIRES: i < text.size().
size_t Utf8SequenceLength(std::string_view text, size_t i);

bool IsValidUtf8(std::string_view text);

// The longest prefix of `text` of at most `max` bytes that does not end inside a UTF-8
// sequence: a cut for display or storage that never makes valid text invalid.
std::string_view Utf8Prefix(std::string_view text, size_t max);

enum class Utf8Controls : uint8_t {
  kKeep,  // control characters are copied like any other character
  kDrop,  // control characters are removed
};

// Appends `text` to `out`, each maximal ill-formed subpart replaced by U+FFFD and control
// characters kept or dropped. The result is always valid UTF-8, at most three bytes longer per
// byte of `text`.
void AppendSanitizedUtf8(std::string& out, std::string_view text,
                         Utf8Controls controls = Utf8Controls::kKeep);
std::string SanitizeUtf8(std::string_view text, Utf8Controls controls = Utf8Controls::kKeep);

}  // namespace telos
