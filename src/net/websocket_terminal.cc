#include "websocket_terminal.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/json.hpp>
#include <deque>
#include <mutex>

#include "input_limiter.h"
#include "strand_relay.h"
#include "telos/base/utf8.h"
#include "telos/net/gmcp.h"
#include "telos/net/text.h"
#include "telos/net/websocket_message.h"

namespace telos::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace json = boost::json;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr int64_t kStopFlushMs = 2000;  // how long a stopping server waits on a WebSocket peer

// Every frame is a Boost.JSON document, "type" first (the web client and the tests read the
// frames in that order); text from the world or the player is sanitized before it becomes a
// json::string, since the serializer would copy invalid UTF-8 into the frame.
std::string Frame(std::string_view type, std::string_view key, std::string_view text) {
  json::object frame;
  frame.emplace("type", type);
  frame.emplace(key, SanitizeUtf8(text));
  return json::serialize(frame);
}

std::string EchoFrame(bool on) {
  return json::serialize(json::object{{"type", "echo"}, {"on", on}});
}

// A GMCP event as a data frame. The body is JSON text from the world; it is parsed rather than
// pasted in, so a malformed body (or one with invalid UTF-8, which the parser refuses) cannot
// break the frame: it arrives as "data":null, like an empty body.
std::string DataFrame(std::string_view package, std::string_view body) {
  json::value data = nullptr;
  if (!body.empty()) {
    boost::system::error_code ec;
    json::value parsed = json::parse(body, ec);
    if (!ec) data = std::move(parsed);
  }
  json::object frame;
  frame.emplace("type", "gmcp");
  frame.emplace("package", SanitizeUtf8(package));
  frame.emplace("data", std::move(data));
  return json::serialize(frame);
}

// One WebSocket player. Its I/O runs on the stream's strand; Terminal methods hop onto it.
class WebSocketTerminal final : public Terminal,
                                public std::enable_shared_from_this<WebSocketTerminal> {
 public:
  WebSocketTerminal(beast::tcp_stream stream, std::string remote, const WebSocketRoute& route,
                    Logger& log)
      : ws_(std::move(stream)),
        route_(route),
        relay_(route.relay),
        relay_lane_(relay_->AssignLane()),
        log_(log),
        limiter_(route.options.input_lines_per_second, route.options.input_lines_burst,
                 route.clock->Now()),
        last_input_(route.clock->Now()),
        idle_timer_(ws_.get_executor()),
        info_{"websocket", std::move(remote), "", 0, 0} {}

  asio::awaitable<void> Run(http::request<http::string_body> request,
                            std::function<void(std::function<void()>)> set_closer) {
    auto self = shared_from_this();
    set_closer([weak = weak_from_this()] {
      if (auto s = weak.lock()) s->CloseFlushingFirst();
    });
    // The HTTP read left a deadline on the stream; from here the WebSocket's own timeouts rule.
    beast::get_lowest_layer(ws_).expires_never();
    websocket::stream_base::timeout timeouts{};
    timeouts.handshake_timeout = std::chrono::seconds(10);
    timeouts.idle_timeout = std::chrono::seconds(30);  // pings find dead peers
    timeouts.keep_alive_pings = true;
    ws_.set_option(timeouts);
    ws_.read_message_max(route_.options.frame_bytes_max);
    ws_.text(true);
    auto [ec] = co_await ws_.async_accept(request, kTuple);
    if (ec) co_return;
    handler_ = route_.factory(self);
    asio::co_spawn(ws_.get_executor(), IdleWatch(), asio::detached);
    co_await ReadLoop();
    CloseSocket();
    if (handler_) {
      handler_->OnClosed(close_reason_.empty() ? "connection closed" : close_reason_);
      handler_.reset();
    }
  }

  // --- Terminal
  void SendText(std::string text) override {
    OnStrand([this, text = std::move(text)] { Queue(Frame("text", "text", text)); });
  }
  void SendPrompt(std::string text) override { SendText(std::move(text)); }
  void SendData(std::string package, std::string body) override {
    OnStrand(
        [this, package = std::move(package), body = std::move(body)] { QueueData(package, body); });
  }
  void SendOutput(TerminalOutput output) override {
    OnStrand([this, output = std::move(output)] {
      if (!output.text.empty()) Queue(Frame("text", "text", output.text));
      for (const auto& [package, body] : output.data) QueueData(package, body);
      if (!output.prompt.empty()) Queue(Frame("text", "text", output.prompt));
    });
  }
  void SetEcho(bool on) override {
    OnStrand([this, on] { Queue(EchoFrame(on)); });
  }
  void Close(std::string reason) override {
    OnStrand([this, reason = std::move(reason)] {
      Queue(Frame("close", "reason", reason));
      close_reason_ = reason.empty() ? "closed" : reason;
      closing_ = true;
      if (!writing_) StartWriter();
    });
  }
  TerminalInfo Info() const override {
    std::lock_guard lock(info_mu_);
    return info_;
  }

 private:
  template <typename F>
  void OnStrand(F&& f) {
    RelayKeepingAlive(*relay_, relay_lane_, ws_.get_executor(), shared_from_this(),
                      std::forward<F>(f));
  }

  asio::awaitable<void> ReadLoop() {
    beast::flat_buffer buffer;
    for (;;) {
      auto [ec, n] = co_await ws_.async_read(buffer, kTuple);
      if (ec) {
        if (ec == websocket::error::message_too_big) close_reason_ = "frame too large";
        break;
      }
      last_input_ = route_.clock->Now();
      const auto data = buffer.data();
      std::string_view text(static_cast<const char*>(data.data()), data.size());
      OnFrame(text);
      buffer.consume(buffer.size());
      // Keep reading while closing: the peer's answer to our close frame ends this loop.
    }
  }

  void OnFrame(std::string_view text) {
    if (!handler_ || closing_) return;
    ClientMessage msg = DecodeClientMessage(text);
    switch (msg.kind) {
      case ClientMessage::Kind::kIgnored: return;  // not one of ours
      case ClientMessage::Kind::kInput: OnInput(msg.text); return;
      case ClientMessage::Kind::kGmcp:
        // The Core package (Hello, Ping, Supports) is the transport's, as on telnet (gmcp.h).
        for (const GmcpMessage& answer : gmcp_.OnClientMessage(msg.package, msg.data)) {
          Queue(DataFrame(answer.package, answer.json));
        }
        if (!gmcp_.client_name().empty()) {
          std::lock_guard lock(info_mu_);
          info_.client = gmcp_.client_name();
        }
        handler_->OnData(std::move(msg.package), std::move(msg.data));
        return;
      case ClientMessage::Kind::kResize: {
        std::lock_guard lock(info_mu_);
        info_.width = msg.width;
        info_.height = msg.height;
      }
        handler_->OnResize(msg.width, msg.height);
        return;
    }
  }

  void OnInput(std::string_view text) {
    // One frame may carry several lines (a paste); each is limited like a typed line.
    size_t start = 0;
    while (start <= text.size() && handler_ && !closing_) {
      size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      std::string line = SanitizeInput(text.substr(start, end - start));
      bool truncated = false;
      if (line.size() > route_.options.line_bytes_max) {
        line = std::string(CutAtCharacter(line, route_.options.line_bytes_max));
        truncated = true;
      }
      if (limiter_.Take(route_.clock->Now())) {
        if (limiter_.Recovered()) told_rate_limited_ = false;
        handler_->OnLine(std::move(line), truncated);
      } else if (!told_rate_limited_) {
        told_rate_limited_ = true;
        Queue(Frame("text", "text",
                    "You are typing faster than the world can listen; some input was dropped.\n"));
      }
      if (end == text.size()) break;
      start = end + 1;
    }
  }

  asio::awaitable<void> IdleWatch() {
    auto self = shared_from_this();
    const auto limit = std::chrono::milliseconds(route_.options.idle_timeout_ms);
    while (!socket_closed_) {
      const auto idle_for = route_.clock->Now() - last_input_;
      if (idle_for >= limit) {
        Close("You have been idle too long. Goodbye.");
        co_return;
      }
      idle_timer_.expires_after(limit - idle_for);
      auto [ec] = co_await idle_timer_.async_wait(kTuple);
      if (ec) co_return;
    }
  }

  // A package from the game, if the client's Core.Supports wants its module (gmcp.h).
  void QueueData(std::string_view package, std::string_view body) {
    gmcp_.Remember(package, body);
    if (gmcp_.Wants(package)) Queue(DataFrame(package, body));
  }

  void Queue(std::string frame) {
    if (socket_closed_) return;
    outbox_bytes_ += frame.size();
    if (outbox_bytes_ > route_.options.pending_write_bytes_max) {
      log_.Warn("slow websocket client shed",
                {{"address", info_.remote_address}, {"pending_bytes", outbox_bytes_}});
      close_reason_ = "output backlog";
      CloseSocket();
      return;
    }
    outbox_.push_back(std::move(frame));
    if (!writing_) StartWriter();
  }

  void StartWriter() {
    writing_ = true;
    asio::co_spawn(ws_.get_executor(), WriteLoop(), asio::detached);
  }

  asio::awaitable<void> WriteLoop() {
    auto self = shared_from_this();
    while (!outbox_.empty() && !socket_closed_) {
      std::string frame = std::move(outbox_.front());
      outbox_.pop_front();
      outbox_bytes_ -= frame.size();
      auto [ec, n] = co_await ws_.async_write(asio::buffer(frame), kTuple);
      if (ec) {
        CloseSocket();
        break;
      }
    }
    if (closing_ && !socket_closed_) {
      co_await ws_.async_close(websocket::close_code::normal, kTuple);
      CloseSocket();
    }
    writing_ = false;
  }

  // Server stop: send what is queued and a close frame, but give the peer only a moment to
  // answer before the socket goes. Runs on the strand.
  void CloseFlushingFirst() {
    if (socket_closed_) return;
    closing_ = true;
    if (close_reason_.empty()) close_reason_ = "server stopping";
    if (!writing_) StartWriter();
    idle_timer_.expires_after(std::chrono::milliseconds(kStopFlushMs));
    idle_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec) self->CloseSocket();
    });
  }

  void CloseSocket() {
    if (socket_closed_) return;
    socket_closed_ = true;
    beast::error_code ignored;
    auto& socket = beast::get_lowest_layer(ws_).socket();
    socket.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
    idle_timer_.cancel();
  }

  websocket::stream<beast::tcp_stream> ws_;
  const WebSocketRoute& route_;
  const std::shared_ptr<StrandRelay> relay_;
  const size_t relay_lane_;
  Logger& log_;
  InputRateLimiter limiter_;
  Instant last_input_;
  asio::steady_timer idle_timer_;
  std::unique_ptr<TerminalHandler> handler_;
  std::deque<std::string> outbox_;
  size_t outbox_bytes_ = 0;
  bool writing_ = false;
  bool closing_ = false;
  bool socket_closed_ = false;
  bool told_rate_limited_ = false;
  std::string close_reason_;
  GmcpSupports gmcp_;
  mutable std::mutex info_mu_;  // Info() is read from other threads
  TerminalInfo info_;
};

}  // namespace

asio::awaitable<void> ServeWebSocket(beast::tcp_stream stream,
                                     http::request<http::string_body> request,
                                     std::string remote_address, const WebSocketRoute& route,
                                     Logger& log,
                                     std::function<void(std::function<void()>)> set_closer) {
  auto terminal =
      std::make_shared<WebSocketTerminal>(std::move(stream), std::move(remote_address), route, log);
  co_await terminal->Run(std::move(request), std::move(set_closer));
}

}  // namespace telos::net
