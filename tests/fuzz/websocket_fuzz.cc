// libFuzzer target for what a WebSocket player's bytes pass through after the HTTP upgrade:
// Boost.Beast's frame parser (masking, fragmentation, control frames, the close handshake) with
// the server's message limit, then DecodeClientMessage on every text message, then the
// terminal's per-line cleaning. Besides "never crashes", it checks the promises made to the game:
// a message is never larger than the limit, every line handed on is clean UTF-8 within the line
// limit, a GMCP body is valid JSON, a window size is within its clamp.
//
// Run locally:  build/dev/tests/fuzz/websocket_fuzz tests/fuzz/corpus/websocket \
//                 -dict=tests/fuzz/dict/websocket.dict -max_total_time=600
#include <boost/asio/io_context.hpp>
#include <boost/beast/_experimental/test/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/json/parse.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_checks.h"
#include "telos/base/limits.h"
#include "telos/net/text.h"
#include "telos/net/websocket_message.h"

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using telos::fuzz::Check;
using telos::net::ClientMessage;

// Smaller than the server's default so that the fuzzer reaches the limit with short inputs.
constexpr size_t kFrameBytesMax = 1024;
constexpr size_t kLineBytesMax = telos::limits::kInputLineBytesMax;

void CheckMessage(std::string_view text) {
  const ClientMessage msg = telos::net::DecodeClientMessage(text);
  switch (msg.kind) {
    case ClientMessage::Kind::kIgnored: break;
    case ClientMessage::Kind::kInput:
      // What WebSocketTerminal::OnInput does with each line of the frame.
      for (size_t start = 0; start <= msg.text.size();) {
        size_t end = msg.text.find('\n', start);
        if (end == std::string::npos) end = msg.text.size();
        const std::string line = telos::net::SanitizeInput(msg.text.substr(start, end - start));
        const std::string_view cut = telos::net::CutAtCharacter(line, kLineBytesMax);
        Check(cut.size() <= kLineBytesMax);
        Check(telos::fuzz::CleanUtf8(cut));
        start = end + 1;
      }
      break;
    case ClientMessage::Kind::kGmcp:
      Check(telos::fuzz::CleanUtf8(msg.package));
      if (!msg.data.empty()) {
        boost::system::error_code ec;
        (void)boost::json::parse(msg.data, ec);
        Check(!ec);
      }
      break;
    case ClientMessage::Kind::kResize:
      Check(msg.width <= telos::net::kClientWindowDimensionMax);
      Check(msg.height <= telos::net::kClientWindowDimensionMax);
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  boost::asio::io_context io;
  beast::test::stream server(io);
  beast::test::stream client(io);
  server.connect(client);
  server.append(std::string_view(reinterpret_cast<const char*>(data), size));
  client.close();  // the server reads the input, then end of stream

  websocket::stream<beast::test::stream&> ws(server);
  ws.read_message_max(kFrameBytesMax);
  ws.text(true);
  http::request<http::string_body> upgrade{http::verb::get, "/ws", 11};
  upgrade.set(http::field::host, "localhost");
  upgrade.set(http::field::upgrade, "websocket");
  upgrade.set(http::field::connection, "upgrade");
  upgrade.set(http::field::sec_websocket_key, "dGhlIHNhbXBsZSBub25jZQ==");
  upgrade.set(http::field::sec_websocket_version, "13");
  beast::error_code ec;
  ws.accept(upgrade, ec);
  if (ec) return 0;
  beast::flat_buffer buffer;
  for (;;) {
    ws.read(buffer, ec);
    if (ec) break;
    Check(buffer.size() <= kFrameBytesMax);
    const auto bytes = buffer.data();
    CheckMessage(std::string_view(static_cast<const char*>(bytes.data()), bytes.size()));
    buffer.consume(buffer.size());
  }
  return 0;
}
