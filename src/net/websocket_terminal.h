// The WebSocket side of a player connection (private to the net module): after HttpServer has
// read an upgrade request on a WebSocket route, ServeWebSocket() runs the connection as a
// Terminal speaking JSON frames (web/README.md describes them) until it closes.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <functional>
#include <string>

#include "strand_relay.h"
#include "telos/base/clock.h"
#include "telos/base/log.h"
#include "telos/net/http_server.h"
#include "telos/net/terminal.h"

namespace telos::net {

struct WebSocketRoute {
  TerminalHandlerFactory factory;
  const Clock* clock = nullptr;
  WebSocketOptions options;
  std::shared_ptr<StrandRelay> relay;  // carries other threads' output onto the connections
};

// `set_closer` receives a function that closes the socket at once; HttpServer::Stop calls it on
// the connection's strand. Runs on the stream's executor (the connection's strand).
boost::asio::awaitable<void> ServeWebSocket(
    boost::beast::tcp_stream stream,
    boost::beast::http::request<boost::beast::http::string_body> request,
    std::string remote_address, const WebSocketRoute& route, Logger& log,
    std::function<void(std::function<void()>)> set_closer);

}  // namespace telos::net
