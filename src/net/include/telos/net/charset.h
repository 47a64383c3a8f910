// Character sets on the telnet wire: the CHARSET option's messages (RFC 2066) and the
// transcoding between the game's UTF-8 and what a client reads.
//
// Everything inside TelosMUD is UTF-8. A client that agrees to UTF-8 (or never says otherwise)
// gets the game's bytes as they are. A client that can only read ISO-8859-1 gets each character
// U+0000..U+00FF as its one byte and every other character as '?', rather than UTF-8 bytes it
// would show as mojibake; what it types (passwords included) is turned from Latin-1 into UTF-8
// before the line reader sees it, so the game never meets a byte it would replace by U+FFFD.
// US-ASCII is served like Latin-1 but for the upper half, which becomes '?' on output.
//
// DecodeCharset never fails: anything that is not a well-formed message decodes to kMalformed.
// A REQUEST names at most limits::kCharsetNamesMax character sets, each cut at
// limits::kCharsetNameBytesMax bytes; the rest are ignored, so a hostile list costs little.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace telos::net {

enum class Charset : uint8_t { kUtf8, kLatin1, kAscii };

// The character set a name denotes (IANA names and the common aliases, any case), if we
// can serve it.
std::optional<Charset> CharsetByName(std::string_view name);
// The IANA name we use on the wire: "UTF-8", "ISO-8859-1" or "US-ASCII".
std::string_view CharsetName(Charset charset);

namespace telnet {
inline constexpr uint8_t kCharsetRequest = 1;
inline constexpr uint8_t kCharsetAccepted = 2;
inline constexpr uint8_t kCharsetRejected = 3;
inline constexpr uint8_t kCharsetTtableIs = 4;
inline constexpr uint8_t kCharsetTtableRejected = 5;
inline constexpr uint8_t kCharsetTtableAck = 6;
inline constexpr uint8_t kCharsetTtableNak = 7;
}  // namespace telnet

struct CharsetMessage {
  enum class Kind { kRequest, kAccepted, kRejected, kTtableIs, kTtableOther, kMalformed };
  Kind kind = Kind::kMalformed;
  // kRequest: the offered names in the sender's order of preference; kAccepted: the one name.
  std::vector<std::string> names;

  bool operator==(const CharsetMessage&) const = default;
};

// Decodes the payload of IAC SB CHARSET ... IAC SE (IAC escapes already undone).
CharsetMessage DecodeCharset(std::string_view payload);
// Payloads (for EncodeSubnegotiation) of REQUEST with `names` separated by ';', of ACCEPTED
// `name`, of REJECTED and of TTABLE-REJECTED.
std::string EncodeCharsetRequest(const std::vector<std::string_view>& names);
std::string EncodeCharsetAccepted(std::string_view name);
std::string EncodeCharsetRejected();
std::string EncodeCharsetTtableRejected();

// Game text (UTF-8) as the client's character set wants it. Invalid UTF-8 bytes become '?'.
std::string ToClientCharset(std::string_view utf8, Charset charset);
// Client bytes as UTF-8. Latin-1 maps each byte to its code point; UTF-8 and US-ASCII are
// passed on as they are (the line reader repairs what is not valid UTF-8).
std::string FromClientCharset(std::string_view bytes, Charset charset);

}  // namespace telos::net
