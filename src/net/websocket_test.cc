#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/json.hpp>
#include <thread>

#include "telos/net/http_server.h"

namespace telos::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

// Text no frame may carry as it is: quotes, a backslash, controls and a character cut short.
const std::string kHostile = "q\" b\\ c\x01 esc\x1b[0m cut\xE2\x82 end\n";
const std::string kHostileRepaired = "q\" b\\ c\x01 esc\x1b[0m cut\xEF\xBF\xBD end\n";

// Answers lines as "you said: ...", data as "data <package> <json>", resizes as "size WxH";
// "hostile" sends kHostile as text, two broken GMCP bodies, and closes with kHostile.
class EchoHandler final : public TerminalHandler {
 public:
  explicit EchoHandler(std::shared_ptr<Terminal> t) : t_(std::move(t)) { t_->SendText("hello\n"); }
  void OnLine(std::string line, bool truncated) override {
    if (line == "secret") return t_->SetEcho(false);
    if (line == "bye") return t_->Close("farewell");
    if (line == "hostile") {
      t_->SendText(kHostile);
      t_->SendData("Pkg\"\\\xFF", "{\"s\":\"bad \xC3(\"}");  // invalid UTF-8 in the body
      t_->SendData("Bad.Body", "{not json");
      return t_->Close(kHostile);
    }
    t_->SendText("you said: " + line + (truncated ? " (cut)" : "") + "\n");
  }
  void OnData(std::string package, std::string json) override {
    t_->SendData("Echo." + package, json);
  }
  void OnResize(uint16_t w, uint16_t h) override {
    t_->SendText("size " + std::to_string(w) + "x" + std::to_string(h) + "\n");
  }
  void OnClosed(std::string) override {}

 private:
  std::shared_ptr<Terminal> t_;
};

class WebSocketTest : public ::testing::Test {
 protected:
  static constexpr int64_t kHeaderTimeoutMs = 300;

  void SetUp() override {
    WebSocketOptions options;
    options.frame_bytes_max = 1024;
    options.line_bytes_max = 32;
    HttpServerOptions http;
    http.header_timeout_ms = kHeaderTimeoutMs;
    server_ = std::make_unique<HttpServer>(io_, http, log_);
    server_->HandleWebSocket(
        "/ws", [](std::shared_ptr<Terminal> t) { return std::make_unique<EchoHandler>(t); }, clock_,
        options);
    auto port = server_->Start();
    ASSERT_TRUE(port.ok());
    port_ = *port;
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    server_->Stop();
    work_.reset();
    io_.stop();
    thread_.join();
  }

  std::unique_ptr<websocket::stream<tcp::socket>> Connect() {
    auto ws = std::make_unique<websocket::stream<tcp::socket>>(client_io_);
    ws->next_layer().connect({asio::ip::make_address("127.0.0.1"), port_});
    ws->handshake("127.0.0.1", "/ws");
    return ws;
  }
  static std::string Read(websocket::stream<tcp::socket>& ws) {
    beast::flat_buffer buf;
    ws.read(buf);
    return beast::buffers_to_string(buf.data());
  }

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
  asio::io_context client_io_;
  SystemClock clock_;
  Logger log_{"test", LogLevel::kError};
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
  uint16_t port_ = 0;
};

TEST_F(WebSocketTest, FramesBothWays) {
  auto ws = Connect();
  EXPECT_EQ(Read(*ws), R"({"type":"text","text":"hello\n"})");
  ws->write(asio::buffer(std::string(R"({"type":"input","text":"look"})")));
  EXPECT_EQ(Read(*ws), R"({"type":"text","text":"you said: look\n"})");
  ws->write(asio::buffer(std::string(R"({"type":"gmcp","package":"Core.Hello","data":{"v":1}})")));
  // The transport answers the Core package itself (gmcp.h), then the handler sees the message.
  EXPECT_EQ(Read(*ws), R"({"type":"gmcp","package":"Core.Hello","data":{"name":"TelosMUD"}})");
  EXPECT_EQ(Read(*ws), R"({"type":"gmcp","package":"Echo.Core.Hello","data":{"v":1}})");
  // Once the client names its modules, Echo.* (not among them) is no longer sent; Core is.
  ws->write(asio::buffer(
      std::string(R"({"type":"gmcp","package":"Core.Supports.Set","data":["Char 1"]})")));
  ws->write(asio::buffer(std::string(R"({"type":"gmcp","package":"Core.Ping","data":null})")));
  EXPECT_EQ(Read(*ws), R"({"type":"gmcp","package":"Core.Ping","data":null})");
  ws->write(asio::buffer(std::string(R"({"type":"input","text":"look"})")));
  EXPECT_EQ(Read(*ws), R"({"type":"text","text":"you said: look\n"})");
  ws->write(asio::buffer(std::string(R"({"type":"naws","width":120,"height":40})")));
  EXPECT_EQ(Read(*ws), R"({"type":"text","text":"size 120x40\n"})");
  ws->write(asio::buffer(std::string(R"({"type":"input","text":"secret"})")));
  EXPECT_EQ(Read(*ws), R"({"type":"echo","on":false})");
}

TEST_F(WebSocketTest, HostileTextAndBodiesStillMakeValidFrames) {
  auto ws = Connect();
  Read(*ws);
  ws->write(asio::buffer(std::string(R"({"type":"input","text":"hostile"})")));
  auto parse = [](const std::string& frame) {
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(frame, ec);
    EXPECT_FALSE(ec) << frame;
    return v;
  };
  EXPECT_EQ(parse(Read(*ws)), (boost::json::value{{"type", "text"}, {"text", kHostileRepaired}}));
  EXPECT_EQ(parse(Read(*ws)),
            (boost::json::value{
                {"type", "gmcp"}, {"package", "Pkg\"\\\xEF\xBF\xBD"}, {"data", nullptr}}));
  EXPECT_EQ(parse(Read(*ws)),
            (boost::json::value{{"type", "gmcp"}, {"package", "Bad.Body"}, {"data", nullptr}}));
  EXPECT_EQ(parse(Read(*ws)),
            (boost::json::value{{"type", "close"}, {"reason", kHostileRepaired}}));
}

TEST_F(WebSocketTest, OutlivesTheHttpHeaderDeadline) {
  auto ws = Connect();
  Read(*ws);
  // Let the deadline of the upgrade request pass: the WebSocket must not inherit it.
  std::this_thread::sleep_for(std::chrono::milliseconds(3 * kHeaderTimeoutMs));
  ws->write(asio::buffer(std::string(R"({"type":"input","text":"still here"})")));
  EXPECT_EQ(Read(*ws), R"({"type":"text","text":"you said: still here\n"})");
}

TEST_F(WebSocketTest, PastedLinesAreSplitCleanedAndCut) {
  auto ws = Connect();
  Read(*ws);
  ws->write(asio::buffer(std::string("{\"type\":\"input\",\"text\":\"one\\ntw\\u0007o\\n" +
                                     std::string(40, 'x') + "\"}")));
  EXPECT_EQ(Read(*ws), R"({"type":"text","text":"you said: one\n"})");
  EXPECT_EQ(Read(*ws), R"({"type":"text","text":"you said: two\n"})");
  EXPECT_EQ(Read(*ws),
            "{\"type\":\"text\",\"text\":\"you said: " + std::string(32, 'x') + " (cut)\\n\"}");
}

TEST_F(WebSocketTest, MalformedFramesAreIgnored) {
  auto ws = Connect();
  Read(*ws);
  for (const char* junk :
       {"not json", "[1,2,3]", R"({"type":42})", R"({"type":"input"})",
        R"({"type":"launch-missiles"})", "{\"a\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}"}) {
    ws->write(asio::buffer(std::string(junk)));
  }
  ws->write(asio::buffer(std::string(R"({"type":"input","text":"still alive"})")));
  EXPECT_EQ(Read(*ws), R"({"type":"text","text":"you said: still alive\n"})");
}

TEST_F(WebSocketTest, OversizedFrameClosesWithAReason) {
  auto ws = Connect();
  Read(*ws);
  ws->write(asio::buffer(std::string(4096, 'x')));
  beast::flat_buffer buf;
  beast::error_code ec;
  ws->read(buf, ec);
  // The close frame with code 1009 arrives first; our reply to it may then meet a socket the
  // server has already closed, so the read ends either as a clean close or a broken pipe.
  EXPECT_TRUE(ec == websocket::error::closed || ec == asio::error::broken_pipe ||
              ec == asio::error::connection_reset || ec == asio::error::not_connected)
      << ec.message();
  EXPECT_EQ(ws->reason().code, websocket::close_code::too_big);
  // Others are unaffected.
  auto other = Connect();
  EXPECT_EQ(Read(*other), R"({"type":"text","text":"hello\n"})");
}

TEST_F(WebSocketTest, ServerCloseSendsReasonThenCloses) {
  auto ws = Connect();
  Read(*ws);
  ws->write(asio::buffer(std::string(R"({"type":"input","text":"bye"})")));
  EXPECT_EQ(Read(*ws), R"({"type":"close","reason":"farewell"})");
  beast::flat_buffer buf;
  beast::error_code ec;
  ws->read(buf, ec);
  EXPECT_EQ(ec, websocket::error::closed);
  EXPECT_EQ(ws->reason().code, websocket::close_code::normal);
}

TEST_F(WebSocketTest, ServerStopSendsACloseFrame) {
  auto ws = Connect();
  EXPECT_EQ(Read(*ws), R"({"type":"text","text":"hello\n"})");
  server_->Stop();  // the client does not answer the close, so Stop gives up on it after a moment
  beast::flat_buffer buf;
  beast::error_code ec;
  ws->read(buf, ec);
  EXPECT_TRUE(ec == websocket::error::closed || ec == asio::error::broken_pipe ||
              ec == asio::error::connection_reset || ec == asio::error::not_connected)
      << ec.message();
  EXPECT_EQ(ws->reason().code, websocket::close_code::normal);
}

TEST_F(WebSocketTest, PlainHttpStillWorksOnTheSamePort) {
  asio::io_context io;
  tcp::socket s(io);
  s.connect({asio::ip::make_address("127.0.0.1"), port_});
  asio::write(
      s, asio::buffer(std::string("GET /ws HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")));
  std::string out;
  beast::error_code ec;
  char buf[1024];
  for (size_t n; (n = s.read_some(asio::buffer(buf), ec)) > 0 || !ec;) out.append(buf, n);
  EXPECT_NE(out.find("HTTP/1.1 404"), std::string::npos) << out;
}

}  // namespace
}  // namespace telos::net
