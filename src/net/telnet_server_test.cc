#include "telos/net/telnet_server.h"

#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <random>
#include <thread>

namespace telos::net {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

// Echoes every line back as "you said: <line>", "flood" sends a lot of output.
class EchoHandler final : public TerminalHandler {
 public:
  EchoHandler(std::shared_ptr<Terminal> t, std::atomic<int>& closed) : t_(t), closed_(closed) {
    t_->SendText("welcome\n");
  }
  void OnLine(std::string line, bool truncated) override {
    if (line == "flood") {  // 24 MB: more than loopback's socket buffers hold
      for (int i = 0; i < 24000; ++i) t_->SendText(std::string(1000, 'f') + "\n");
      return;
    }
    if (line == "batch") {
      TerminalOutput out;
      out.text = "batched text\n";
      out.data.emplace_back("Char.Vitals", "{\"hp\":1}");  // sent once GMCP is on
      out.prompt = "> ";
      t_->SendOutput(std::move(out));
      return;
    }
    if (line == "info") {
      const TerminalInfo info = t_->Info();
      t_->SendText("info " + info.client + " " + info.terminal_type + " " + info.charset + " " +
                   std::string(ColourDepthName(info.colour_depth)) + "\n");
      return;
    }
    if (line == "plain") {  // the player turned colour off
      t_->SetColourDepth(ColourDepth::kNone);
      t_->SendText("\x1b[31mred\x1b[0m\n");
      return;
    }
    if (line == "bye") {
      t_->Close("farewell");
      return;
    }
    t_->SendText("you said: " + line + (truncated ? " (cut)" : "") + "\n");
  }
  void OnData(std::string package, std::string) override { t_->SendText("data " + package + "\n"); }
  void OnResize(uint16_t w, uint16_t h) override {
    t_->SendText("size " + std::to_string(w) + "x" + std::to_string(h) + "\n");
  }
  void OnClosed(std::string) override { ++closed_; }

 private:
  std::shared_ptr<Terminal> t_;
  std::atomic<int>& closed_;
};

// A blocking test client with a deadline on every read.
class Client {
 public:
  explicit Client(uint16_t port) : socket_(io_) {
    socket_.connect({asio::ip::make_address("127.0.0.1"), port});
    socket_.non_blocking(true);
  }
  void Send(const std::string& bytes) {
    socket_.non_blocking(false);
    asio::write(socket_, asio::buffer(bytes));
    socket_.non_blocking(true);
  }
  // Reads until `needle` has arrived (true) or the deadline passes / the server closes (false).
  bool WaitFor(const std::string& needle, std::chrono::milliseconds timeout = 5000ms) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (received_.find(needle) == std::string::npos) {
      if (std::chrono::steady_clock::now() > deadline || !Pump()) return false;
    }
    return true;
  }
  // Reads until the server closes the connection; false on timeout.
  bool WaitClosed(std::chrono::milliseconds timeout = 5000ms) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (!Pump()) return true;
    }
    return false;
  }
  const std::string& received() const { return received_; }

 private:
  bool Pump() {
    char buf[65536];
    boost::system::error_code ec;
    const size_t n = socket_.read_some(asio::buffer(buf), ec);
    if (ec == asio::error::would_block) {
      std::this_thread::sleep_for(1ms);  // a poll interval, not a wait for an event
      return true;
    }
    if (ec) return false;
    received_.append(buf, n);
    return true;
  }
  asio::io_context io_;
  tcp::socket socket_;
  std::string received_;
};

class TelnetServerTest : public ::testing::Test {
 protected:
  void StartServer(TelnetServerOptions options = {}) {
    options.mssp = [] {
      return std::vector<std::pair<std::string, std::string>>{{"NAME", "TelosMUD"}};
    };
    server_ = std::make_unique<TelnetServer>(
        io_, options,
        [this](std::shared_ptr<Terminal> t) { return std::make_unique<EchoHandler>(t, closed_); },
        clock_, log_, metrics_);
    auto port = server_->Start();
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    port_ = *port;
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
  }
  void TearDown() override {
    if (server_) server_->Stop();
    work_.reset();
    io_.stop();
    for (auto& t : threads_) t.join();
  }
  bool WaitUntil(const std::function<bool()>& cond, std::chrono::milliseconds timeout = 5000ms) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!cond()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(1ms);
    }
    return true;
  }

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
  SystemClock clock_;
  Logger log_{"test", LogLevel::kError};
  Metrics metrics_;
  std::unique_ptr<TelnetServer> server_;
  std::vector<std::thread> threads_;
  std::atomic<int> closed_{0};
  uint16_t port_ = 0;
};

TEST_F(TelnetServerTest, GreetsNegotiatesAndEchoesLines) {
  StartServer();
  Client c(port_);
  ASSERT_TRUE(c.WaitFor("welcome\r\n"));
  EXPECT_NE(c.received().find(telnet::EncodeNegotiation(telnet::kDo, telnet::kOptWindowSize)),
            std::string::npos);
  EXPECT_NE(c.received().find(telnet::EncodeNegotiation(telnet::kWill, telnet::kOptGmcp)),
            std::string::npos);
  c.Send("look\r\n");
  ASSERT_TRUE(c.WaitFor("you said: look\r\n"));
  // NAWS arrives as a resize.
  c.Send(telnet::EncodeNegotiation(telnet::kWill, telnet::kOptWindowSize) +
         telnet::EncodeSubnegotiation(telnet::kOptWindowSize, std::string("\0\x64\0\x1e", 4)));
  ASSERT_TRUE(c.WaitFor("size 100x30"));
  c.Send("bye\n");
  EXPECT_TRUE(c.WaitFor("farewell\r\n"));
  EXPECT_TRUE(c.WaitClosed());
  EXPECT_TRUE(WaitUntil([&] { return closed_ == 1; }));
}

TEST_F(TelnetServerTest, MsspCarriesTheStandardVariables) {
  TelnetServerOptions options;
  options.mssp_settings.contact = "admin@example.org";
  StartServer(options);
  Client c(port_);
  ASSERT_TRUE(c.WaitFor("welcome\r\n"));
  c.Send(telnet::EncodeNegotiation(telnet::kDo, telnet::kOptMssp));
  const auto var = [](std::string_view name, std::string_view value) {
    std::string out(1, char(telnet::kMsspVar));
    out += name;
    out.push_back(char(telnet::kMsspVal));
    out += value;
    return out;
  };
  ASSERT_TRUE(c.WaitFor(var("PORT", std::to_string(port_))));
  EXPECT_NE(c.received().find(var("NAME", "TelosMUD")), std::string::npos);
  EXPECT_NE(c.received().find(var("CONTACT", "admin@example.org")), std::string::npos);
  EXPECT_NE(c.received().find(std::string(1, char(telnet::kMsspVar)) + "UPTIME"),
            std::string::npos);
}

TEST_F(TelnetServerTest, TheSessionSeesWhatTheClientSaidAndMayOverrideColour) {
  StartServer();
  Client c(port_);
  ASSERT_TRUE(c.WaitFor("welcome\r\n"));
  const auto is = [](std::string_view v) {
    return telnet::EncodeSubnegotiation(telnet::kOptTerminalType,
                                        std::string(1, char(telnet::kTtypeIs)) + std::string(v));
  };
  c.Send(telnet::EncodeNegotiation(telnet::kWill, telnet::kOptTerminalType) + is("MUDLET") +
         is("XTERM-256COLOR") + is("MTTS 9") + "info\r\n");
  ASSERT_TRUE(c.WaitFor("info MUDLET XTERM-256COLOR ISO-8859-1 256\r\n"));
  c.Send("plain\r\n");
  ASSERT_TRUE(c.WaitFor("red\r\n"));
  EXPECT_EQ(c.received().find("\x1b[31mred"), std::string::npos);
}

TEST_F(TelnetServerTest, OverlongLineIsCutAndFlagged) {
  TelnetServerOptions options;
  options.line_bytes_max = 16;
  StartServer(options);
  Client c(port_);
  c.Send(std::string(100000, 'a') + "\n");
  EXPECT_TRUE(c.WaitFor("you said: " + std::string(16, 'a') + " (cut)"));
}

TEST_F(TelnetServerTest, RateLimitDropsExcessLinesWithANotice) {
  TelnetServerOptions options;
  options.input_lines_per_second = 0.001;
  options.input_lines_burst = 3;
  StartServer(options);
  Client c(port_);
  c.Send("1\n2\n3\n4\n5\n");
  ASSERT_TRUE(c.WaitFor("faster than the world can listen"));
  EXPECT_NE(c.received().find("you said: 3"), std::string::npos);
  EXPECT_EQ(c.received().find("you said: 4"), std::string::npos);
  EXPECT_GE(metrics_.RenderText().find("telos_input_lines_dropped_total 2"), 0u);
}

TEST_F(TelnetServerTest, ConnectionsPerAddressAreCapped) {
  TelnetServerOptions options;
  options.connections_per_address_max = 2;
  StartServer(options);
  Client a(port_), b(port_);
  ASSERT_TRUE(a.WaitFor("welcome"));
  ASSERT_TRUE(b.WaitFor("welcome"));
  Client refused(port_);
  EXPECT_TRUE(refused.WaitFor("Too many connections"));
  EXPECT_TRUE(refused.WaitClosed());
  a.Send("still here\n");
  EXPECT_TRUE(a.WaitFor("you said: still here"));
}

TEST_F(TelnetServerTest, ClientThatStopsReadingIsShedOthersUnaffected) {
  TelnetServerOptions options;
  options.pending_write_bytes_max = 256 * 1024;
  StartServer(options);
  Client slow(port_);
  ASSERT_TRUE(slow.WaitFor("welcome"));
  slow.Send("flood\n");  // more output than loopback buffers hold, to a client that never reads
  EXPECT_TRUE(WaitUntil([&] {
    return metrics_.RenderText().find("telos_telnet_shed_total 1") != std::string::npos;
  }));
  Client other(port_);
  other.Send("hello\n");
  EXPECT_TRUE(other.WaitFor("you said: hello"));
}

TEST_F(TelnetServerTest, ClientWhoseWriteStallsPastTheTimeoutIsCutOff) {
  TelnetServerOptions options;
  options.pending_write_bytes_max = 64 * 1024 * 1024;  // the byte cap never fires here
  options.write_timeout_ms = 200;
  StartServer(options);
  Client stuck(port_);
  ASSERT_TRUE(stuck.WaitFor("welcome"));
  stuck.Send("flood\n");  // fills the socket buffers; the client never reads again
  EXPECT_TRUE(WaitUntil([&] { return closed_ == 1; }));
  EXPECT_EQ(metrics_.RenderText().find("telos_telnet_shed_total 1"), std::string::npos);
  Client other(port_);
  other.Send("hello\n");
  EXPECT_TRUE(other.WaitFor("you said: hello"));
}

TEST_F(TelnetServerTest, OutputFlushKeepsTextDataAndPromptInOrder) {
  StartServer();
  Client c(port_);
  ASSERT_TRUE(c.WaitFor("welcome"));
  c.Send(std::string("\xff\xfd\xc9", 3));  // IAC DO GMCP: data is sent from now on
  c.Send("batch\n");
  ASSERT_TRUE(c.WaitFor("> "));
  const std::string& got = c.received();
  const size_t text = got.find("batched text\r\n");
  const size_t data = got.find("Char.Vitals {\"hp\":1}", text);
  const size_t prompt = got.find("> ", data);
  ASSERT_NE(text, std::string::npos);
  ASSERT_NE(data, std::string::npos);
  EXPECT_NE(prompt, std::string::npos);
}

TEST_F(TelnetServerTest, IdleClientIsDisconnected) {
  TelnetServerOptions options;
  options.idle_timeout_ms = 150;
  StartServer(options);
  Client c(port_);
  EXPECT_TRUE(c.WaitFor("idle too long"));
  EXPECT_TRUE(c.WaitClosed());
}

TEST_F(TelnetServerTest, GarbageBytesNeverHurtTheServer) {
  TelnetServerOptions options;
  options.input_lines_burst = 1e9;  // random bytes hold many line ends
  StartServer(options);
  std::mt19937 rng(99);
  for (int round = 0; round < 20; ++round) {
    Client c(port_);
    std::string junk(1 + rng() % 20000, '\0');
    for (auto& ch : junk) ch = static_cast<char>(rng());
    // IAC SE twice closes any subnegotiation the junk left open, whatever state it ended in.
    c.Send(junk + "\xFF\xF0\xFF\xF0\r\nping\n");
    EXPECT_TRUE(c.WaitFor("you said: ping")) << "round " << round;
  }
}

TEST_F(TelnetServerTest, StopClosesEveryConnection) {
  StartServer();
  Client a(port_), b(port_);
  ASSERT_TRUE(a.WaitFor("welcome"));
  ASSERT_TRUE(b.WaitFor("welcome"));
  server_->Stop();
  EXPECT_EQ(server_->connections(), 0u);
  EXPECT_TRUE(a.WaitClosed());
  EXPECT_TRUE(b.WaitClosed());
  EXPECT_EQ(closed_, 2);
}

}  // namespace
}  // namespace telos::net
