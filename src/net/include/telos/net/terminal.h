// Terminal: one connected player, whatever carries the bytes (telnet or WebSocket).
//
// The transport owns the socket and creates one TerminalHandler per connection through a
// factory; the handler (the gate's login and play session) receives input and talks back
// through the Terminal. The transport calls a handler's methods one at a time, in order, on
// the connection's strand. Terminal methods may be called from any thread: they queue output
// for the connection and return at once. A terminal whose client stops reading is closed
// once limits::kSessionPendingWriteBytesMax bytes are waiting, so a slow reader costs bounded
// memory and never holds up anyone else.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "telos/net/colour.h"

namespace telos::net {

struct TerminalInfo {
  std::string transport;       // "telnet" or "websocket"
  std::string remote_address;  // the peer's IP address
  std::string client;          // the client's name (first TTYPE answer) or the web client's
  uint16_t width = 0;          // columns, 0 if unknown
  uint16_t height = 0;         // rows, 0 if unknown
  // What a telnet client said about itself (mtts.h, charset.h); defaults elsewhere.
  std::string terminal_type;                    // e.g. "XTERM-256COLOR", empty if unknown
  uint32_t mtts_bits = 0;                       // MTTS capability bits, 0 if none were sent
  bool screen_reader = false;                   // MTTS says a screen reader is in use
  ColourDepth colour_depth = ColourDepth::k16;  // what colour escapes are fitted to
  std::string charset = "UTF-8";                // what the client's text is encoded in
};

// One flush of a player's output: text, then structured data, then the prompt (if any). A
// transport sends it in one step rather than as separate calls, so a busy zone costs one hop
// onto the connection and at most one write per flush.
struct TerminalOutput {
  std::string text;
  std::vector<std::pair<std::string, std::string>> data;  // GMCP package, JSON body
  std::string prompt;                                     // empty: no prompt
};

class Terminal {
 public:
  virtual ~Terminal() = default;
  // Text for the player; colour escapes must already be rendered (text.h RenderColour).
  // "\n" ends a line; the transport converts it as its protocol needs.
  virtual void SendText(std::string text) = 0;
  // Text left on the input line, e.g. "> ".
  virtual void SendPrompt(std::string text) = 0;
  // Structured data: a GMCP package and its JSON body. Dropped for clients without GMCP.
  virtual void SendData(std::string package, std::string json) = 0;
  // SendText, SendData for each item, then SendPrompt, as one unit.
  virtual void SendOutput(TerminalOutput output) {
    if (!output.text.empty()) SendText(std::move(output.text));
    for (auto& [package, json] : output.data) SendData(std::move(package), std::move(json));
    if (!output.prompt.empty()) SendPrompt(std::move(output.prompt));
  }
  // false while the player types a password (clients hide or mask the input).
  virtual void SetEcho(bool on) = 0;
  // A player's own colour depth (their setting), or nullopt for what the client says it can
  // show (telnet: MTTS/TTYPE). A transport that fits no colour ignores it.
  virtual void SetColourDepth(std::optional<ColourDepth> depth) { (void)depth; }
  // Sends `reason` as a last line, flushes what is queued and closes.
  virtual void Close(std::string reason) = 0;
  // A snapshot of what the transport knows about the client.
  virtual TerminalInfo Info() const = 0;
};

class TerminalHandler {
 public:
  virtual ~TerminalHandler() = default;
  // One line the player typed, cleaned (text.h). `truncated` if it was cut to the limit.
  virtual void OnLine(std::string line, bool truncated) = 0;
  // A GMCP message (telnet) or a data frame (WebSocket).
  virtual void OnData(std::string package, std::string json) = 0;
  // The window size changed (NAWS or the web client's report).
  virtual void OnResize(uint16_t width, uint16_t height) = 0;
  // The connection is gone (client closed, timeout, shed, server stopping). Last call.
  virtual void OnClosed(std::string reason) = 0;
};

using TerminalHandlerFactory =
    std::function<std::unique_ptr<TerminalHandler>(std::shared_ptr<Terminal>)>;

}  // namespace telos::net
