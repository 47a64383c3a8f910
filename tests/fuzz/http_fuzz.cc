// libFuzzer target for HTTP requests as HttpServer reads them: Boost.Beast's request parser with
// the server's header and body limits, the header read first and the body after it, request after
// request on one keep-alive connection, then what the server derives from each request (the
// upgrade test, path and query, the header list). Checks: a parsed body is within the limit, the
// path never holds the query, Header() finds the first field of a name.
//
// Run locally:  build/dev/tests/fuzz/http_fuzz tests/fuzz/corpus/http \
//                 -dict=tests/fuzz/dict/http.dict -max_total_time=600
#include <boost/asio/io_context.hpp>
#include <boost/beast/_experimental/test/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_checks.h"
#include "telos/net/http_server.h"

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using telos::fuzz::Check;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const telos::net::HttpServerOptions options;  // the limits every role's server runs with
  boost::asio::io_context io;
  beast::test::stream stream(io);
  stream.append(std::string_view(reinterpret_cast<const char*>(data), size));
  stream.close_remote();  // the peer sent the input and closed: end of stream afterwards

  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(options.header_bytes_max));
    parser.body_limit(options.body_bytes_max);
    beast::error_code ec;
    http::read_header(stream, buffer, parser, ec);
    if (!ec && !parser.is_done()) http::read(stream, buffer, parser, ec);
    if (ec) break;
    auto& msg = parser.get();
    Check(msg.body().size() <= options.body_bytes_max);
    (void)beast::websocket::is_upgrade(msg);

    telos::net::HttpRequest req;
    req.method = std::string(msg.method_string());
    req.target = std::string(msg.target());
    const auto q = req.target.find('?');
    req.path = req.target.substr(0, q);
    if (q != std::string::npos) req.query = req.target.substr(q + 1);
    Check(req.path.find('?') == std::string::npos);
    req.body = std::move(msg.body());
    for (const auto& field : msg) {
      req.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    if (!req.headers.empty()) {
      const auto& [name, value] = req.headers.front();
      Check(req.Header(name) == value);
    }
    if (!msg.keep_alive()) break;
  }
  return 0;
}
