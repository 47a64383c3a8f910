// What a telnet client says about itself through TTYPE (RFC 1091) and the MUD Terminal Type
// Standard (MTTS), and the colour depth chosen from it.
//
// MTTS clients answer successive TTYPE SENDs with their name ("MUDLET"), their terminal type
// ("XTERM-256COLOR") and "MTTS <bits>", then repeat the last answer. A plain client repeats its
// one terminal type at once. TerminalTypeCycle follows the answers, says whether to ask again
// (never after a repeat, after MTTS, or after limits::kTerminalTypeRoundsMax answers, so a
// client cannot keep us asking), and keeps what they said. Answers past that many are ignored,
// asked for or not, so a client sending TTYPE IS unasked holds no more memory.
//
// Thread safety: a TerminalTypeCycle belongs to one connection; the free functions are pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "telos/net/colour.h"

namespace telos::net {

// MTTS capability bits.
namespace mtts {
inline constexpr uint32_t kAnsi = 1;
inline constexpr uint32_t kVt100 = 2;
inline constexpr uint32_t kUtf8 = 4;
inline constexpr uint32_t k256Colours = 8;
inline constexpr uint32_t kMouseTracking = 16;
inline constexpr uint32_t kOscColourPalette = 32;
inline constexpr uint32_t kScreenReader = 64;
inline constexpr uint32_t kProxy = 128;
inline constexpr uint32_t kTruecolor = 256;
inline constexpr uint32_t kMnes = 512;
inline constexpr uint32_t kMslp = 1024;
inline constexpr uint32_t kTls = 2048;
}  // namespace mtts

struct TerminalCapabilities {
  std::string client_name;    // first answer, e.g. "MUDLET"; empty until TTYPE answers
  std::string terminal_type;  // second answer ("XTERM-256COLOR"), or the one a plain client has
  bool mtts = false;          // the client sent "MTTS <bits>"
  uint32_t mtts_bits = 0;     // valid when `mtts`

  bool Has(uint32_t bit) const { return mtts && (mtts_bits & bit) != 0; }
};

// The colour depth a client can show: MTTS bits first, then the terminal type's name
// ("...-TRUECOLOR", "...-256COLOR"), else 16 colours (every MUD client speaks ANSI). MTTS
// without the ANSI bit means no colour at all.
ColourDepth ColourDepthFor(const TerminalCapabilities& caps);

class TerminalTypeCycle {
 public:
  // Takes one TTYPE IS answer (the text after IS, cleaned). Returns true if another SEND
  // should go out.
  bool OnAnswer(std::string_view answer);
  // Counts a SEND we sent (the first is sent when the client agrees to TTYPE).
  void OnSend() { ++sends_; }
  bool may_send() const;
  const TerminalCapabilities& capabilities() const { return caps_; }

 private:
  TerminalCapabilities caps_;
  std::vector<std::string> answers_;
  size_t sends_ = 0;
  bool done_ = false;
};

// Parses "MTTS <decimal>" (any case); false if `answer` is not one.
bool ParseMtts(std::string_view answer, uint32_t& bits);

}  // namespace telos::net
