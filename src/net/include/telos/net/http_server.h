// HttpServer: the small HTTP/1.1 server every role embeds for /api/* and /metrics.
//
// Built on Boost.Beast with C++20 coroutines. It is defensive by construction: request headers
// and bodies are bounded (limits.h); each header must arrive within a deadline of the connect
// or of the previous response (the slow-header guard, which also ends idle keep-alive); the
// number of connections is capped, in all and per address; bytes that do not parse as HTTP get
// a 400 and a closed socket. Unknown paths get a JSON 404.
//
// Routes are exact paths (or prefixes, HandlePrefix). Handlers run on the io_context's threads,
// possibly several at once, so a handler must be thread-safe and must not block (render from state
// it can read quickly). A handler that has to block (a Redis read) is added with HandleBlocking: it
// runs on the blocking pool while its connection waits, so the io threads keep serving everyone
// else; at most blocking_requests_max of them run at once per server, and a request beyond that
// gets a 503 "busy" at once rather than a place in a queue. WebSocket routes turn an upgrade
// request into a player Terminal (HandleWebSocket).
//
// Lifecycle: construct, add routes, Start(), ..., Stop(). Stop() must not be called from a
// thread that is running the io_context: it waits until every connection has closed.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "telos/base/blocking.h"
#include "telos/base/clock.h"
#include "telos/base/limits.h"
#include "telos/base/log.h"
#include "telos/base/status.h"
#include "telos/net/terminal.h"

namespace boost::asio {
class io_context;
}

namespace telos::net {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query as sent
  std::string path;    // target without the query
  std::string query;   // after '?', undecoded; empty if none
  std::string body;
  std::string remote_address;
  std::vector<std::pair<std::string, std::string>> headers;

  // The first header with this name (case-insensitive), or empty.
  std::string Header(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;

  static HttpResponse Json(int status, std::string body);
  static HttpResponse Text(int status, std::string body, std::string content_type = "text/plain");
  // {"error": "<code>", "message": "<text>"} with the given status.
  static HttpResponse Error(int status, std::string_view code, std::string_view message);
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpServerOptions {
  std::string bind_address = "127.0.0.1";
  uint16_t port = 0;  // 0: the kernel picks a free port; Start() returns it
  size_t header_bytes_max = limits::kHttpHeaderBytesMax;
  size_t body_bytes_max = limits::kHttpBodyBytesMax;
  int64_t header_timeout_ms = limits::kHttpHeaderTimeoutMs;
  int64_t write_timeout_ms = limits::kHttpWriteTimeoutMs;
  size_t connections_max = limits::kHttpConnectionsMax;
  // Connections from one address at once, WebSocket players included.
  size_t connections_per_address_max = limits::kTelnetConnectionsPerAddressMax;
  // Requests of HandleBlocking routes in flight at once, all such routes together.
  size_t blocking_requests_max = limits::kHttpBlockingRequestsMax;
};

// Limits for player connections over WebSocket; they mirror TelnetServerOptions.
struct WebSocketOptions {
  size_t frame_bytes_max = limits::kWebSocketFrameBytesMax;  // larger frames close the socket
  size_t line_bytes_max = limits::kInputLineBytesMax;
  double input_lines_per_second = limits::kInputLinesPerSecond;
  double input_lines_burst = limits::kInputLinesBurst;
  int64_t idle_timeout_ms = limits::kSessionIdleTimeoutMs;
  size_t pending_write_bytes_max = limits::kSessionPendingWriteBytesMax;
};

class HttpServer {
 public:
  HttpServer(boost::asio::io_context& io, HttpServerOptions options, Logger& log);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // REQUIRES: before Start(). `methods` lists the accepted methods ("GET" also admits HEAD);
  // any other method on this path gets 405.
  void Handle(std::string path, HttpHandler handler, std::vector<std::string> methods = {"GET"});
  // As Handle, for every path starting with `prefix` (which ends in '/') that no exact route
  // takes; the longest matching prefix wins. The handler reads the rest from req.path.
  // REQUIRES: before Start().
  void HandlePrefix(std::string prefix, HttpHandler handler,
                    std::vector<std::string> methods = {"GET"});
  // As Handle, but `handler` may block: it runs on `blocking` (a copy is kept), and the
  // connection resumes on its own strand with the answer. The handler and whatever it reads must
  // outlive the server; Stop() waits for a handler in flight. REQUIRES: before Start().
  void HandleBlocking(std::string path, HttpHandler handler, BlockingRunner blocking,
                      std::vector<std::string> methods = {"GET"});

  // REQUIRES: before Start(). A WebSocket upgrade request on `path` becomes a player Terminal
  // speaking JSON frames; `clock` must outlive the server.
  void HandleWebSocket(std::string path, TerminalHandlerFactory factory, const Clock& clock,
                       WebSocketOptions options = {});

  // Binds and starts accepting. Returns the bound port, or Unavailable naming the address.
  Result<uint16_t> Start();
  // Stops accepting, closes every connection and waits for their coroutines to finish.
  void Stop();

  uint16_t port() const { return port_; }
  size_t active_connections() const { return active_.load(); }

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  uint16_t port_ = 0;
  std::atomic<size_t> active_{0};
};

}  // namespace telos::net
