// The WebSocket side of a bot: Beast's client, the web client's JSON frames (web/README.md).
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/json.hpp>

#include "telos/base/limits.h"
#include "transport.h"

namespace telos::sim {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace json = boost::json;
using asio::ip::tcp;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr size_t kFrameBytesMax = limits::kBotWebSocketFrameBytesMax;

// The text a frame carries for a player: "text" frames' text, "close" frames' reason.
std::string FrameText(std::string_view payload) {
  boost::system::error_code ec;
  const json::value value = json::parse(payload, ec);
  if (ec || !value.is_object()) return {};
  const json::object& frame = value.as_object();
  const json::value* type = frame.if_contains("type");
  if (type == nullptr || !type->is_string()) return {};
  const char* field = nullptr;
  if (type->as_string() == "text") field = "text";
  if (type->as_string() == "close") field = "reason";
  if (field == nullptr) return {};
  const json::value* text = frame.if_contains(field);
  if (text == nullptr || !text->is_string()) return {};
  std::string out(text->as_string());
  if (type->as_string() == "close") out += "\n";
  return out;
}

class WebSocketTransport final : public Transport {
 public:
  WebSocketTransport(asio::any_io_executor executor, std::string host)
      : ws_(std::move(executor)), host_(std::move(host)) {}

  asio::awaitable<Status> Connect(tcp::endpoint endpoint) override {
    auto [ec] = co_await ws_.next_layer().async_connect(endpoint, kTuple);
    if (ec) co_return Status::Unavailable("connect: " + ec.message());
    boost::system::error_code ignored;
    ws_.next_layer().set_option(tcp::no_delay(true), ignored);
    ws_.read_message_max(kFrameBytesMax);
    auto [hs] = co_await ws_.async_handshake(host_, "/ws", kTuple);
    if (hs) co_return Status::Unavailable("websocket upgrade: " + hs.message());
    co_return Status::Ok();
  }

  asio::awaitable<Result<std::string>> Read() override {
    buffer_.clear();
    auto [ec, n] = co_await ws_.async_read(buffer_, kTuple);
    if (ec) co_return Status::Unavailable("read: " + ec.message());
    const auto data = buffer_.cdata();
    co_return FrameText(std::string_view(static_cast<const char*>(data.data()), data.size()));
  }

  asio::awaitable<Status> SendLine(const std::string& line) override {
    out_ = json::serialize(json::object{{"type", "input"}, {"text", line}});
    ws_.text(true);
    auto [ec, n] = co_await ws_.async_write(asio::buffer(out_), kTuple);
    if (ec) co_return Status::Unavailable("write: " + ec.message());
    co_return Status::Ok();
  }

  bool can_rest() const override { return false; }
  void Rest() override {}
  Status EndRest(bool) override { return Status::FailedPrecondition("read frame by frame"); }

  void Close() override {
    boost::system::error_code ignored;
    ws_.next_layer().shutdown(tcp::socket::shutdown_both, ignored);
    ws_.next_layer().close(ignored);
  }

 private:
  websocket::stream<tcp::socket> ws_;
  std::string host_;
  beast::flat_buffer buffer_;
  std::string out_;  // the frame being sent
};

}  // namespace

std::unique_ptr<Transport> MakeWebSocketTransport(asio::any_io_executor executor,
                                                  std::string host) {
  return std::make_unique<WebSocketTransport>(std::move(executor), std::move(host));
}

}  // namespace telos::sim
