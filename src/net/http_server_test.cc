#include "telos/net/http_server.h"

#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <boost/json.hpp>
#include <future>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "telos/base/metrics.h"
#include "telos/base/utf8.h"
#include "telos/net/admin_routes.h"

namespace telos::net {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// A server on 127.0.0.1:0 with its io_context on a background thread.
class HttpServerTest : public ::testing::Test {
 protected:
  void StartServer(HttpServerOptions options = {}) {
    server_ = std::make_unique<HttpServer>(io_, options, log_);
    AddAdminRoutes(*server_, metrics_, [this] {
      if (!healthy_) return HealthReport::Unavailable("testing", {{"role", "test"}});
      return HealthReport{true, boost::json::object{{"role", "test"}}};
    });
    if (more_routes_) more_routes_(*server_);
    server_->Handle(
        "/echo",
        [](const HttpRequest& req) { return HttpResponse::Text(200, req.method + " " + req.body); },
        {"POST"});
    auto port = server_->Start();
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    port_ = *port;
    thread_ = std::thread([this] { io_.run(); });
  }

  void TearDown() override {
    if (server_) server_->Stop();
    work_.reset();
    io_.stop();
    if (thread_.joinable()) thread_.join();
    for (auto& worker : workers_) worker.join();
  }

  // A blocking pool of one thread per task, joined at the end of the test.
  BlockingRunner Runner() {
    return [this](std::function<void()> task) {
      std::lock_guard lock(workers_mu_);
      workers_.emplace_back(std::move(task));
    };
  }

  // Sends raw bytes and reads until the server closes or `timeout` passes.
  std::string Exchange(const std::string& bytes,
                       std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
    asio::io_context client_io;
    tcp::socket socket(client_io);
    socket.connect({asio::ip::make_address("127.0.0.1"), port_});
    // The server may answer and close before it has read everything (an oversized body is
    // refused as soon as its length is known), so a write that fails is not the test's verdict:
    // what the server sent back is.
    boost::system::error_code write_error;
    asio::write(socket, asio::buffer(bytes), write_error);
    return ReadUntilClosed(socket, timeout);
  }

  static std::string ReadUntilClosed(tcp::socket& socket, std::chrono::milliseconds timeout) {
    std::string out;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    socket.non_blocking(true);
    char buf[4096];
    while (std::chrono::steady_clock::now() < deadline) {
      boost::system::error_code ec;
      const size_t n = socket.read_some(asio::buffer(buf), ec);
      if (ec == asio::error::would_block) {
        std::this_thread::yield();
        continue;
      }
      if (ec) return out;  // closed by the server
      out.append(buf, n);
    }
    return out + "<timeout>";
  }

  std::string Get(const std::string& path) {
    return Exchange("GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  }

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
  Logger log_{"test", LogLevel::kError};
  Metrics metrics_;
  std::atomic<bool> healthy_{true};
  std::function<void(HttpServer&)> more_routes_;  // added before Start
  std::mutex workers_mu_;
  std::vector<std::thread> workers_;  // guarded by workers_mu_
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
  uint16_t port_ = 0;
};

TEST_F(HttpServerTest, HealthIsJson) {
  StartServer();
  std::string res = Get("/api/health");
  EXPECT_NE(res.find("HTTP/1.1 200"), std::string::npos) << res;
  EXPECT_NE(res.find("application/json"), std::string::npos) << res;
  EXPECT_NE(res.find("{\"status\":\"ok\",\"role\":\"test\"}"), std::string::npos) << res;
  healthy_ = false;
  res = Get("/api/health");
  EXPECT_NE(res.find("HTTP/1.1 503"), std::string::npos) << res;
  EXPECT_NE(res.find("{\"status\":\"unavailable\",\"reason\":\"testing\",\"role\":\"test\"}"),
            std::string::npos)
      << res;
}

TEST(HealthJsonTest, StatusFirstAndHostileIdsComeBackRepaired) {
  const std::string fffd = "\xEF\xBF\xBD";
  const std::string id = "w\"1\\ \x01\xFF";
  const HealthReport report{true, boost::json::object{{"role", "world"},
                                                      {"shard", SanitizeUtf8(id)},
                                                      {"zones", 3},
                                                      {"status", "not yours to set"}}};
  const std::string body = HealthJson(report);
  EXPECT_EQ(body.rfind("{\"status\":\"ok\",\"role\":\"world\",", 0), 0u) << body;
  boost::system::error_code ec;
  const boost::json::value parsed = boost::json::parse(body, ec);
  ASSERT_FALSE(ec) << body;
  EXPECT_EQ(parsed.at("shard").as_string(), "w\"1\\ \x01" + fffd);
  EXPECT_EQ(parsed.at("zones").as_int64(), 3);
  EXPECT_EQ(parsed.at("status").as_string(), "ok");
  EXPECT_EQ(parsed.as_object().size(), 4u);
  EXPECT_EQ(HealthJson(HealthReport{false, boost::json::object{}}),
            "{\"status\":\"unavailable\",\"reason\":\"unknown\"}");
  EXPECT_EQ(HealthJson(HealthReport::Unavailable("draining", {{"reason", "not yours"}})),
            "{\"status\":\"unavailable\",\"reason\":\"draining\"}");
}

TEST(HealthJsonTest, TransitionalTextMembersAreParsedOrFlagged) {
  EXPECT_EQ(HealthJson(HealthReport{true, std::string("\"role\":\"serve\",\"players\":2")}),
            "{\"status\":\"ok\",\"role\":\"serve\",\"players\":2}");
  EXPECT_EQ(HealthJson(HealthReport{true, std::string("\"role\":\"a\"b\"")}),
            "{\"status\":\"ok\",\"members_invalid\":true}");
  EXPECT_EQ(HealthJson(HealthReport{true, std::string()}), "{\"status\":\"ok\"}");
}

TEST(HttpErrorTest, ErrorBodiesAreJsonWhateverTheText) {
  const HttpResponse r = HttpResponse::Error(400, "bad\"code", "line\nbreak \\ \x01 cut\xE2\x82");
  EXPECT_EQ(r.status, 400);
  boost::system::error_code ec;
  const boost::json::value parsed = boost::json::parse(r.body, ec);
  ASSERT_FALSE(ec) << r.body;
  EXPECT_EQ(parsed.at("error").as_string(), "bad\"code");
  EXPECT_EQ(parsed.at("message").as_string(), "line\nbreak \\ \x01 cut\xEF\xBF\xBD");
}

TEST_F(HttpServerTest, MetricsArePrometheusText) {
  metrics_.Counter("widgets_total", "Widgets").Increment(5);
  StartServer();
  const std::string res = Get("/metrics");
  EXPECT_NE(res.find("HTTP/1.1 200"), std::string::npos) << res;
  EXPECT_NE(res.find("text/plain; version=0.0.4"), std::string::npos) << res;
  EXPECT_NE(res.find("telos_widgets_total 5"), std::string::npos) << res;
}

TEST_F(HttpServerTest, UnknownPathIsJson404) {
  StartServer();
  const std::string res = Get("/no/such/thing?x=1");
  EXPECT_NE(res.find("HTTP/1.1 404"), std::string::npos) << res;
  EXPECT_NE(res.find("{\"error\":\"not_found\""), std::string::npos) << res;
}

TEST_F(HttpServerTest, APrefixRouteTakesThePathsBelowItAndTheLongestPrefixWins) {
  more_routes_ = [](HttpServer& server) {
    server.HandlePrefix("/api/things/", [](const HttpRequest& req) {
      return HttpResponse::Text(200, "things " + req.path);
    });
    server.HandlePrefix("/api/things/red/", [](const HttpRequest& req) {
      return HttpResponse::Text(200, "red " + req.path);
    });
  };
  StartServer();
  std::string res = Get("/api/things/42");
  EXPECT_NE(res.find("things /api/things/42"), std::string::npos) << res;
  res = Get("/api/things/red/7");
  EXPECT_NE(res.find("red /api/things/red/7"), std::string::npos) << res;
  res = Get("/api/thing");
  EXPECT_NE(res.find("HTTP/1.1 404"), std::string::npos) << res;
  res = Get("/api/health");
  EXPECT_NE(res.find("HTTP/1.1 200"), std::string::npos) << "exact routes are untouched: " << res;
}

TEST_F(HttpServerTest, WrongMethodIs405AndRightOneWorks) {
  StartServer();
  std::string res = Get("/echo");
  EXPECT_NE(res.find("HTTP/1.1 405"), std::string::npos) << res;
  res = Exchange(
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello");
  EXPECT_NE(res.find("HTTP/1.1 200"), std::string::npos) << res;
  EXPECT_NE(res.find("POST hello"), std::string::npos) << res;
}

TEST_F(HttpServerTest, KeepAliveServesSeveralRequests) {
  StartServer();
  const std::string two =
      "GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n"
      "GET /api/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  const std::string res = Exchange(two);
  size_t first = res.find("HTTP/1.1 200");
  ASSERT_NE(first, std::string::npos) << res;
  EXPECT_NE(res.find("HTTP/1.1 200", first + 1), std::string::npos) << res;
}

TEST_F(HttpServerTest, OversizedHeaderIs431) {
  StartServer();
  const std::string res = Exchange("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " +
                                   std::string(limits::kHttpHeaderBytesMax + 10, 'a') + "\r\n\r\n");
  EXPECT_NE(res.find("HTTP/1.1 431"), std::string::npos) << res.substr(0, 200);
  EXPECT_NE(Get("/api/health").find("200"), std::string::npos);
}

TEST_F(HttpServerTest, OversizedBodyIs413) {
  StartServer();
  const size_t n = limits::kHttpBodyBytesMax + 1;
  const std::string res =
      Exchange("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(n) +
               "\r\n\r\n" + std::string(n, 'b'));
  EXPECT_NE(res.find("HTTP/1.1 413"), std::string::npos) << res.substr(0, 200);
}

TEST_F(HttpServerTest, SlowHeaderClientIsCutOffAndOthersAreServed) {
  HttpServerOptions options;
  options.header_timeout_ms = 200;
  StartServer(options);
  asio::io_context client_io;
  tcp::socket slow(client_io);
  slow.connect({asio::ip::make_address("127.0.0.1"), port_});
  asio::write(slow, asio::buffer(std::string("GET /api/health HTTP/1.1\r\nHost: x\r\n")));
  // Meanwhile a normal client is answered.
  EXPECT_NE(Get("/api/health").find("HTTP/1.1 200"), std::string::npos);
  // The slow client never finishes its header: the server closes it, well before 5 s.
  const std::string res = ReadUntilClosed(slow, std::chrono::milliseconds(5000));
  EXPECT_EQ(res.find("<timeout>"), std::string::npos) << res;
}

TEST_F(HttpServerTest, RandomBytesNeverHurtTheServer) {
  StartServer();
  std::mt19937 rng(12345);
  for (int round = 0; round < 50; ++round) {
    std::string junk(1 + rng() % 2000, '\0');
    for (auto& c : junk) c = static_cast<char>(rng());
    if (round % 2 == 0) junk += "\r\n\r\n";
    const std::string res = Exchange(junk, std::chrono::milliseconds(3000));
    EXPECT_EQ(res.find("<timeout>"), std::string::npos) << "round " << round;
    if (!res.empty()) {
      EXPECT_EQ(res.rfind("HTTP/1.1 4", 0), 0u) << res.substr(0, 100);
    }
  }
  EXPECT_NE(Get("/api/health").find("HTTP/1.1 200"), std::string::npos);
}

TEST_F(HttpServerTest, StopClosesIdleConnections) {
  StartServer();
  asio::io_context client_io;
  tcp::socket idle(client_io);
  idle.connect({asio::ip::make_address("127.0.0.1"), port_});
  // Wait until the server has accepted it, then stop with it still open.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (server_->active_connections() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  ASSERT_EQ(server_->active_connections(), 1u);
  server_->Stop();
  EXPECT_EQ(server_->active_connections(), 0u);
  EXPECT_EQ(ReadUntilClosed(idle, std::chrono::milliseconds(2000)).find("<timeout>"),
            std::string::npos);
}

TEST_F(HttpServerTest, ConnectionsPerAddressAreCapped) {
  HttpServerOptions options;
  options.connections_per_address_max = 2;
  StartServer(options);
  asio::io_context client_io;
  tcp::socket a(client_io), b(client_io), c(client_io);
  for (auto* s : {&a, &b}) s->connect({asio::ip::make_address("127.0.0.1"), port_});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (server_->active_connections() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  ASSERT_EQ(server_->active_connections(), 2u);
  c.connect({asio::ip::make_address("127.0.0.1"), port_});
  // The third is closed at once; the server answers again once one of the two has gone.
  EXPECT_EQ(ReadUntilClosed(c, std::chrono::milliseconds(5000)), "");
  a.close();
  while (server_->active_connections() > 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_NE(Get("/api/health").find("HTTP/1.1 200"), std::string::npos);
}

TEST_F(HttpServerTest, BindingABusyPortIsUnavailable) {
  StartServer();
  HttpServerOptions options;
  options.port = port_;
  HttpServer second(io_, options, log_);
  auto port = second.Start();
  ASSERT_FALSE(port.ok());
  EXPECT_EQ(port.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(port.status().message().find(std::to_string(port_)), std::string::npos);
  // The operating system's reason, not the "Success" of the close that followed.
  EXPECT_NE(port.status().message().find("in use"), std::string::npos) << port.status().message();
}

// A route that blocks (a Redis read behind /api/cluster) must not hold an io thread: with one io
// thread, /api/health is answered while the blocking handler is still waiting. With Handle
// instead of HandleBlocking the health request times out.
TEST_F(HttpServerTest, BlockingRouteLeavesTheIoThreadFree) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> entered{false};
  more_routes_ = [&](HttpServer& server) {
    server.HandleBlocking(
        "/slow",
        [&entered, released](const HttpRequest&) {
          entered = true;
          released.wait();
          return HttpResponse::Text(200, "slow answer");
        },
        Runner());
  };
  StartServer();
  std::string slow;
  std::thread client([&] { slow = Get("/slow"); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!entered && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  ASSERT_TRUE(entered);
  const std::string health = Get("/api/health");
  release.set_value();
  client.join();
  EXPECT_NE(health.find("HTTP/1.1 200"), std::string::npos) << health;
  EXPECT_NE(slow.find("HTTP/1.1 200"), std::string::npos) << slow;
  EXPECT_NE(slow.find("slow answer"), std::string::npos) << slow;
}

TEST_F(HttpServerTest, BlockingRequestsBeyondTheBoundAreBusyAtOnce) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> entered{0};
  more_routes_ = [&](HttpServer& server) {
    server.HandleBlocking(
        "/slow",
        [&entered, released](const HttpRequest&) {
          ++entered;
          released.wait();
          return HttpResponse::Text(200, "slow answer");
        },
        Runner());
  };
  HttpServerOptions options;
  options.blocking_requests_max = 1;
  StartServer(options);
  std::string first;
  std::thread client([&] { first = Get("/slow"); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (entered == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  ASSERT_EQ(entered, 1);
  const std::string second = Get("/slow");
  release.set_value();
  client.join();
  EXPECT_NE(second.find("HTTP/1.1 503"), std::string::npos) << second;
  EXPECT_NE(second.find("\"error\":\"busy\""), std::string::npos) << second;
  EXPECT_EQ(entered, 1);
  EXPECT_NE(first.find("slow answer"), std::string::npos) << first;
  // The slot is given back: the next one runs.
  EXPECT_NE(Get("/slow").find("slow answer"), std::string::npos);
}

TEST_F(HttpServerTest, HealthRouteAloneServesNoMetrics) {
  // What a public listener gets: /api/health, and /metrics is no route there.
  server_ = std::make_unique<HttpServer>(io_, HttpServerOptions{}, log_);
  AddHealthRoute(*server_, [] { return HealthReport{true, boost::json::object{}}; });
  auto port = server_->Start();
  ASSERT_TRUE(port.ok()) << port.status().ToString();
  port_ = *port;
  thread_ = std::thread([this] { io_.run(); });
  EXPECT_NE(Get("/api/health").find("HTTP/1.1 200"), std::string::npos);
  EXPECT_NE(Get("/metrics").find("HTTP/1.1 404"), std::string::npos);
}

Result<AdminBind> AdminBindFrom(Config::Environment env, uint16_t default_port = 9080,
                                uint16_t public_port = 8080) {
  auto config = Config::FromEnvironment(std::move(env));
  if (!config.ok()) return config.status();
  return ReadAdminBind(*config, default_port, public_port);
}

TEST(AdminBindTest, LoopbackAndTheRolesPortByDefault) {
  auto bind = AdminBindFrom({{"TELOS_BIND", "0.0.0.0"}});
  ASSERT_TRUE(bind.ok()) << bind.status().ToString();
  EXPECT_EQ(bind->address, "127.0.0.1");  // the players' wildcard does not carry over
  EXPECT_EQ(bind->port, 9080);
  const HttpServerOptions options = AdminServerOptions(*bind);
  EXPECT_EQ(options.bind_address, "127.0.0.1");
  EXPECT_EQ(options.port, 9080);
}

TEST(AdminBindTest, AnOperatorMayChooseTheAddressAndPort) {
  auto bind = AdminBindFrom({{"TELOS_ADMIN_BIND", "10.1.2.3"}, {"TELOS_ADMIN_PORT", "9500"}});
  ASSERT_TRUE(bind.ok()) << bind.status().ToString();
  EXPECT_EQ(bind->address, "10.1.2.3");
  EXPECT_EQ(bind->port, 9500);
  bind = AdminBindFrom({{"TELOS_ADMIN_BIND", "::1"}, {"TELOS_ADMIN_PORT", "0"}}, 9080, 0);
  ASSERT_TRUE(bind.ok()) << bind.status().ToString();
  EXPECT_EQ(bind->address, "::1");
  EXPECT_EQ(bind->port, 0);
}

TEST(AdminBindTest, BadSettingsNameTheVariable) {
  for (const char* bad : {"localhost", "127.0.0.1:9080", "", "999.1.1.1"}) {
    auto bind = AdminBindFrom({{"TELOS_ADMIN_BIND", bad}});
    ASSERT_FALSE(bind.ok()) << bad;
    EXPECT_EQ(bind.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(bind.status().message().find("TELOS_ADMIN_BIND"), std::string::npos)
        << bind.status().message();
  }
  auto bind = AdminBindFrom({{"TELOS_ADMIN_PORT", "70000"}});
  ASSERT_FALSE(bind.ok());
  EXPECT_NE(bind.status().message().find("TELOS_ADMIN_PORT"), std::string::npos);
  bind = AdminBindFrom({{"TELOS_ADMIN_PORT", "8080"}});  // the public port
  ASSERT_FALSE(bind.ok());
  EXPECT_NE(bind.status().message().find("TELOS_ADMIN_PORT"), std::string::npos);
  EXPECT_NE(bind.status().message().find("TELOS_HTTP_PORT"), std::string::npos);
}

}  // namespace
}  // namespace telos::net
