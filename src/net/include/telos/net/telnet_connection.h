// TelnetConnection: the protocol side of one telnet client, with no socket in it.
//
// Bytes from the client go in through Receive(); what comes out is the player's input lines,
// GMCP messages, and the bytes to send back (negotiation replies). Bytes for the client are
// produced by Text(), Prompt(), Gmcp() and Echo(); once the client has agreed to MCCP2 they
// come out zlib-compressed, so the caller writes exactly what it is handed.
//
// Negotiation follows RFC 1143's rule of never answering a request that does not change an
// option's state, so no two peers can loop. We offer GMCP, MSSP and MCCP2 (WILL) and ask for
// NAWS and TTYPE (DO); every other option is refused (WONT/DONT). ECHO is taken only while the
// session hides a password.
//
// Thread safety: one connection, one thread (or strand) at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "telos/net/telnet_codec.h"
#include "telos/net/text.h"

namespace telos::net {

struct GmcpMessage {
  std::string package;  // e.g. "Core.Hello"
  std::string json;     // the rest of the payload, possibly empty; not validated here
};

// MSSP variables, e.g. {"NAME","TelosMUD"},{"PLAYERS","12"}; called when a client asks.
using MsspProvider = std::function<std::vector<std::pair<std::string, std::string>>()>;

struct TelnetInput {
  std::vector<InputLine> lines;
  std::vector<GmcpMessage> gmcp;
  bool window_size_changed = false;
  bool terminal_type_changed = false;
  size_t protocol_errors = 0;  // overflowing subnegotiations, malformed GMCP
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
  // A prompt: text followed by IAC GA so clients know where the line ends.
  std::string Prompt(std::string_view text);
  // A GMCP message; empty when the client has not enabled GMCP.
  std::string Gmcp(std::string_view package, std::string_view json);
  // echo_on=false asks the client to stop echoing (password entry); true restores it.
  std::string Echo(bool echo_on);

  bool gmcp_enabled() const { return us_[telnet::kOptGmcp].enabled; }
  bool compressing() const { return compressor_ != nullptr; }
  uint16_t width() const { return width_; }    // 0 until NAWS says otherwise
  uint16_t height() const { return height_; }  // 0 until NAWS says otherwise
  const std::string& terminal_type() const { return terminal_type_; }

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
  std::string terminal_type_;
  std::unique_ptr<Compressor> compressor_;
};

}  // namespace telos::net
