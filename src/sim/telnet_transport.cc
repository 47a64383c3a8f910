// The telnet side of a bot: raw TCP, telnet bytes decoded with the server's own codec.
#include <boost/asio.hpp>

#include "telos/net/telnet_codec.h"
#include "transport.h"

namespace telos::sim {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr size_t kReadBytes = 16 * 1024;
constexpr int kRestLowWatermarkBytes = 64 * 1024;

class TelnetTransport final : public Transport {
 public:
  explicit TelnetTransport(asio::any_io_executor executor) : socket_(std::move(executor)) {}

  asio::awaitable<Status> Connect(tcp::endpoint endpoint) override {
    auto [ec] = co_await socket_.async_connect(endpoint, kTuple);
    if (ec) co_return Status::Unavailable("connect: " + ec.message());
    boost::system::error_code ignored;
    socket_.set_option(tcp::no_delay(true), ignored);
    co_return Status::Ok();
  }

  asio::awaitable<Result<std::string>> Read() override {
    auto [ec, n] = co_await socket_.async_read_some(asio::buffer(buffer_), kTuple);
    // Cancelled by Rest() (or by Close(), which the next read then reports).
    if (ec == asio::error::operation_aborted) co_return std::string();
    if (ec) co_return Status::Unavailable("read: " + ec.message());
    events_.clear();
    decoder_.Feed(std::string_view(buffer_.data(), n), events_);
    if (events_.size() == 1 && events_[0].kind == net::telnet::TelnetEvent::Kind::kData) {
      co_return std::move(events_[0].bytes);  // the usual case: one run of text, no copy
    }
    std::string text;
    for (const auto& event : events_) {
      if (event.kind == net::telnet::TelnetEvent::Kind::kData) text += event.bytes;
    }
    co_return text;
  }

  asio::awaitable<Status> SendLine(const std::string& line) override {
    out_ = net::telnet::EncodeText(line);
    out_ += "\r\n";
    auto [ec, n] = co_await asio::async_write(socket_, asio::buffer(out_), kTuple);
    if (ec) co_return Status::Unavailable("write: " + ec.message());
    co_return Status::Ok();
  }

  bool can_rest() const override { return true; }

  void Rest() override {
    // TCP wakes a reader only once this much is waiting: chatter then costs neither the server's
    // send nor this client a wake-up.
    boost::system::error_code ignored;
    socket_.set_option(asio::socket_base::receive_low_watermark(kRestLowWatermarkBytes), ignored);
    // The read pending since the last reply ends, so the bot's reader can park and EndRest()
    // can drop what arrives with no read sharing its buffer.
    socket_.cancel(ignored);
  }

  Status EndRest(bool drop_arrived) override {
    boost::system::error_code ec;
    socket_.set_option(asio::socket_base::receive_low_watermark(1), ec);
    if (!drop_arrived) return ec ? Status::Unavailable("read: " + ec.message()) : Status::Ok();
    socket_.non_blocking(true, ec);
    while (!ec) {
      const size_t n = socket_.read_some(asio::buffer(buffer_), ec);
      if (ec) break;
      events_.clear();
      decoder_.Feed(std::string_view(buffer_.data(), n), events_);  // keeps the telnet state
    }
    if (ec == asio::error::would_block || ec == asio::error::try_again) return Status::Ok();
    return Status::Unavailable("read: " + ec.message());
  }

  void Close() override {
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

 private:
  tcp::socket socket_;
  std::array<char, kReadBytes> buffer_{};
  net::telnet::TelnetDecoder decoder_;
  std::vector<net::telnet::TelnetEvent> events_;
  std::string out_;  // the line being sent
};

}  // namespace

std::unique_ptr<Transport> MakeTelnetTransport(asio::any_io_executor executor) {
  return std::make_unique<TelnetTransport>(std::move(executor));
}

}  // namespace telos::sim
