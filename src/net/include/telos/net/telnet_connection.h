// TelnetConnection: the protocol side of one telnet client, with no socket in it.
//
// Bytes from the client go in through Receive(); what comes out is the player's input lines,
// GMCP messages, and the bytes to send back (negotiation replies). Bytes for the client are
// produced by Text(), Prompt(), Gmcp() and Echo(); once the client has agreed to MCCP2 they
// come out zlib-compressed, so the caller writes exactly what it is handed.
//
// Negotiation follows RFC 1143's rule of never answering a request that does not change an
// option's state, so no two peers can loop. We offer GMCP, MSSP, MCCP2, EOR, CHARSET and MSDP
// (WILL) and ask for NAWS and TTYPE (DO); a client's own WILL CHARSET is accepted too; every
// other option is refused (WONT/DONT). ECHO is taken only while the session hides a password.
// docs/protocols.md describes all of it as a client sees it.
//
// Character set (charset.h): UTF-8 unless the client says otherwise, by CHARSET (ACCEPTED to
// our REQUEST, or its own REQUEST) or, when CHARSET never settles it, by MTTS without the
// UTF-8 bit. A Latin-1 client's input is decoded to UTF-8 before the line reader and its
// output encoded to Latin-1 ('?' for what Latin-1 lacks). CHARSET outranks MTTS.
// Terminal type (mtts.h): TTYPE is asked until the MTTS cycle ends; the answers set the
// colour depth Text() and Prompt() fit colour escapes to (colour.h), unless overridden.
// Text() is word-wrapped to the NAWS width once the client reports one of at least
// limits::kWordWrapColumnsMin columns; prompts are never wrapped.
// Prompts end with IAC EOR once the client has agreed to EOR, else IAC GA (unless the client
// suppressed go-ahead). MSDP (msdp.h) is answered here and fed from the GMCP packages passed
// to Gmcp(), so the game produces its data once for both protocols. GMCP's Core package
// (Core.Hello, Core.Ping, Core.Supports.*) is answered here too (gmcp.h), and Gmcp() sends a
// package only if the client's Core.Supports asked for its module (MSDP is fed either way).
//
// Thread safety: one connection, one thread (or strand) at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "telos/net/charset.h"
#include "telos/net/colour.h"
#include "telos/net/gmcp.h"
#include "telos/net/msdp.h"
#include "telos/net/mtts.h"
#include "telos/net/telnet_codec.h"
#include "telos/net/text.h"

namespace telos::net {

// MSSP variables, e.g. {"NAME","TelosMUD"},{"PLAYERS","12"}; called when a client asks.
using MsspProvider = std::function<std::vector<std::pair<std::string, std::string>>()>;

struct TelnetInput {
  std::vector<InputLine> lines;
  std::vector<GmcpMessage> gmcp;
  bool window_size_changed = false;
  bool terminal_type_changed = false;  // also set when the character set or colour depth moved
  size_t protocol_errors = 0;          // overflowing subnegotiations, malformed GMCP
};

class TelnetConnection {
 public:
  TelnetConnection(size_t line_bytes_max, MsspProvider mssp);
  ~TelnetConnection();
  TelnetConnection(const TelnetConnection&) = delete;
  TelnetConnection& operator=(const TelnetConnection&) = delete;

  // The opening negotiation, sent once right after connect.
  std::string Greeting();

  // Decodes client bytes. Negotiation replies are appended to `reply` (ready for the wire).
  TelnetInput Receive(std::string_view bytes, std::string& reply);

  // Game text for the wire (NVT line endings, IAC escaped, compressed when MCCP2 is on).
  std::string Text(std::string_view text);
  // A prompt: text followed by IAC EOR or IAC GA so clients know where the line ends.
  std::string Prompt(std::string_view text);
  // A GMCP message; empty when the client has enabled neither GMCP nor MSDP, or GMCP only and
  // did not ask for the package's module (Core.Supports). With MSDP on, the variables the
  // package carries are updated and the reported ones that changed are sent.
  std::string Gmcp(std::string_view package, std::string_view json);
  // echo_on=false asks the client to stop echoing (password entry); true restores it.
  std::string Echo(bool echo_on);

  bool gmcp_enabled() const { return us_[telnet::kOptGmcp].enabled; }
  bool compressing() const { return compressor_ != nullptr; }
  uint16_t width() const { return width_; }    // 0 until NAWS says otherwise
  uint16_t height() const { return height_; }  // 0 until NAWS says otherwise
  // The terminal type (the second TTYPE answer, or the only one a plain client gives).
  const std::string& terminal_type() const { return ttype_.capabilities().terminal_type; }
  const TerminalCapabilities& capabilities() const { return ttype_.capabilities(); }
  bool msdp_enabled() const { return us_[telnet::kOptMsdp].enabled; }
  bool eor_enabled() const { return us_[telnet::kOptEor].enabled; }
  Charset charset() const { return charset_; }
  ColourDepth colour_depth() const { return depth_override_ ? *depth_override_ : depth_; }
  // A player's own choice of colour depth; nullopt returns to what the client said.
  void SetColourDepthOverride(std::optional<ColourDepth> depth) { depth_override_ = depth; }
  const MsdpAgent& msdp() const { return msdp_; }
  const GmcpSupports& gmcp() const { return gmcp_; }
  // The client's name: its first TTYPE answer, else what its GMCP Core.Hello said.
  const std::string& client_name() const {
    return capabilities().client_name.empty() ? gmcp_.client_name() : capabilities().client_name;
  }
  // Text() wraps lines to the NAWS width (wrap.h) unless turned off (a player's setting).
  void SetWordWrap(bool on) { word_wrap_ = on; }

 private:
  struct OptionState {
    bool enabled = false;
    bool pending = false;  // we asked and await the answer
  };
  class Compressor;

  void OnNegotiation(uint8_t verb, uint8_t option, std::string& reply, TelnetInput& input);
  void OnSubnegotiation(uint8_t option, std::string_view payload, TelnetInput& input,
                        std::string& reply);
  void OnUsEnabled(uint8_t option, std::string& reply);
  void OnUsDisabled(uint8_t option, std::string& reply);
  bool WeSupport(uint8_t option) const;
  bool WeWant(uint8_t option) const;
  void OnCharset(std::string_view payload, TelnetInput& input, std::string& reply);
  void OnTerminalType(std::string_view payload, TelnetInput& input, std::string& reply);
  void OnMsdp(std::string_view payload, TelnetInput& input, std::string& reply);
  // Game text as the client's width (if `wrap`), character set and colour depth want it,
  // NVT-encoded.
  std::string ClientText(std::string_view text, bool wrap) const;
  // IAC SB GMCP <package> [space <json>] IAC SE, uncompressed.
  static std::string GmcpBytes(std::string_view package, std::string_view json);
  // Compresses `raw` when MCCP2 is on; otherwise returns it as is.
  std::string Wire(std::string raw);

  telnet::TelnetDecoder decoder_;
  LineReader lines_;
  MsspProvider mssp_;
  OptionState us_[256];   // options we perform (WILL/WONT side)
  OptionState him_[256];  // options the client performs (DO/DONT side)
  bool hiding_input_ = false;
  uint16_t width_ = 0;
  uint16_t height_ = 0;
  TerminalTypeCycle ttype_;
  Charset charset_ = Charset::kUtf8;
  bool charset_settled_ = false;    // CHARSET chose it: MTTS no longer decides
  bool charset_requested_ = false;  // our REQUEST awaits ACCEPTED or REJECTED
  ColourDepth depth_ = ColourDepth::k16;
  std::optional<ColourDepth> depth_override_;
  bool word_wrap_ = true;
  MsdpAgent msdp_;
  GmcpSupports gmcp_;
  std::unique_ptr<Compressor> compressor_;
};

}  // namespace telos::net
