// DecodeClientMessage: what one text frame from a WebSocket player asks for.
//
// The web client speaks JSON objects with a "type" (web/README.md lists them): "input" carries
// typed text, "gmcp" a package and a JSON body, "naws" the window size. Anything else — not
// JSON, nested deeper than kClientMessageJsonDepthMax, not an object, an unknown type, a field of
// the wrong type, an empty or over-long package name — is kIgnored, as the page promises; it is
// never an error, because a browser extension or an older client may send such frames.
//
// The decoder is pure (no I/O, no state) so that it can be unit-tested and fuzzed apart from the
// socket; the WebSocket terminal applies the result (line splitting, the input rate limit).
//
// Thread safety: a pure function.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace telos::net {

// JSON nesting accepted in a client frame; deeper frames are ignored without recursing further.
inline constexpr int kClientMessageJsonDepthMax = 16;
// Window dimensions beyond this are clamped: no terminal is a thousand cells wide.
inline constexpr int64_t kClientWindowDimensionMax = 1000;

struct ClientMessage {
  enum class Kind { kIgnored, kInput, kGmcp, kResize };
  Kind kind = Kind::kIgnored;
  // kInput: the text as sent, possibly several lines; not yet sanitized or cut.
  std::string text;
  // kGmcp: the package name, sanitized (SanitizeInput), 1..kGmcpPackageBytesMax bytes before
  // sanitizing; and the body re-serialized as JSON, or empty when the frame had no "data".
  std::string package;
  std::string data;
  // kResize: 0 (unknown) for a missing, non-numeric or non-positive value; at most
  // kClientWindowDimensionMax.
  uint16_t width = 0;
  uint16_t height = 0;
};

ClientMessage DecodeClientMessage(std::string_view frame);

}  // namespace telos::net
