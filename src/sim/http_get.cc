#include "http_get.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "telos/base/limits.h"

namespace telos::sim {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr size_t kBodyBytesMax = limits::kHttpGetBodyBytesMax;

}  // namespace

Result<HttpUrl> ParseHttpUrl(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (url.substr(0, kScheme.size()) != kScheme) {
    return Status::InvalidArgument("metrics url: must start with http://");
  }
  url.remove_prefix(kScheme.size());
  const size_t slash = url.find('/');
  HttpUrl out;
  out.path = slash == std::string_view::npos ? "/" : std::string(url.substr(slash));
  auto target = ParseTarget(url.substr(0, slash));
  if (!target.ok()) return Status::InvalidArgument("metrics url: " + target.status().message());
  out.target = *target;
  return out;
}

asio::awaitable<Result<std::string>> HttpGet(const asio::any_io_executor& executor,
                                             const HttpUrl& url, Duration timeout) {
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(
      url.target.host == "localhost" ? std::string("127.0.0.1") : url.target.host, ec);
  if (ec) co_return Status::InvalidArgument("metrics url: bad address " + url.target.host);
  beast::tcp_stream stream(executor);
  stream.expires_after(timeout);
  auto [connect_ec] =
      co_await stream.async_connect(asio::ip::tcp::endpoint(address, url.target.port), kTuple);
  if (connect_ec) co_return Status::Unavailable("metrics: connect: " + connect_ec.message());
  http::request<http::empty_body> request{http::verb::get, url.path, 11};
  request.set(http::field::host, url.target.ToString());
  request.set(http::field::connection, "close");
  auto [write_ec, written] = co_await http::async_write(stream, request, kTuple);
  if (write_ec) co_return Status::Unavailable("metrics: write: " + write_ec.message());
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kBodyBytesMax);
  auto [read_ec, read] = co_await http::async_read(stream, buffer, parser, kTuple);
  if (read_ec) co_return Status::Unavailable("metrics: read: " + read_ec.message());
  beast::error_code ignored;
  stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  if (parser.get().result() != http::status::ok) {
    co_return Status::Unavailable("metrics: HTTP " + std::to_string(parser.get().result_int()));
  }
  co_return std::move(parser.get().body());
}

}  // namespace telos::sim
