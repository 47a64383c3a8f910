// Telnet wire codec (RFC 854/855): pure functions and a byte-at-a-time decoder, no sockets.
//
// The decoder separates a client's byte stream into plain data, commands, option
// negotiations (WILL/WONT/DO/DONT) and subnegotiations (SB ... SE) with IAC escapes undone.
// It never fails: any byte sequence decodes to something, and a subnegotiation longer than
// limits::kTelnetSubnegotiationBytesMax is dropped and reported as an overflow event. The
// encoders produce correctly escaped bytes for the other direction.
//
// Thread safety: a TelnetDecoder belongs to one connection; the free functions are pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace telos::net::telnet {

// Commands (RFC 854).
inline constexpr uint8_t kEor = 239;  // end of record (RFC 885), marks a prompt's end
inline constexpr uint8_t kSe = 240;
inline constexpr uint8_t kNop = 241;
inline constexpr uint8_t kGa = 249;
inline constexpr uint8_t kSb = 250;
inline constexpr uint8_t kWill = 251;
inline constexpr uint8_t kWont = 252;
inline constexpr uint8_t kDo = 253;
inline constexpr uint8_t kDont = 254;
inline constexpr uint8_t kIac = 255;

// Options.
inline constexpr uint8_t kOptEcho = 1;
inline constexpr uint8_t kOptSuppressGoAhead = 3;
inline constexpr uint8_t kOptTerminalType = 24;  // TTYPE, RFC 1091
inline constexpr uint8_t kOptEor = 25;           // END-OF-RECORD, RFC 885
inline constexpr uint8_t kOptWindowSize = 31;    // NAWS, RFC 1073
inline constexpr uint8_t kOptCharset = 42;       // CHARSET, RFC 2066
inline constexpr uint8_t kOptMsdp = 69;          // MUD Server Data Protocol
inline constexpr uint8_t kOptMssp = 70;          // MUD Server Status Protocol
inline constexpr uint8_t kOptMccp2 = 86;         // MUD Client Compression Protocol v2
inline constexpr uint8_t kOptGmcp = 201;         // Generic MUD Communication Protocol

// TTYPE subnegotiation verbs and MSSP markers.
inline constexpr uint8_t kTtypeIs = 0;
inline constexpr uint8_t kTtypeSend = 1;
inline constexpr uint8_t kMsspVar = 1;
inline constexpr uint8_t kMsspVal = 2;

struct TelnetEvent {
  enum class Kind {
    kData,            // `bytes` holds plain data (IAC IAC already turned into one 255 byte)
    kCommand,         // `verb` is a two-byte command such as NOP, GA, AYT
    kNegotiation,     // `verb` is WILL/WONT/DO/DONT, `option` the option
    kSubnegotiation,  // `option` and its unescaped payload in `bytes`
    kOverflow,        // a subnegotiation for `option` was too long and was dropped
  };
  Kind kind = Kind::kData;
  uint8_t verb = 0;
  uint8_t option = 0;
  std::string bytes;

  bool operator==(const TelnetEvent&) const = default;
};

class TelnetDecoder {
 public:
  // Appends the events found in `input` to `out`. Consecutive data bytes become one event.
  // State carries across calls, so a sequence may be split anywhere.
  void Feed(std::string_view input, std::vector<TelnetEvent>& out);

 private:
  enum class State { kData, kIac, kOption, kSbOption, kSbData, kSbIac };
  void EmitData(std::vector<TelnetEvent>& out, std::string_view bytes);
  State state_ = State::kData;
  uint8_t verb_ = 0;
  uint8_t sb_option_ = 0;
  bool sb_overflow_ = false;
  std::string sb_payload_;
};

// IAC <verb> <option>.
std::string EncodeNegotiation(uint8_t verb, uint8_t option);
// IAC SB <option> <payload with 255 doubled> IAC SE.
std::string EncodeSubnegotiation(uint8_t option, std::string_view payload);
// Plain text for the wire: 255 doubled, and every "\n" sent as "\r\n" (NVT line ending).
std::string EncodeText(std::string_view text);

}  // namespace telos::net::telnet
