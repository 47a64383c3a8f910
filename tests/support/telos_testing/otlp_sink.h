// OtlpSink: a tiny OTLP/HTTP receiver for tests, since no OpenTelemetry collector is packaged.
//
// Listens on 127.0.0.1 on a port the kernel picks (never a fixed one that could collide), takes
// every POST (OTLP/HTTP JSON or protobuf: the body is kept as it came), answers 200 "{}" and
// keeps the requests for the test to read. One thread serves one connection at a time, which is
// what the SDK's exporter uses. WaitFor polls with a deadline; nothing here sleeps blindly.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace telos::testing {

class OtlpSink {
 public:
  struct Request {
    std::string target;        // "/v1/metrics"
    std::string content_type;  // "application/json" or "application/x-protobuf"
    std::string authorization;
    std::string body;
  };

  OtlpSink() : acceptor_(io_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {
    thread_ = std::thread([this] { Serve(); });
  }
  ~OtlpSink() {
    boost::system::error_code ec;
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      // Wakes a read blocked on the connection being served.
      if (socket_) socket_->shutdown(boost::asio::ip::tcp::socket::shutdown_both, ec);
    }
    // Wakes a blocked accept: it returns this connection and then sees stopping_.
    boost::asio::io_context wake_io;
    boost::asio::ip::tcp::socket wake(wake_io);
    wake.connect({boost::asio::ip::make_address("127.0.0.1"), port()}, ec);
    thread_.join();
  }

  uint16_t port() const { return acceptor_.local_endpoint().port(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port()); }

  std::vector<Request> requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }

  // Waits until `done` holds for the requests received so far, or `timeout` passes.
  bool WaitFor(const std::function<bool(const std::vector<Request>&)>& done,
               std::chrono::milliseconds timeout) const {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return done(requests_); });
  }

 private:
  void Serve() {
    namespace http = boost::beast::http;
    for (;;) {
      boost::asio::ip::tcp::socket socket(io_);
      boost::system::error_code ec;
      acceptor_.accept(socket, ec);
      if (ec) return;
      {
        std::lock_guard lock(mu_);
        if (stopping_) return;
        socket_ = &socket;
      }
      boost::beast::flat_buffer buffer;
      for (;;) {
        http::request_parser<http::string_body> parser;
        parser.body_limit(64 * 1024 * 1024);
        http::read(socket, buffer, parser, ec);
        if (ec) break;
        const auto& req = parser.get();
        Request got{std::string(req.target()), std::string(req[http::field::content_type]),
                    std::string(req[http::field::authorization]), req.body()};
        http::response<http::string_body> res{http::status::ok, req.version()};
        res.set(http::field::content_type, "application/json");
        res.body() = "{}";
        res.keep_alive(req.keep_alive());
        res.prepare_payload();
        {
          std::lock_guard lock(mu_);
          requests_.push_back(std::move(got));
        }
        cv_.notify_all();
        http::write(socket, res, ec);
        if (ec || !res.keep_alive()) break;
      }
      std::lock_guard lock(mu_);
      socket_ = nullptr;
    }
  }

  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::vector<Request> requests_;
  boost::asio::ip::tcp::socket* socket_ = nullptr;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace telos::testing
