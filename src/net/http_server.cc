#include "telos/net/http_server.h"

#include "websocket_terminal.h"

#include <boost/asio.hpp>
#include <boost/asio/experimental/as_tuple.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <boost/json.hpp>
#include <map>
#include <set>

#include "telos/base/assert.h"
#include "telos/base/utf8.h"

namespace telos::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

std::chrono::milliseconds Ms(int64_t ms) {
  return std::chrono::milliseconds(ms);
}

}  // namespace

std::string HttpRequest::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (IEquals(k, name)) return v;
  }
  return {};
}

HttpResponse HttpResponse::Json(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

HttpResponse HttpResponse::Text(int status, std::string body, std::string content_type) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  r.content_type = std::move(content_type);
  return r;
}

HttpResponse HttpResponse::Error(int status, std::string_view code, std::string_view message) {
  boost::json::object body{{"error", SanitizeUtf8(code)}, {"message", SanitizeUtf8(message)}};
  return Json(status, boost::json::serialize(body));
}

// One accepted connection. All of its I/O runs on its own strand (the stream's executor), so
// Stop() closes it by posting to that strand rather than touching it from another thread.
struct Connection {
  Connection(tcp::socket socket, std::string remote)
      : executor(socket.get_executor()), stream(std::move(socket)), address(std::move(remote)) {}
  // The connection's strand, kept apart because the stream may be moved into a WebSocket.
  asio::any_io_executor executor;
  beast::tcp_stream stream;
  const std::string address;
  // Set once the connection became a WebSocket (which then owns the socket).
  std::function<void()> closer;

  void CloseNow() {
    if (closer) {
      closer();
      return;
    }
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream.socket().close(ignored);
  }
};

// State shared with the coroutines. Held by shared_ptr so a coroutine frame destroyed late
// (when the io_context itself is destroyed) never reaches a freed server.
struct SharedState {
  std::mutex mu;
  std::condition_variable idle;
  std::set<std::shared_ptr<Connection>> connections;  // guarded by mu
  std::map<std::string, size_t> per_address;          // guarded by mu
  bool accepting = false;                             // guarded by mu
  bool acceptor_close_pending = false;                // guarded by mu
  bool stopping = false;                              // guarded by mu
};

struct HttpServer::Impl {
  struct Route {
    HttpHandler handler;
    std::vector<std::string> methods;
    BlockingRunner blocking;  // set: the handler may block and runs here (HandleBlocking)
  };

  Impl(asio::io_context& io_in, HttpServerOptions opts, Logger& log_in, HttpServer& owner_in)
      : io(io_in),
        options(std::move(opts)),
        log(log_in),
        owner(owner_in),
        acceptor(asio::make_strand(io_in)),
        shared(std::make_shared<SharedState>()) {}

  asio::io_context& io;
  const HttpServerOptions options;
  Logger& log;
  HttpServer& owner;
  std::map<std::string, Route, std::less<>> routes;
  // Prefix routes ("/api/arcade/rounds/"): a path no exact route takes goes to the longest
  // prefix route it starts with.
  std::map<std::string, Route, std::less<>> prefix_routes;
  std::map<std::string, WebSocketRoute, std::less<>> websocket_routes;
  tcp::acceptor acceptor;
  std::shared_ptr<SharedState> shared;
  std::atomic<size_t> blocking_in_flight{0};  // HandleBlocking requests running now

  // The route `req` may use, or null with the 404 or 405 to send instead in `refusal`.
  const Route* Find(const HttpRequest& req, HttpResponse& refusal) const {
    auto it = routes.find(req.path);
    if (it == routes.end()) {
      it = prefix_routes.end();
      for (auto p = prefix_routes.begin(); p != prefix_routes.end(); ++p) {
        if (req.path.starts_with(p->first) &&
            (it == prefix_routes.end() || p->first.size() > it->first.size())) {
          it = p;
        }
      }
      if (it == prefix_routes.end()) {
        refusal = HttpResponse::Error(404, "not_found", "no such path");
        return nullptr;
      }
    }
    bool allowed = false;
    for (const auto& m : it->second.methods) {
      allowed |= m == req.method || (m == "GET" && req.method == "HEAD");
    }
    if (!allowed) {
      refusal = HttpResponse::Error(405, "method_not_allowed", "method not allowed");
      return nullptr;
    }
    return &it->second;
  }

  // Static, and taking the logger, so that a blocking route's task touches nothing of the server.
  static HttpResponse Call(const HttpHandler& handler, const HttpRequest& req, Logger& log) {
    try {
      return handler(req);
    } catch (const std::exception& e) {
      log.Error("http handler threw", {{"path", req.path}, {"what", e.what()}});
      return HttpResponse::Error(500, "internal", "internal error");
    }
  }

  asio::awaitable<HttpResponse> Answer(HttpRequest req) {
    HttpResponse refusal;
    const Route* route = Find(req, refusal);
    if (route == nullptr) co_return refusal;
    if (!route->blocking) co_return Call(route->handler, req, log);
    co_return co_await CallBlocking(*route, std::move(req));
  }

  // Runs a blocking route's handler on its runner; the coroutine waits without holding an io
  // thread and resumes on its connection's strand (the answer is posted there).
  asio::awaitable<HttpResponse> CallBlocking(const Route& route, HttpRequest req) {
    if (blocking_in_flight.fetch_add(1) >= options.blocking_requests_max) {
      blocking_in_flight.fetch_sub(1);
      co_return HttpResponse::Error(503, "busy", "too many such requests in flight; try again");
    }
    HttpResponse answer =
        co_await asio::async_initiate<const asio::use_awaitable_t<>&, void(HttpResponse)>(
            [&route, &log = log](auto handler, HttpRequest request) {
              // The runner takes a copyable task; the coroutine's handler is move-only.
              auto waiting = std::make_shared<decltype(handler)>(std::move(handler));
              const asio::any_io_executor back =
                  asio::prefer(asio::get_associated_executor(*waiting),
                               asio::execution::outstanding_work.tracked);
              route.blocking(
                  [waiting, back, handler_fn = route.handler, request = std::move(request), &log] {
                    HttpResponse result = Call(handler_fn, request, log);
                    asio::post(back, [waiting, result = std::move(result)]() mutable {
                      (*waiting)(std::move(result));
                    });
                  });
            },
            asio::use_awaitable, std::move(req));
    blocking_in_flight.fetch_sub(1);
    co_return answer;
  }

  static http::response<http::string_body> ToBeast(HttpResponse r, unsigned version,
                                                   bool keep_alive, bool head) {
    http::response<http::string_body> res{static_cast<http::status>(r.status), version};
    res.set(http::field::server, "telos");
    res.set(http::field::content_type, r.content_type);
    for (auto& [k, v] : r.headers) res.set(k, v);
    res.keep_alive(keep_alive);
    const size_t length = r.body.size();
    if (!head) res.body() = std::move(r.body);
    res.content_length(length);
    return res;
  }

  asio::awaitable<void> WriteAndClose(Connection& conn, int status, std::string_view code,
                                      std::string_view message) {
    auto res = ToBeast(HttpResponse::Error(status, code, message), 11, false, false);
    conn.stream.expires_after(Ms(options.write_timeout_ms));
    co_await http::async_write(conn.stream, res, kTuple);
    beast::error_code ignored;
    conn.stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  asio::awaitable<void> Serve(std::shared_ptr<Connection> conn) {
    beast::flat_buffer buffer;
    const std::string remote = conn->address;
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.header_limit(static_cast<std::uint32_t>(options.header_bytes_max));
      parser.body_limit(options.body_bytes_max);
      // The whole header must arrive before this deadline, counted from the connect or from the
      // previous response: a client dribbling bytes, or idling on keep-alive, cannot hold the
      // connection open for longer.
      conn->stream.expires_after(Ms(options.header_timeout_ms));
      auto [ec_head, n_head] =
          co_await http::async_read_header(conn->stream, buffer, parser, kTuple);
      if (!ec_head && !parser.is_done()) {
        conn->stream.expires_after(Ms(options.header_timeout_ms));
        auto [ec_body, n_body] = co_await http::async_read(conn->stream, buffer, parser, kTuple);
        ec_head = ec_body;
      }
      if (ec_head) {
        // Parse errors get an answer; a closed, reset or timed-out peer just loses the socket.
        const bool parse_error =
            ec_head.category() == http::make_error_code(http::error::bad_target).category() &&
            ec_head != http::error::end_of_stream && ec_head != http::error::partial_message;
        if (ec_head == http::error::header_limit) {
          co_await WriteAndClose(*conn, 431, "header_too_large", "request header too large");
        } else if (ec_head == http::error::body_limit) {
          co_await WriteAndClose(*conn, 413, "body_too_large", "request body too large");
        } else if (parse_error) {
          co_await WriteAndClose(*conn, 400, "bad_request", ec_head.message());
        }
        break;
      }
      auto& msg = parser.get();
      if (beast::websocket::is_upgrade(msg)) {
        const std::string path(msg.target().substr(0, msg.target().find('?')));
        if (auto ws = websocket_routes.find(path); ws != websocket_routes.end()) {
          co_await ServeWebSocket(
              std::move(conn->stream), parser.release(), remote, ws->second, log,
              [conn](std::function<void()> closer) { conn->closer = std::move(closer); });
          co_return;
        }
      }
      HttpRequest req;
      req.method = std::string(msg.method_string());
      req.target = std::string(msg.target());
      const auto q = req.target.find('?');
      req.path = req.target.substr(0, q);
      if (q != std::string::npos) req.query = req.target.substr(q + 1);
      req.body = std::move(msg.body());
      req.remote_address = remote;
      for (const auto& field : msg) {
        req.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
      }
      const bool keep_alive = msg.keep_alive();
      const bool head = req.method == "HEAD";
      HttpResponse answer = co_await Answer(std::move(req));
      auto res = ToBeast(std::move(answer), msg.version(), keep_alive, head);
      conn->stream.expires_after(Ms(options.write_timeout_ms));
      auto [ec_write, n_write] = co_await http::async_write(conn->stream, res, kTuple);
      if (ec_write || !keep_alive) break;
    }
    beast::error_code ignored;
    conn->stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    conn->stream.socket().close(ignored);
  }

  asio::awaitable<void> Accept() {
    asio::steady_timer backoff(acceptor.get_executor());
    for (;;) {
      auto [ec, socket] = co_await acceptor.async_accept(asio::make_strand(io), kTuple);
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) break;
      if (ec) {
        // Out of descriptors or a transient kernel error: back off instead of spinning.
        log.Warn("http accept failed", {{"error", ec.message()}});
        backoff.expires_after(Ms(50));
        co_await backoff.async_wait(kTuple);
        continue;
      }
      beast::error_code addr_ec;
      std::string address = socket.remote_endpoint(addr_ec).address().to_string();
      if (!addr_ec) {
        // WebSocket players are interactive too: no Nagle delay between close writes.
        beast::error_code nodelay_ec;
        socket.set_option(asio::ip::tcp::no_delay(true), nodelay_ec);
      }
      auto conn = std::make_shared<Connection>(std::move(socket), std::move(address));
      {
        std::lock_guard lock(shared->mu);
        if (shared->stopping) break;
        size_t& from_address = shared->per_address[conn->address];
        if (addr_ec || shared->connections.size() >= options.connections_max ||
            from_address >= options.connections_per_address_max) {
          if (from_address == 0) shared->per_address.erase(conn->address);
          beast::error_code ignored;
          conn->stream.socket().close(ignored);
          continue;
        }
        ++from_address;
        shared->connections.insert(conn);
        owner.active_.store(shared->connections.size());
      }
      asio::co_spawn(conn->executor, Serve(conn),
                     [shared = shared, conn, &counter = owner.active_](std::exception_ptr) {
                       std::lock_guard lock(shared->mu);
                       shared->connections.erase(conn);
                       if (auto it = shared->per_address.find(conn->address);
                           it != shared->per_address.end() && --it->second == 0) {
                         shared->per_address.erase(it);
                       }
                       counter.store(shared->connections.size());
                       shared->idle.notify_all();
                     });
    }
  }
};

HttpServer::HttpServer(boost::asio::io_context& io, HttpServerOptions options, Logger& log)
    : impl_(std::make_unique<Impl>(io, std::move(options), log, *this)) {}

HttpServer::~HttpServer() {
  Stop();
}

void HttpServer::Handle(std::string path, HttpHandler handler, std::vector<std::string> methods) {
  impl_->routes[std::move(path)] = Impl::Route{std::move(handler), std::move(methods), nullptr};
}

void HttpServer::HandlePrefix(std::string prefix, HttpHandler handler,
                              std::vector<std::string> methods) {
  RELEASE_ASSERT(!prefix.empty() && prefix.back() == '/');
  impl_->prefix_routes[std::move(prefix)] =
      Impl::Route{std::move(handler), std::move(methods), nullptr};
}

void HttpServer::HandleBlocking(std::string path, HttpHandler handler, BlockingRunner blocking,
                                std::vector<std::string> methods) {
  RELEASE_ASSERT(blocking != nullptr);
  impl_->routes[std::move(path)] =
      Impl::Route{std::move(handler), std::move(methods), std::move(blocking)};
}

void HttpServer::HandleWebSocket(std::string path, TerminalHandlerFactory factory,
                                 const Clock& clock, WebSocketOptions options) {
  impl_->websocket_routes[std::move(path)] = WebSocketRoute{
      std::move(factory), &clock, std::move(options), StrandRelay::Create(impl_->io)};
}

Result<uint16_t> HttpServer::Start() {
  beast::error_code ec;
  const auto address = asio::ip::make_address(impl_->options.bind_address, ec);
  if (ec) {
    return Status::InvalidArgument("bad bind address '" + impl_->options.bind_address + "'");
  }
  const tcp::endpoint endpoint(address, impl_->options.port);
  auto& acceptor = impl_->acceptor;
  const std::string where = impl_->options.bind_address + ":" + std::to_string(impl_->options.port);
  if (acceptor.open(endpoint.protocol(), ec); ec) {
    return Status::Unavailable("cannot open http socket " + where + ": " + ec.message());
  }
  acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (acceptor.bind(endpoint, ec); ec) {
    const std::string why = ec.message();
    acceptor.close(ec);  // keeps `why`: close() resets ec
    return Status::Unavailable("cannot bind http " + where + ": " + why);
  }
  if (acceptor.listen(limits::kListenBacklog, ec); ec) {
    const std::string why = ec.message();
    acceptor.close(ec);  // keeps `why`: close() resets ec
    return Status::Unavailable("cannot listen on http " + where + ": " + why);
  }
  port_ = acceptor.local_endpoint().port();
  {
    std::lock_guard lock(impl_->shared->mu);
    impl_->shared->accepting = true;
  }
  auto shared = impl_->shared;
  asio::co_spawn(acceptor.get_executor(), impl_->Accept(), [shared](std::exception_ptr) {
    std::lock_guard lock(shared->mu);
    shared->accepting = false;
    shared->idle.notify_all();
  });
  impl_->log.Info("http listening", {{"address", impl_->options.bind_address},
                                     {"port", static_cast<int64_t>(port_)}});
  return port_;
}

void HttpServer::Stop() {
  auto shared = impl_->shared;
  std::vector<std::shared_ptr<Connection>> open;
  bool accepting;
  {
    std::lock_guard lock(shared->mu);
    if (shared->stopping) return;
    shared->stopping = true;
    accepting = shared->accepting;
    open.assign(shared->connections.begin(), shared->connections.end());
  }
  if (accepting) {
    // The accept loop owns the acceptor now: close it on its strand, and wait below until that
    // has run, since it touches this server.
    {
      std::lock_guard lock(shared->mu);
      shared->acceptor_close_pending = true;
    }
    asio::post(impl_->acceptor.get_executor(), [impl = impl_.get(), shared] {
      beast::error_code ignored;
      impl->acceptor.close(ignored);
      std::lock_guard lock(shared->mu);
      shared->acceptor_close_pending = false;
      shared->idle.notify_all();
    });
  } else {
    beast::error_code ignored;
    impl_->acceptor.close(ignored);
  }
  for (auto& conn : open) {
    asio::post(conn->executor, [conn] { conn->CloseNow(); });
  }
  if (impl_->io.stopped()) return;  // nothing will run the coroutines to completion
  std::unique_lock lock(shared->mu);
  shared->idle.wait(lock, [&] {
    return !shared->accepting && !shared->acceptor_close_pending && shared->connections.empty();
  });
}

}  // namespace telos::net
