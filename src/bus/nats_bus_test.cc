// The Bus conformance suite on a real NATS, plus NATS-only behaviour: url checking, and a
// process that starts while NATS is down, keeps running through an outage and recovers on its
// own (on a private nats-server that the test starts, kills and restarts).
//
// Needs TELOS_NATS (eval "$(scripts/services env)"). Without it, or if that NATS does not
// answer, every test here fails: an integration test that silently skips proves nothing.
// Each test works under its own random subject prefix.
#include "telos/bus/nats_bus.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <spdlog/sinks/ringbuffer_sink.h>

#include "bus_conformance.h"
#include "telos/base/log.h"
#include "telos/bus/jetstream.h"
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

// ------------------------------------------------------------------ credentials

TEST(NatsBus, CredentialsAreCheckedBeforeConnecting) {
  Logger logger("bus-test", LogLevel::kError);
  const auto with = [](NatsCredentials c) {
    NatsBusOptions o = TestOptions("nats://127.0.0.1:4222", "creds");
    o.credentials = std::move(c);
    return o;
  };
  for (const NatsCredentials& bad : {
           NatsCredentials{.user = "telos-world"},                        // no password
           NatsCredentials{.password = "pw"},                             // no user
           NatsCredentials{.user = "u", .password = "p", .token = "t"},   // two kinds
           NatsCredentials{.token = "t", .creds_file = "/etc/hostname"},  //
           NatsCredentials{.nkey = "UABC"},                               // no seed file
           NatsCredentials{.nkey_seed_file = "/etc/hostname"},            // no nkey
           NatsCredentials{.creds_file = "/nonexistent/world.creds"},     // unreadable
           NatsCredentials{.nkey = "UABC", .nkey_seed_file = "/nonexistent/world.nk"},
       }) {
    auto bus = NatsBus::Connect(with(bad), logger);
    EXPECT_EQ(bus.status().code(), StatusCode::kInvalidArgument);
    if (!bus.ok()) {
      EXPECT_EQ(bus.status().message().find("pw"), std::string::npos);
    }
  }
}

// deploy/nats/permissions.conf of the source tree this binary was built from: the first
// folder above the binary (build/<preset>/src/bus/) that holds it.
std::filesystem::path ShippedPermissionsFile() {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  for (; !ec && !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
    const auto candidate = dir / "deploy" / "nats" / "permissions.conf";
    if (std::filesystem::exists(candidate, ec)) return candidate;
  }
  return {};
}

// A private nats-server configured with deploy/nats/permissions.conf as shipped (copied beside
// a config that listens on a free port and includes it), its passwords in its environment.
class NatsPermissionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = ::telos::testing::FreeLoopbackPort();
    ASSERT_GT(port_, 0);
    dir_ = std::filesystem::temp_directory_path() /
           ("telos-nats-auth-" + std::to_string(::getpid()) + "-" + RandomToken());
    std::filesystem::create_directories(dir_);
    const std::filesystem::path example = ShippedPermissionsFile();
    ASSERT_FALSE(example.empty()) << "deploy/nats/permissions.conf not found above this binary";
    std::error_code ec;
    std::filesystem::copy_file(example, dir_ / "permissions.conf", ec);
    ASSERT_FALSE(ec) << "cannot copy " << example << ": " << ec.message();
    {
      std::ofstream conf(dir_ / "server.conf");
      // JetStream on, as the file asks of a fleet that stores game events.
      conf << "listen: 127.0.0.1:" << port_ << "\njetstream { store_dir: \""
           << (dir_ / "js").string() << "\" }\ninclude ./permissions.conf\n";
    }
    // nats-server reads the $TELOS_NATS_*_PASSWORD references from its environment, which it
    // inherits from this process.
    for (const auto& [name, value] :
         {std::pair{"TELOS_NATS_WORLD_1_PASSWORD", world_password_},
          std::pair{"TELOS_NATS_WORLD_2_PASSWORD", world2_password_},
          std::pair{"TELOS_NATS_DIRECTOR_PASSWORD", director_password_},
          std::pair{"TELOS_NATS_CTL_PASSWORD", ctl_password_},
          std::pair{"TELOS_NATS_GATE_PASSWORD", gate_password_},
          std::pair{"TELOS_NATS_ACCOUNT_PASSWORD", account_password_}}) {
      ASSERT_EQ(::setenv(name, value.c_str(), 1), 0);
    }
    server_ = std::make_unique<::telos::testing::PrivateServer>(std::vector<std::string>{
        "nats-server", "-c", (dir_ / "server.conf").string(), "-l", "/dev/null"});
    ASSERT_TRUE(server_->Start()) << "cannot start nats-server (is it installed?)";
  }

  void TearDown() override {
    server_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::string Url() const { return "nats://127.0.0.1:" + std::to_string(port_); }

  Result<std::unique_ptr<NatsBus>> Connect(const std::string& user, const std::string& password,
                                           Logger& logger) {
    NatsBusOptions o = TestOptions(Url(), user);
    o.credentials.user = user;
    o.credentials.password = password;
    return NatsBus::Connect(o, logger);
  }

  // JetStream over the same users, once connected (calls fail at once while it is not).
  Result<std::unique_ptr<JetStreamStreams>> ConnectStreams(const std::string& user,
                                                           const std::string& password,
                                                           Logger& logger) {
    JetStreamOptions o;
    o.connection = TestOptions(Url(), user + "-js");
    o.connection.credentials.user = user;
    o.connection.credentials.password = password;
    o.call_timeout_ms = 1'000;  // a refused call is answered by nobody: it times out
    auto streams = JetStreamStreams::Connect(o, logger);
    if (streams.ok() && !WaitFor([&] { return (*streams)->connected(); })) {
      return Status::Unavailable(user + " cannot log in to JetStream");
    }
    return streams;
  }

  // Whether a captured log line holds `text` (and `also`, when given).
  static bool Logged(spdlog::sinks::ringbuffer_sink_mt& sink, const std::string& text,
                     const std::string& also = "") {
    for (const std::string& line : sink.last_formatted()) {
      if (line.find(text) != std::string::npos && line.find(also) != std::string::npos) {
        return true;
      }
    }
    return false;
  }

  // The server's refusal of `what` ("Publish", "Subscription") on `subject`, as the client logs
  // it (the log escapes the quotes around the subject).
  static bool Refused(spdlog::sinks::ringbuffer_sink_mt& sink, const std::string& what,
                      const std::string& subject) {
    return Logged(sink, "Permissions Violation for " + what + " to", subject);
  }

  int port_ = -1;
  std::filesystem::path dir_;
  std::string world_password_ = "world-" + RandomToken();  // telos-world-1's
  std::string world2_password_ = "world2-" + RandomToken();
  std::string director_password_ = "director-" + RandomToken();
  std::string ctl_password_ = "ctl-" + RandomToken();
  std::string gate_password_ = "gate-" + RandomToken();
  std::string account_password_ = "account-" + RandomToken();
  std::unique_ptr<::telos::testing::PrivateServer> server_;
};

TEST_F(NatsPermissionsTest, OnlyWorldsMaySpeakOnPlayerSubjects) {
  Logger world_log("bus-test", LogLevel::kError);
  auto gate_sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(64);
  Logger gate_log("bus-test", LogLevel::kWarn, gate_sink);
  auto host = Connect("telos-world-1", world_password_, world_log);
  auto asker = Connect("telos-world-1", world_password_, world_log);
  auto gate = Connect("telos-gate", gate_password_, gate_log);
  ASSERT_TRUE(host.ok() && asker.ok() && gate.ok());
  ASSERT_TRUE(WaitFor([&] {
    return (*host)->connected() && (*asker)->connected() && (*gate)->connected();
  })) << "the users of deploy/nats/permissions.conf cannot log in";

  // The world hosting Bob answers his tells, as FleetComms does.
  const std::string subject = "telos.telos.player.bob";
  std::atomic<int> heard{0};
  auto sub = MustSubscribe(**host, subject, [&](const Message& m) {
    heard.fetch_add(1);
    (void)(*host)->Reply(m, "told");
  });
  ASSERT_TRUE(sub);

  // The gate's publish is refused by the server, which says so to the gate.
  ASSERT_TRUE((*gate)->Publish(subject, "forged tell").ok());  // refusals are asynchronous
  ASSERT_TRUE(WaitFor([&] { return Logged(*gate_sink, "Permissions Violation for Publish"); }))
      << "the server did not refuse the gate's publish on " << subject;

  // A world's request goes through and is answered (allow_responses), and it is the first
  // message the host has heard: the forged one never arrived.
  auto told = std::make_shared<Outcome>();
  (*asker)->Request(subject, "tell", milliseconds(5'000), Capture(told));
  ASSERT_TRUE(WaitFor([&] { return told->Calls() == 1; }));
  ASSERT_TRUE(told->Get().ok()) << told->Get().status().ToString();
  EXPECT_EQ(*told->Get(), "told");
  EXPECT_EQ(heard.load(), 1);
}

// The subjects of the fleet, as their builders (fleet_comms, pack_reload, drain_target_messages,
// store/game_events.h) make them for the default namespace.
constexpr char kReloadSubject[] = "telos.telos.reload.world-1";
constexpr char kDrainTargetsSubject[] = "telos.telos.director.eu.drain-targets";
// world-1's boss kills: the source's token last, which only telos-world-1 may publish under.
constexpr char kGameEventSubject[] = "game.event.boss_5fkill.world_2d1";

// The director's EnsureGameEventStream, spelled out (the bus cannot depend on the director).
StreamSpec GameEventStream() {
  StreamSpec spec;
  spec.name = "GAME_EVENTS";
  spec.subjects = "game.event.>";
  return spec;
}

ConsumerSpec GameEventTally() {
  ConsumerSpec spec;
  spec.stream = "GAME_EVENTS";
  spec.durable = "director-tally";
  return spec;
}

// Sends a request and waits for its completion.
std::shared_ptr<Outcome> Ask(Bus& bus, const std::string& subject, const std::string& data) {
  auto outcome = std::make_shared<Outcome>();
  bus.Request(subject, data, milliseconds(2'000), Capture(outcome));
  EXPECT_TRUE(WaitFor([&] { return outcome->Calls() == 1; }));
  return outcome;
}

TEST_F(NatsPermissionsTest, WorldsPublishGameEventsAndCoordinateReloads) {
  Logger logger("bus-test", LogLevel::kError);
  auto director = ConnectStreams("telos-director", director_password_, logger);
  auto world_js = ConnectStreams("telos-world-1", world_password_, logger);
  auto host = Connect("telos-world-1", world_password_, logger);
  auto coordinator = Connect("telos-world-1", world_password_, logger);
  ASSERT_TRUE(director.ok() && world_js.ok() && host.ok() && coordinator.ok());
  ASSERT_TRUE(WaitFor([&] { return (*host)->connected() && (*coordinator)->connected(); }));

  // The director creates the stream; a world only publishes to it, and JetStream acks that.
  Status ensured = (*director)->EnsureStream(GameEventStream());
  ASSERT_TRUE(ensured.ok()) << ensured.ToString();
  auto stored = (*world_js)->Publish(kGameEventSubject, R"({"kind":"boss_kill"})", "world-1:1");
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->stream_sequence, 1u);
  // A world may not manage streams: not even look one up.
  EXPECT_FALSE((*world_js)->EnsureStream(GameEventStream()).ok());

  // A world given SIGHUP asks every world, the one hosting shard world-1 answers.
  auto sub = MustSubscribe(**host, kReloadSubject,
                           [&](const Message& m) { (void)(*host)->Reply(m, R"({"ok":true})"); });
  ASSERT_TRUE(sub);
  auto answer = Ask(**coordinator, kReloadSubject, R"({"op":"check","hash":"h"})");
  ASSERT_TRUE(answer->Get().ok()) << answer->Get().status().ToString();
  EXPECT_EQ(*answer->Get(), R"({"ok":true})");
}

// A world may publish game events only under its own source token, so it cannot speak for
// another world (the tally refuses a payload whose source is not its subject's).
TEST_F(NatsPermissionsTest, AWorldPublishesGameEventsOnlyUnderItsOwnSource) {
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(256);
  Logger logger("bus-test", LogLevel::kWarn, sink);
  auto director = ConnectStreams("telos-director", director_password_, logger);
  auto world1 = ConnectStreams("telos-world-1", world_password_, logger);
  auto world2 = ConnectStreams("telos-world-2", world2_password_, logger);
  ASSERT_TRUE(director.ok() && world1.ok() && world2.ok());
  ASSERT_TRUE((*director)->EnsureStream(GameEventStream()).ok());

  ASSERT_TRUE((*world1)->Publish(kGameEventSubject, "mine", "world-1:1").ok());
  ASSERT_TRUE((*world2)->Publish("game.event.boss_5fkill.world_2d2", "mine too", "world-2:1").ok());
  // world-2 under world-1's token, and both under a subject that names no source (the form of
  // earlier releases): refused by the server, so nothing is stored.
  EXPECT_FALSE((*world2)->Publish(kGameEventSubject, "forged", "world-1:99").ok());
  EXPECT_TRUE(Refused(*sink, "Publish", kGameEventSubject));
  EXPECT_FALSE((*world1)->Publish("game.event.boss_5fkill", "tokenless", "world-1:98").ok());
  EXPECT_TRUE(Refused(*sink, "Publish", "game.event.boss_5fkill\\\""));
  EXPECT_FALSE((*world1)->Publish("game.event.boss_5fkill.world_2d1.x", "deeper", "w:97").ok());
  // Published after every refusal: once it is consumed, anything stored was seen.
  ASSERT_TRUE((*world1)->Publish(kGameEventSubject, "sentinel", "world-1:2").ok());

  std::mutex mu;
  std::vector<std::string> seen;
  auto consumer = (*director)->Consume(GameEventTally(), [&](const DurableEvent& event) {
    std::lock_guard lock(mu);
    seen.push_back(event.subject + " " + event.data);
    return Disposition::kAck;
  });
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  ASSERT_TRUE(WaitFor([&] { return (*consumer)->counts().acked == 3; }));
  std::lock_guard lock(mu);
  EXPECT_EQ(seen, (std::vector<std::string>{"game.event.boss_5fkill.world_2d1 mine",
                                            "game.event.boss_5fkill.world_2d2 mine too",
                                            "game.event.boss_5fkill.world_2d1 sentinel"}));
}

TEST_F(NatsPermissionsTest, TheDirectorConsumesGameEventsAndAnswersDrainTargets) {
  Logger logger("bus-test", LogLevel::kError);
  auto director_js = ConnectStreams("telos-director", director_password_, logger);
  auto world_js = ConnectStreams("telos-world-1", world_password_, logger);
  auto director = Connect("telos-director", director_password_, logger);
  auto world = Connect("telos-world-1", world_password_, logger);
  ASSERT_TRUE(director_js.ok() && world_js.ok() && director.ok() && world.ok());
  ASSERT_TRUE(WaitFor([&] { return (*director)->connected() && (*world)->connected(); }));

  ASSERT_TRUE((*director_js)->EnsureStream(GameEventStream()).ok());
  ASSERT_TRUE((*world_js)->Publish(kGameEventSubject, "first", "world-1:1").ok());
  std::mutex mu;
  std::vector<std::string> seen;
  auto consumer = (*director_js)->Consume(GameEventTally(), [&](const DurableEvent& event) {
    std::lock_guard lock(mu);
    seen.push_back(event.subject + " " + event.data);
    return Disposition::kAck;
  });
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  // The ack is confirmed by the server before it counts.
  ASSERT_TRUE(WaitFor([&] { return (*consumer)->counts().acked == 1; }));
  {
    std::lock_guard lock(mu);
    EXPECT_EQ(seen, std::vector<std::string>{"game.event.boss_5fkill.world_2d1 first"});
  }

  // The leader answers a draining world.
  auto sub = MustSubscribe(**director, kDrainTargetsSubject, [&](const Message& m) {
    (void)(*director)->Reply(m, R"({"targets":[]})");
  });
  ASSERT_TRUE(sub);
  auto answer = Ask(**world, kDrainTargetsSubject, R"({"shard":"world-1"})");
  ASSERT_TRUE(answer->Get().ok()) << answer->Get().status().ToString();
  EXPECT_EQ(*answer->Get(), R"({"targets":[]})");
}

// The value of commbus_durable_parked_total{stream="GAME_EVENTS"} in `metrics` (0 if absent).
double ParkedIn(const Metrics& metrics) {
  const std::string text = metrics.RenderText();
  const std::string key = "telos_commbus_durable_parked_total{stream=\"GAME_EVENTS\"} ";
  const size_t at = text.find(key);
  return at == std::string::npos ? 0 : std::stod(text.substr(at + key.size()));
}

TEST_F(NatsPermissionsTest, TwoDirectorsCountAParkedGameEventOnceBetweenThem) {
  Logger logger("bus-test", LogLevel::kError);
  auto leader = ConnectStreams("telos-director", director_password_, logger);
  auto standby = ConnectStreams("telos-director", director_password_, logger);
  auto world_js = ConnectStreams("telos-world-1", world_password_, logger);
  ASSERT_TRUE(leader.ok() && standby.ok() && world_js.ok());
  // Both directors watch, as `telos director` does whether it leads or not.
  Metrics leader_metrics;
  Metrics standby_metrics;
  auto leader_watch = (*leader)->WatchParked("GAME_EVENTS", leader_metrics);
  auto standby_watch = (*standby)->WatchParked("GAME_EVENTS", standby_metrics);
  ASSERT_TRUE(leader_watch.ok()) << leader_watch.status().ToString();
  ASSERT_TRUE(standby_watch.ok()) << standby_watch.status().ToString();
  EXPECT_EQ((*leader)->WatchParked("GAME EVENTS", leader_metrics).status().code(),
            StatusCode::kInvalidArgument);

  ASSERT_TRUE((*leader)->EnsureStream(GameEventStream()).ok());
  ASSERT_TRUE((*world_js)->Publish(kGameEventSubject, "stuck", "world-1:1").ok());
  ASSERT_TRUE((*world_js)->Publish(kGameEventSubject, "fine", "world-1:2").ok());
  ConsumerSpec spec = GameEventTally();
  spec.max_deliveries = 2;
  spec.retry_delay_ms = 0;
  auto consumer = (*leader)->Consume(spec, [](const DurableEvent& event) {
    return event.data == "stuck" ? Disposition::kRetry : Disposition::kAck;
  });
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  // The server drops "stuck" after its second delivery, advises, and only then delivers "fine".
  ASSERT_TRUE(WaitFor([&] { return (*consumer)->counts().acked == 1; }));
  EXPECT_EQ((*consumer)->counts().parked, 1u);
  ASSERT_TRUE(WaitFor([&] { return ParkedIn(leader_metrics) + ParkedIn(standby_metrics) >= 1; }))
      << "no MAX_DELIVERIES advisory reached a director";
  // A second event parked: one more count in all, never one per director.
  ASSERT_TRUE((*world_js)->Publish(kGameEventSubject, "stuck", "world-1:3").ok());
  ASSERT_TRUE((*world_js)->Publish(kGameEventSubject, "fine", "world-1:4").ok());
  ASSERT_TRUE(WaitFor([&] { return (*consumer)->counts().acked == 2; }));
  ASSERT_TRUE(WaitFor([&] { return ParkedIn(leader_metrics) + ParkedIn(standby_metrics) >= 2; }));
  EXPECT_EQ(ParkedIn(leader_metrics) + ParkedIn(standby_metrics), 2.0);
}

// FleetComms' announce subject (fleet_messages.h) for the default namespace.
constexpr char kAnnounceSubject[] = "telos.telos.announce";

TEST_F(NatsPermissionsTest, WorldsAndTheDirectorAnnounceToEveryWorld) {
  Logger logger("bus-test", LogLevel::kError);
  auto gate_sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(64);
  Logger gate_log("bus-test", LogLevel::kWarn, gate_sink);
  auto listener = Connect("telos-world-1", world_password_, logger);
  auto world = Connect("telos-world-1", world_password_, logger);
  auto director = Connect("telos-director", director_password_, logger);
  auto gate = Connect("telos-gate", gate_password_, gate_log);
  ASSERT_TRUE(listener.ok() && world.ok() && director.ok() && gate.ok());
  ASSERT_TRUE(WaitFor([&] {
    return (*listener)->connected() && (*world)->connected() && (*director)->connected() &&
           (*gate)->connected();
  }));
  std::mutex mu;
  std::vector<std::string> heard;
  auto sub = MustSubscribe(**listener, kAnnounceSubject, [&](const Message& m) {
    std::lock_guard lock(mu);
    heard.push_back(m.data);
  });
  ASSERT_TRUE(sub);

  // A forged announcement from a gate is refused; a world's and the director's arrive, in order
  // on one connection each, so both being heard (and nothing else) is the whole check.
  ASSERT_TRUE((*gate)->Publish(kAnnounceSubject, "forged").ok());
  ASSERT_TRUE(WaitFor([&] { return Refused(*gate_sink, "Publish", kAnnounceSubject); }));
  ASSERT_TRUE((*world)->Publish(kAnnounceSubject, "from a world").ok());
  ASSERT_TRUE((*director)->Publish(kAnnounceSubject, "from the director").ok());
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard lock(mu);
    return heard.size() >= 2;
  }));
  std::lock_guard lock(mu);
  std::vector<std::string> sorted = heard;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<std::string>{"from a world", "from the director"}));
}

TEST_F(NatsPermissionsTest, CtlSendsReloadRequestsAndNothingElse) {
  Logger logger("bus-test", LogLevel::kError);
  auto ctl_sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(64);
  Logger ctl_log("bus-test", LogLevel::kWarn, ctl_sink);
  auto host = Connect("telos-world-1", world_password_, logger);
  auto ctl = Connect("telos-ctl", ctl_password_, ctl_log);
  auto ctl_js = ConnectStreams("telos-ctl", ctl_password_, ctl_log);
  auto director_js = ConnectStreams("telos-director", director_password_, logger);
  ASSERT_TRUE(host.ok() && ctl.ok() && ctl_js.ok() && director_js.ok());
  ASSERT_TRUE(WaitFor([&] { return (*host)->connected() && (*ctl)->connected(); }));

  auto reload = MustSubscribe(**host, kReloadSubject,
                              [&](const Message& m) { (void)(*host)->Reply(m, "applied"); });
  Inbox bob;
  auto player = MustSubscribe(**host, "telos.telos.player.bob", bob.Handler());
  ASSERT_TRUE(reload && player);

  auto answer = Ask(**ctl, kReloadSubject, R"({"op":"apply","hash":"h"})");
  ASSERT_TRUE(answer->Get().ok()) << answer->Get().status().ToString();
  EXPECT_EQ(*answer->Get(), "applied");

  // A forged tell is refused by the server; the first thing Bob hears is a world's sentinel.
  ASSERT_TRUE((*ctl)->Publish("telos.telos.player.bob", "forged").ok());
  ASSERT_TRUE(WaitFor([&] { return Refused(*ctl_sink, "Publish", "telos.telos.player.bob"); }));
  ASSERT_TRUE((*host)->Publish("telos.telos.player.bob", "sentinel").ok());
  ASSERT_TRUE(bob.WaitForCount(1));
  EXPECT_EQ(bob.datas(), std::vector<std::string>{"sentinel"});

  // Nor may it store a game event, though the stream exists.
  ASSERT_TRUE((*director_js)->EnsureStream(GameEventStream()).ok());
  EXPECT_FALSE((*ctl_js)->Publish(kGameEventSubject, "forged", "ctl:1").ok());
  EXPECT_TRUE(Refused(*ctl_sink, "Publish", kGameEventSubject));
}

TEST_F(NatsPermissionsTest, GatesMayDoNoneOfIt) {
  Logger logger("bus-test", LogLevel::kError);
  auto gate_sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(256);
  Logger gate_log("bus-test", LogLevel::kWarn, gate_sink);
  auto gate = Connect("telos-gate", gate_password_, gate_log);
  auto gate_js = ConnectStreams("telos-gate", gate_password_, gate_log);
  auto director_js = ConnectStreams("telos-director", director_password_, logger);
  auto world = Connect("telos-world-1", world_password_, logger);
  ASSERT_TRUE(gate.ok() && gate_js.ok() && director_js.ok() && world.ok());
  ASSERT_TRUE(WaitFor([&] { return (*gate)->connected() && (*world)->connected(); }));
  ASSERT_TRUE((*director_js)->EnsureStream(GameEventStream()).ok());

  // No reload request ...
  EXPECT_FALSE(Ask(**gate, kReloadSubject, R"({"op":"apply","hash":"h"})")->Get().ok());
  EXPECT_TRUE(
      WaitFor([&] { return Refused(*gate_sink, "Publish", "telos.telos.reload.world-1"); }));
  // ... no game event, stored or consumed ...
  EXPECT_FALSE((*gate_js)->Publish(kGameEventSubject, "forged", "gate:1").ok());
  EXPECT_TRUE(Refused(*gate_sink, "Publish", kGameEventSubject));
  EXPECT_FALSE(
      (*gate_js)
          ->Consume(GameEventTally(), [](const DurableEvent&) { return Disposition::kAck; })
          .ok());
  // ... and no answering drain-target requests in the director's place.
  auto sub = (*gate)->Subscribe(kDrainTargetsSubject,
                                [&](const Message& m) { (void)(*gate)->Reply(m, "{}"); });
  EXPECT_TRUE(WaitFor([&] {
    return Refused(*gate_sink, "Subscription", "telos.telos.director.eu.drain-targets");
  }));
  EXPECT_FALSE(Ask(**world, kDrainTargetsSubject, R"({"shard":"world-1"})")->Get().ok());
}

TEST_F(NatsPermissionsTest, CredentialsInTheUrlWorkToo) {
  Logger logger("bus-test", LogLevel::kError);
  NatsBusOptions o = TestOptions(
      "nats://telos-world-1:" + world_password_ + "@127.0.0.1:" + std::to_string(port_), "url");
  auto bus = NatsBus::Connect(o, logger);
  ASSERT_TRUE(bus.ok()) << bus.status().ToString();
  EXPECT_TRUE(WaitFor([&] { return (*bus)->connected(); }));
}

// A refused login is an error at once, in the server's words, without the secret.
::testing::AssertionResult RefusedClearly(const Result<std::unique_ptr<NatsBus>>& bus,
                                          const std::string& secret) {
  if (bus.ok()) return ::testing::AssertionFailure() << "a bus came back";
  const std::string& message = bus.status().message();
  if (bus.status().code() != StatusCode::kPermissionDenied ||
      message.find("Authorization Violation") == std::string::npos) {
    return ::testing::AssertionFailure() << "refused unclearly: " << bus.status().ToString();
  }
  if (message.find(secret) != std::string::npos) {
    return ::testing::AssertionFailure() << "the secret is in " << message;
  }
  return ::testing::AssertionSuccess();
}

TEST_F(NatsPermissionsTest, AWrongPasswordIsRefusedClearly) {
  Logger logger("bus-test", LogLevel::kError);
  // The server must be up first, or the refusal would be an outage.
  auto good = Connect("telos-world-1", world_password_, logger);
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  ASSERT_TRUE(WaitFor([&] { return (*good)->connected(); }));
  EXPECT_TRUE(
      RefusedClearly(Connect("telos-world-1", "not-" + world_password_, logger), world_password_));
  // A gate's password does not open the world's user either.
  EXPECT_TRUE(RefusedClearly(Connect("telos-world-1", gate_password_, logger), gate_password_));
}

TEST(NatsBusToken, ATokenFromTheOptionsLogsIn) {
  const int port = ::telos::testing::FreeLoopbackPort();
  ASSERT_GT(port, 0);
  const std::string token = "token-" + RandomToken();
  ::telos::testing::PrivateServer server({"nats-server", "-a", "127.0.0.1", "-p",
                                          std::to_string(port), "--auth", token, "-l",
                                          "/dev/null"});
  ASSERT_TRUE(server.Start()) << "cannot start nats-server (is it installed?)";
  Logger logger("bus-test", LogLevel::kError);
  NatsBusOptions o = TestOptions("nats://127.0.0.1:" + std::to_string(port), "token");
  o.credentials.token = token;
  auto bus = NatsBus::Connect(o, logger);
  ASSERT_TRUE(bus.ok()) << bus.status().ToString();
  EXPECT_TRUE(WaitFor([&] { return (*bus)->connected(); }));
  o.credentials.token = "not-" + token;
  EXPECT_TRUE(RefusedClearly(NatsBus::Connect(o, logger), token));
}

}  // namespace
}  // namespace telos::bus::testing
