// The Bus conformance suite on a real NATS, plus NATS-only behaviour: url checking, and a
// process that starts while NATS is down, keeps running through an outage and recovers on its
// own (on a private nats-server that the test starts, kills and restarts).
//
// Needs TELOS_NATS (eval "$(scripts/services env)"). Without it, or if that NATS does not
// answer, every test here fails: an integration test that silently skips proves nothing.
// Each test works under its own random subject prefix.
#include "telos/bus/nats_bus.h"

#include <atomic>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/sinks/ringbuffer_sink.h>

#include "bus_conformance.h"
#include "telos/base/log.h"
#include "telos_testing/private_server.h"

extern char** environ;

namespace telos::bus::testing {
namespace {

std::string RandomToken() {
  std::random_device rd;
  std::mt19937_64 gen((uint64_t{rd()} << 32) ^ rd());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 16; ++i) out += kHex[gen() % 16];
  return out;
}

Result<std::string> UrlFromEnv() {
  const char* url = std::getenv("TELOS_NATS");
  if (url == nullptr || *url == '\0') {
    return Status::FailedPrecondition(
        "TELOS_NATS is not set: start the services and run eval \"$(scripts/services env)\"");
  }
  return std::string(url);
}

// Short waits so that a test never stalls on a reconnect.
NatsBusOptions TestOptions(std::string url, std::string name) {
  NatsBusOptions options;
  options.url = std::move(url);
  options.name = std::move(name);
  options.reconnect_wait_ms = 50;
  options.connect_timeout_ms = 1'000;
  return options;
}

class NatsBackend {
 public:
  Status Ready() {
    Result<std::string> url = UrlFromEnv();
    if (!url.ok()) return url.status();
    for (const char* name : {"bus-test-a", "bus-test-b"}) {
      auto bus = NatsBus::Connect(TestOptions(*url, name), logger_);
      if (!bus.ok()) return bus.status();
      buses_.push_back(std::move(bus).value());
    }
    for (auto& bus : buses_) {
      if (!WaitFor([&] { return bus->connected(); })) {
        return Status::Unavailable("NATS at " + *url + " did not answer");
      }
    }
    return Status::Ok();
  }
  Bus& A() { return *buses_[0]; }
  Bus& B() { return *buses_[1]; }
  std::string Prefix() { return prefix_; }

 private:
  Logger logger_{"bus-test", LogLevel::kWarn};
  std::string prefix_ = "test." + RandomToken();
  std::vector<std::unique_ptr<NatsBus>> buses_;
};

INSTANTIATE_TYPED_TEST_SUITE_P(Nats, BusConformance, NatsBackend);

TEST(NatsBus, MalformedUrlsAreInvalidArgument) {
  Logger logger("bus-test", LogLevel::kWarn);
  for (const char* url :
       {"", "127.0.0.1:4222", "http://127.0.0.1:4222", "nats://", "nats://:4222",
        "nats://host:", "nats://host:0", "nats://host:99999", "nats://host:42x",
        "nats://ho st:4222", "nats://host:4222/path", "nats://a:1,", "nats://[::1"}) {
    auto bus = NatsBus::Connect(TestOptions(url, "bad"), logger);
    EXPECT_EQ(bus.status().code(), StatusCode::kInvalidArgument) << url;
  }
  NatsBusOptions zero = TestOptions("nats://127.0.0.1:4222", "bad");
  zero.reconnect_wait_ms = 0;
  EXPECT_EQ(NatsBus::Connect(zero, logger).status().code(), StatusCode::kInvalidArgument);
}

// nats.c 3.4 uses a subscription after freeing it when the read loop is handling a message for
// it while the application destroys it (nats-io/nats.c#638). NatsBus keeps each handle until a
// round trip proves the read loop has moved on. Before that, this crashed the release build
// within a few hundred rounds (and valgrind reported the use after free).
TEST(NatsBus, SubscriptionChurnWhileMessagesArriveIsSafe) {
  Result<std::string> url = UrlFromEnv();
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  Logger logger("bus-test", LogLevel::kError);
  auto publisher = NatsBus::Connect(TestOptions(*url, "churn-publisher"), logger);
  auto subscriber = NatsBus::Connect(TestOptions(*url, "churn-subscriber"), logger);
  ASSERT_TRUE(publisher.ok() && subscriber.ok());
  const std::string subject = "test." + RandomToken() + ".churn";
  std::atomic<bool> stop{false};
  std::thread flood([&] {
    const std::string payload(64 * 1024, 'x');
    while (!stop.load()) (void)(*publisher)->Publish(subject, payload);
  });
  constexpr int kRounds = 300;
  int heard_every_round = 0;
  for (int round = 0; round < kRounds; ++round) {
    std::atomic<int> heard{0};
    auto sub = MustSubscribe(**subscriber, subject, [&](const Message&) { heard.fetch_add(1); });
    if (!sub) break;
    if (WaitFor([&] { return heard.load() > 0; })) ++heard_every_round;
    sub.reset();  // while the flood keeps the read loop busy with this subject
  }
  stop = true;
  flood.join();
  EXPECT_EQ(heard_every_round, kRounds);

  // Let the subscriber read what the server still had queued for it before it closes: nats.c
  // 3.4 leaks its parser's buffer when a connection closes with a message half read. A request
  // to itself comes back only after everything queued before it.
  auto echo = MustSubscribe(**subscriber, subject + ".drain",
                            [&](const Message& m) { (void)(*subscriber)->Reply(m, "drained"); });
  ASSERT_TRUE(echo);
  auto drained = std::make_shared<Outcome>();
  (*subscriber)->Request(subject + ".drain", "", milliseconds(60'000), Capture(drained));
  ASSERT_TRUE(WaitFor([&] { return drained->Calls() == 1; }, milliseconds(65'000)));
  EXPECT_TRUE(drained->Get().ok()) << drained->Get().status().ToString();
}

// ------------------------------------------------------------------ outage

// Counts the captured log lines whose message is `msg`.
int CountLines(spdlog::sinks::ringbuffer_sink_mt& sink, const std::string& msg) {
  int n = 0;
  for (const std::string& line : sink.last_formatted()) {
    if (line.find("\"msg\":\"" + msg + "\"") != std::string::npos) ++n;
  }
  return n;
}

// Publishes on `from` until `inbox` has grown past `before`: across two connections nothing
// orders one client's (re)subscription before the other's publish.
bool PublishUntilHeard(Bus& from, const std::string& subject, const Inbox& inbox, size_t before) {
  return WaitFor([&] {
    (void)from.Publish(subject, "ping");
    return WaitFor([&] { return inbox.size() > before; }, milliseconds(50));
  });
}

TEST(NatsBusOutage, StartsWhileDownThenRidesThroughAnOutage) {
  const int port = ::telos::testing::FreeLoopbackPort();
  ASSERT_GT(port, 0);
  const std::string url = "nats://127.0.0.1:" + std::to_string(port);
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(256);
  Logger logger("bus-test", LogLevel::kInfo, sink);
  ::telos::testing::PrivateServer server(
      {"nats-server", "-a", "127.0.0.1", "-p", std::to_string(port), "-l", "/dev/null"});
  Transitions transitions;

  // Nothing listens yet: Connect still succeeds, promptly, with a bus that is not connected.
  const auto start = steady_clock::now();
  auto connected = NatsBus::Connect(TestOptions(url, "outage-subscriber"), logger);
  ASSERT_TRUE(connected.ok()) << connected.status().ToString();
  EXPECT_LT(steady_clock::now() - start, milliseconds(2'000));
  std::unique_ptr<NatsBus> bus = std::move(connected).value();
  bus->OnConnectionChange(transitions.Callback());
  EXPECT_FALSE(bus->connected());
  EXPECT_EQ(bus->Publish("outage.s", "x").code(), StatusCode::kUnavailable);
  auto refused = std::make_shared<Outcome>();
  bus->Request("outage.svc", "q", milliseconds(10'000), Capture(refused));
  ASSERT_TRUE(WaitFor([&] { return refused->Calls() == 1; }));
  EXPECT_EQ(refused->Code(), StatusCode::kUnavailable);
  EXPECT_EQ(CountLines(*sink, "nats unavailable"), 1);

  // Subscribing works while down.
  Inbox heard;
  auto sub = MustSubscribe(*bus, "outage.s", heard.Handler());
  ASSERT_TRUE(sub);

  ASSERT_TRUE(server.Start()) << "cannot start nats-server (is it installed?)";
  ASSERT_TRUE(WaitFor([&] { return bus->connected(); }))
      << "private nats-server on port " << port << " never answered";
  ASSERT_TRUE(WaitFor([&] { return transitions.seen() == std::vector<bool>{true}; }));
  EXPECT_EQ(CountLines(*sink, "nats connected"), 1);

  // The subscription made while down was registered when the bus connected.
  auto publisher = NatsBus::Connect(TestOptions(url, "outage-publisher"), logger);
  ASSERT_TRUE(publisher.ok()) << publisher.status().ToString();
  ASSERT_TRUE(WaitFor([&] { return (*publisher)->connected(); }));
  ASSERT_TRUE(PublishUntilHeard(**publisher, "outage.s", heard, 0));

  // The server dies: the bus notices, says so once, and refuses to send.
  server.Kill();
  ASSERT_TRUE(WaitFor([&] { return !bus->connected(); }));
  ASSERT_TRUE(WaitFor([&] { return transitions.seen() == std::vector<bool>{true, false}; }));
  EXPECT_EQ(bus->Publish("outage.s", "x").code(), StatusCode::kUnavailable);
  auto during = std::make_shared<Outcome>();
  bus->Request("outage.svc", "q", milliseconds(10'000), Capture(during));
  ASSERT_TRUE(WaitFor([&] { return during->Calls() == 1; }));
  EXPECT_EQ(during->Code(), StatusCode::kUnavailable);

  // Back on the same port: both clients reconnect on their own, and the subscription from
  // before the outage receives again.
  ASSERT_TRUE(server.Start());
  ASSERT_TRUE(WaitFor([&] { return bus->connected() && (*publisher)->connected(); }));
  ASSERT_TRUE(WaitFor([&] { return transitions.seen() == std::vector<bool>{true, false, true}; }));
  const size_t before = heard.size();
  ASSERT_TRUE(PublishUntilHeard(**publisher, "outage.s", heard, before));
  EXPECT_EQ(heard.messages().back().subject, "outage.s");

  // Requests work again too.
  auto svc = MustSubscribe(**publisher, "outage.svc",
                           [&](const Message& m) { (void)(*publisher)->Reply(m, "back"); });
  ASSERT_TRUE(svc);
  auto answered = std::make_shared<Outcome>();
  bus->Request("outage.svc", "q", milliseconds(10'000), Capture(answered));
  ASSERT_TRUE(WaitFor([&] { return answered->Calls() == 1; }));
  ASSERT_TRUE(answered->Get().ok()) << answered->Get().status().ToString();
  EXPECT_EQ(*answered->Get(), "back");

  // One "unavailable" per outage (the start counts as one), however many retries each took.
  EXPECT_EQ(CountLines(*sink, "nats unavailable"), 2 + /*the publisher's outage*/ 1);
  EXPECT_EQ(CountLines(*sink, "nats reconnected"), 2);  // both clients
  svc.reset();
  sub.reset();
}

TEST(NatsBusOutage, ABusThatNeverConnectedShutsDownPromptly) {
  const int port = ::telos::testing::FreeLoopbackPort();
  ASSERT_GT(port, 0);
  Logger logger("bus-test", LogLevel::kError);
  auto bus =
      NatsBus::Connect(TestOptions("nats://127.0.0.1:" + std::to_string(port), "never"), logger);
  ASSERT_TRUE(bus.ok()) << bus.status().ToString();
  Inbox heard;
  auto sub = MustSubscribe(**bus, "never.s", heard.Handler());
  ASSERT_TRUE(sub);
  const auto start = steady_clock::now();
  bus->reset();
  EXPECT_LT(steady_clock::now() - start, milliseconds(5'000));
  sub.reset();  // after its bus: does nothing
  EXPECT_EQ(heard.size(), 0u);
}

TEST(NatsBus, DestructionCancelsWaitingRequestsExactlyOnce) {
  Result<std::string> url = UrlFromEnv();
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  Logger logger("bus-test", LogLevel::kWarn);
  const std::string subject = "test." + RandomToken() + ".mute";
  auto server = NatsBus::Connect(TestOptions(*url, "server"), logger);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  Inbox mute;
  auto sub = MustSubscribe(**server, subject, mute.Handler());
  ASSERT_TRUE(sub);
  std::vector<std::shared_ptr<Outcome>> outcomes;
  {
    auto client = NatsBus::Connect(TestOptions(*url, "client"), logger);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    ASSERT_TRUE(WaitFor([&] { return (*client)->connected(); }));
    for (int i = 0; i < 10; ++i) {
      outcomes.push_back(std::make_shared<Outcome>());
      (*client)->Request(subject, "q", milliseconds(60'000), Capture(outcomes.back()));
    }
    ASSERT_TRUE(mute.WaitForCount(10));
  }
  for (const auto& o : outcomes) {
    ASSERT_EQ(o->Calls(), 1);  // completed before the destructor returned
    EXPECT_EQ(o->Code(), StatusCode::kCancelled);
  }
  for (const Message& m : mute.messages()) EXPECT_TRUE((*server)->Reply(m, "late").ok());
}

}  // namespace
}  // namespace telos::bus::testing
