// The gate's login-and-play conversation against a fake terminal and a fake world link.
//
// Accounts are real (LocalAccountDesk over AccountService over an in-memory SQLite store, with
// the cheapest argon2 cost), because what a player is told on a wrong password or a taken name
// comes from there. Everything else the gate talks to is a fake the test drives by hand:
//   - FakeTerminal records what the gate writes (text, prompts, echo, GMCP, the close);
//   - FakeConnection stands for the transport: it feeds lines to the handler one at a time and
//     delivers OnClosed at most once, whether the client hung up or the gate closed it;
//   - FakeWorldLink records Enter/Input/Remove and lets the test speak as the world, through the
//     sink the gate handed to Enter (a `disconnect` output is the character quitting);
//   - blocking work (hashing, the store) waits in a queue the test drains, so every step runs
//     on the test thread in an order the test chooses.
// The gate's login and link-dead timers are asio steady timers on `io`, not the Clock, so the
// tests that need one to fire use a grace of a few milliseconds and pump `io` until a condition
// holds or a deadline passes; the others use a grace no test outlives.
#include "telos/gate/gate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "telos/account/account_desk.h"
#include "telos/account/account_service.h"
#include "telos/account/address_throttle.h"
#include "telos/account/passwords.h"
#include "telos/base/clock.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/gate/world_link.h"
#include "telos/net/terminal.h"
#include "telos/store/sqlite_store.h"
#include "telos/world/character_state.h"

namespace telos::gate {
namespace {

using namespace std::chrono_literals;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// A grace no test outlives: the character stays link-dead for as long as the test looks.
constexpr int64_t kLongGraceMs = 10 * 60 * 1000;
// A grace short enough to wait out: the timer really fires within the test.
constexpr int64_t kShortGraceMs = 20;
// How long a test waits for a timer before it gives up and fails.
constexpr auto kDeadline = 5s;
// The longest one wait on `io` blocks before the condition is checked again.
constexpr auto kPollSlice = 5ms;
// Rounds of the two-thread quit-and-hang-up race.
constexpr int kRaceRounds = 25;
// The address throttle must not get in the way of a test's deliberate wrong passwords.
constexpr size_t kAddressFailuresMax = 100;

constexpr char kAccount[] = "ada_l";
constexpr char kPassword[] = "difference engine";

world::Ref StartRoom() {
  return world::Ref{"lobby", "atrium"};
}

class FakeTerminal final : public net::Terminal {
 public:
  explicit FakeTerminal(std::string address) : address_(std::move(address)) {}

  void SendText(std::string text) override {
    std::lock_guard lock(mu_);
    screen_ += text;
  }
  void SendPrompt(std::string text) override {
    std::lock_guard lock(mu_);
    screen_ += text;
  }
  void SendData(std::string package, std::string json) override {
    std::lock_guard lock(mu_);
    data_.emplace_back(std::move(package), std::move(json));
  }
  void SetEcho(bool on) override {
    std::lock_guard lock(mu_);
    echo_changes_.push_back(on);
  }
  // A transport sends the first reason and ignores later calls; the count shows a double close.
  void Close(std::string reason) override {
    std::lock_guard lock(mu_);
    ++close_calls_;
    if (close_reason_) return;
    screen_ += reason + "\n";
    close_reason_ = std::move(reason);
  }
  net::TerminalInfo Info() const override {
    net::TerminalInfo info;
    info.transport = "fake";
    info.remote_address = address_;
    info.client = "gate_test";
    return info;
  }

  // Everything written since the last call.
  std::string TakeScreen() {
    std::lock_guard lock(mu_);
    std::string out = screen_.substr(taken_);
    taken_ = screen_.size();
    return out;
  }
  std::vector<bool> echo_changes() const {
    std::lock_guard lock(mu_);
    return echo_changes_;
  }
  std::vector<std::pair<std::string, std::string>> data() const {
    std::lock_guard lock(mu_);
    return data_;
  }
  std::optional<std::string> close_reason() const {
    std::lock_guard lock(mu_);
    return close_reason_;
  }
  int close_calls() const {
    std::lock_guard lock(mu_);
    return close_calls_;
  }

 private:
  const std::string address_;
  mutable std::mutex mu_;
  std::string screen_;                                     // guarded by mu_
  size_t taken_ = 0;                                       // guarded by mu_
  std::vector<bool> echo_changes_;                         // guarded by mu_
  std::vector<std::pair<std::string, std::string>> data_;  // guarded by mu_
  std::optional<std::string> close_reason_;                // guarded by mu_
  int close_calls_ = 0;                                    // guarded by mu_
};

// The transport's side of one connection. Its mutex plays the connection strand: the handler
// sees one call at a time, and OnClosed once, last.
class FakeConnection {
 public:
  FakeConnection(std::shared_ptr<FakeTerminal> terminal,
                 std::unique_ptr<net::TerminalHandler> handler)
      : terminal_(std::move(terminal)), handler_(std::move(handler)) {}

  void Type(std::string line) {
    std::lock_guard lock(mu_);
    if (closed_) return;
    handler_->OnLine(std::move(line), false);
  }
  // The client went away.
  void HangUp() {
    std::lock_guard lock(mu_);
    if (closed_) return;
    closed_ = true;
    handler_->OnClosed("connection reset by peer");
  }
  // Finishes a close the gate asked for; true if that delivered OnClosed just now.
  bool FinishServerClose() {
    if (!terminal_->close_reason()) return false;
    std::lock_guard lock(mu_);
    if (closed_) return false;
    closed_ = true;
    handler_->OnClosed("closed by the server");
    return true;
  }
  bool closed() const {
    std::lock_guard lock(mu_);
    return closed_;
  }
  FakeTerminal& terminal() { return *terminal_; }

 private:
  const std::shared_ptr<FakeTerminal> terminal_;
  mutable std::mutex mu_;
  std::unique_ptr<net::TerminalHandler> handler_;  // guarded by mu_
  bool closed_ = false;                            // guarded by mu_
};

class FakeWorldLink final : public WorldLink {
 public:
  Status Enter(EnterRequest request, std::shared_ptr<world::PlayerSink> sink) override {
    std::lock_guard lock(mu_);
    if (online_.count(request.name_key) != 0) {
      return Status::AlreadyExists(request.display_name + " is already in the world.");
    }
    online_.insert(request.name_key);
    sinks_[request.name_key] = std::move(sink);
    entered_.push_back(std::move(request));
    return Status::Ok();
  }
  Status Input(const std::string& name_key, std::string line) override {
    std::lock_guard lock(mu_);
    if (online_.count(name_key) == 0) return Status::NotFound("not online");
    inputs_.emplace_back(name_key, std::move(line));
    return Status::Ok();
  }
  // Takes the character out at once and, unless removals are held, says so at once too.
  void Remove(const std::string& name_key, std::function<void()> done) override {
    {
      std::lock_guard lock(mu_);
      removed_.push_back(name_key);
      online_.erase(name_key);
      if (hold_removals_) {
        held_removals_.push_back(std::move(done));
        return;
      }
    }
    done();
  }
  std::vector<world::WhoEntry> Who() const override {
    std::lock_guard lock(mu_);
    std::vector<world::WhoEntry> who;
    for (const auto& key : online_) who.push_back({key, 1, "lobby"});
    return who;
  }
  size_t online_count() const override {
    std::lock_guard lock(mu_);
    return online_.size();
  }

  // The world speaking to `name_key` through the sink of its latest Enter.
  void Deliver(const std::string& name_key, world::PlayerOutput output) {
    std::shared_ptr<world::PlayerSink> sink;
    {
      std::lock_guard lock(mu_);
      auto it = sinks_.find(name_key);
      ASSERT_NE(it, sinks_.end()) << name_key << " never entered";
      sink = it->second;
      // A zone lets a quitting character go before the gate hears the farewell.
      if (output.disconnect) online_.erase(name_key);
    }
    sink->Deliver(std::move(output));
  }
  void Say(const std::string& name_key, std::string_view line) {
    world::PlayerOutput output;
    output.AddLine(line);
    Deliver(name_key, std::move(output));
  }
  // The character typed "quit" and the world has saved it and let it go.
  void Quit(const std::string& name_key) {
    world::PlayerOutput output;
    output.AddLine("Farewell. Your progress has been saved.");
    output.disconnect = true;
    Deliver(name_key, std::move(output));
  }

  // From now on Remove keeps its `done` until CompleteRemovals, as a world slow to save would.
  void HoldRemovals() {
    std::lock_guard lock(mu_);
    hold_removals_ = true;
  }
  void CompleteRemovals() {
    std::vector<std::function<void()>> done;
    {
      std::lock_guard lock(mu_);
      done.swap(held_removals_);
    }
    for (auto& d : done) d();
  }

  std::vector<EnterRequest> entered() const {
    std::lock_guard lock(mu_);
    return entered_;
  }
  std::vector<std::pair<std::string, std::string>> inputs() const {
    std::lock_guard lock(mu_);
    return inputs_;
  }
  std::vector<std::string> removed() const {
    std::lock_guard lock(mu_);
    return removed_;
  }

 private:
  mutable std::mutex mu_;
  std::set<std::string> online_;                                     // guarded by mu_
  std::map<std::string, std::shared_ptr<world::PlayerSink>> sinks_;  // guarded by mu_
  std::vector<EnterRequest> entered_;                                // guarded by mu_
  std::vector<std::pair<std::string, std::string>> inputs_;          // guarded by mu_
  std::vector<std::string> removed_;                                 // guarded by mu_
  bool hold_removals_ = false;                                       // guarded by mu_
  std::vector<std::function<void()>> held_removals_;                 // guarded by mu_
};

// Which characters the persistence layer believes are in play, and how often each left.
class FakeRegistrar final : public CharacterRegistrar {
 public:
  void Register(const std::string& name_key, const std::string&, int64_t, int64_t,
                int64_t) override {
    std::lock_guard lock(mu_);
    registered_.insert(name_key);
    ++registers_[name_key];
  }
  void Unregister(const std::string& name_key) override {
    std::lock_guard lock(mu_);
    registered_.erase(name_key);
    ++unregisters_[name_key];
  }
  void AwaitSaved(const std::string& name_key) override {
    std::lock_guard lock(mu_);
    ++awaits_[name_key];
  }

  bool registered(const std::string& key) const {
    std::lock_guard lock(mu_);
    return registered_.count(key) != 0;
  }
  int registers(const std::string& key) const { return Count(registers_, key); }
  int unregisters(const std::string& key) const { return Count(unregisters_, key); }
  int awaits(const std::string& key) const { return Count(awaits_, key); }

 private:
  int Count(const std::map<std::string, int>& counts, const std::string& key) const {
    std::lock_guard lock(mu_);
    auto it = counts.find(key);
    return it == counts.end() ? 0 : it->second;
  }
  mutable std::mutex mu_;
  std::set<std::string> registered_;        // guarded by mu_
  std::map<std::string, int> registers_;    // guarded by mu_
  std::map<std::string, int> unregisters_;  // guarded by mu_
  std::map<std::string, int> awaits_;       // guarded by mu_
};

class GateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = store::SqliteStore::Open({":memory:"}, clock_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
    service_ = std::make_unique<account::AccountService>(
        store_->accounts(), store_->characters(), hasher_, throttle_, clock_, log_, metrics_);
    desk_ = std::make_unique<account::LocalAccountDesk>(*service_);
  }

  // A transport closes every connection when it stops. Until then a playing session and its
  // character's binding hold each other, so a test that ends mid-play must hang up to free them.
  void TearDown() override {
    for (auto& connection : connections_) connection->HangUp();
    Pump();
  }

  void StartGate(int64_t link_dead_ms = kLongGraceMs, int64_t login_timeout_ms = kLongGraceMs) {
    GateOptions options;
    options.world_name = "Testmoor";
    options.start_room = StartRoom();
    options.link_dead_ms = link_dead_ms;
    options.login_timeout_ms = login_timeout_ms;
    options.login_attempts_per_connection = 3;
    BlockingRunner blocking = [this](std::function<void()> task) {
      std::lock_guard lock(blocking_mu_);
      blocking_.push_back(std::move(task));
    };
    gate_ = std::make_unique<Gate>(options, io_, std::move(blocking), *desk_, link_, &registrar_,
                                   clock_, log_, metrics_);
    factory_ = gate_->TerminalFactory();
  }

  // An account with `characters`, made beside the gate: the row straight into the store (no
  // creation throttles to spend), the characters through the service's naming rules.
  void SeedAccount(const std::vector<std::string>& characters) {
    auto hash = hasher_.Hash(kPassword);
    ASSERT_TRUE(hash.ok()) << hash.status().ToString();
    auto account = store_->accounts().Create(kAccount, *hash);
    ASSERT_TRUE(account.ok()) << account.status().ToString();
    for (const std::string& name : characters) {
      const world::CharacterState state = world::NewCharacter(name, StartRoom());
      auto created = service_->CreateCharacter(account->id, name, world::EncodeCharacter(state),
                                               StartRoom().zone, StartRoom().id);
      ASSERT_TRUE(created.ok()) << created.status().ToString();
    }
  }

  FakeConnection& Connect(const std::string& address = "10.0.0.1") {
    auto terminal = std::make_shared<FakeTerminal>(address);
    auto handler = factory_(terminal);
    connections_.push_back(std::make_unique<FakeConnection>(terminal, std::move(handler)));
    Pump();
    return *connections_.back();
  }

  void Type(FakeConnection& connection, const std::string& line) {
    connection.Type(line);
    Pump();
  }
  void LogIn(FakeConnection& connection) {
    Type(connection, kAccount);
    Type(connection, kPassword);
  }
  // Logs in and picks the first character on the menu.
  void Play(FakeConnection& connection) {
    LogIn(connection);
    Type(connection, "1");
  }

  // Runs whatever is ready (blocking tasks, io handlers, closes the gate asked for) until
  // nothing is. Never waits for a timer.
  void Pump() {
    for (;;) {
      bool progressed = false;
      for (;;) {
        std::function<void()> task;
        {
          std::lock_guard lock(blocking_mu_);
          if (blocking_.empty()) break;
          task = std::move(blocking_.front());
          blocking_.pop_front();
        }
        task();
        progressed = true;
      }
      io_.restart();
      if (io_.poll() > 0) progressed = true;
      for (auto& connection : connections_) {
        if (connection->FinishServerClose()) progressed = true;
      }
      if (!progressed) return;
    }
  }
  // Pumps, waiting on io's timers in between, until `done` holds or kDeadline passes.
  bool PumpUntil(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + kDeadline;
    for (;;) {
      Pump();
      if (done()) return true;
      if (std::chrono::steady_clock::now() >= deadline) return false;
      io_.restart();
      io_.run_one_for(kPollSlice);
    }
  }
  // Pumps for `duration`: for checks that something does not happen when a timer fires.
  void PumpFor(std::chrono::milliseconds duration) {
    const auto end = std::chrono::steady_clock::now() + duration;
    while (std::chrono::steady_clock::now() < end) {
      Pump();
      io_.restart();
      io_.run_one_for(kPollSlice);
    }
    Pump();
  }

  // A gauge or counter as /metrics shows it; -1 if it is not there.
  double Metric(const std::string& name) const {
    std::istringstream text(metrics_.RenderText());
    const std::string prefix = name + " ";
    for (std::string line; std::getline(text, line);) {
      if (line.rfind(prefix, 0) == 0) return std::stod(line.substr(prefix.size()));
    }
    return -1;
  }
  void ExpectGauges(double sessions, double players, double link_dead) {
    EXPECT_EQ(Metric("telos_gate_sessions"), sessions);
    EXPECT_EQ(Metric("telos_gate_players"), players);
    EXPECT_EQ(Metric("telos_gate_link_dead"), link_dead);
    EXPECT_EQ(gate_->sessions(), static_cast<size_t>(sessions));
    EXPECT_EQ(gate_->link_dead(), static_cast<size_t>(link_dead));
  }

  // Destroyed last: the gate's timers live on it.
  boost::asio::io_context io_;
  ManualClock clock_;
  Logger log_{"gate_test", LogLevel::kError};
  Metrics metrics_;
  std::unique_ptr<store::SqliteStore> store_;
  account::PasswordHasher hasher_{account::PasswordCost::ForTests()};
  account::AddressThrottle throttle_{clock_, kAddressFailuresMax, 60s};
  std::unique_ptr<account::AccountService> service_;
  std::unique_ptr<account::LocalAccountDesk> desk_;
  FakeWorldLink link_;
  FakeRegistrar registrar_;
  std::mutex blocking_mu_;
  std::deque<std::function<void()>> blocking_;  // guarded by blocking_mu_
  std::unique_ptr<Gate> gate_;
  net::TerminalHandlerFactory factory_;
  // Destroyed first: the transports go before the gate.
  std::vector<std::unique_ptr<FakeConnection>> connections_;
};

TEST_F(GateTest, NewAccountAndNewCharacterEnterTheWorld) {
  StartGate();
  FakeConnection& c = Connect();
  EXPECT_THAT(c.terminal().TakeScreen(),
              AllOf(HasSubstr("Testmoor"), HasSubstr("0 souls are abroad"),
                    HasSubstr("Enter your account name")));

  Type(c, "new");
  EXPECT_THAT(c.terminal().TakeScreen(), HasSubstr("Choose an account name"));
  Type(c, kAccount);
  EXPECT_THAT(c.terminal().TakeScreen(), HasSubstr("Choose a password"));
  EXPECT_EQ(c.terminal().echo_changes(), std::vector<bool>{false});  // the password is hidden
  Type(c, kPassword);
  EXPECT_THAT(c.terminal().TakeScreen(), HasSubstr("Repeat the password"));
  Type(c, kPassword);
  EXPECT_THAT(c.terminal().TakeScreen(), AllOf(HasSubstr("Your account \"ada_l\" is ready."),
                                               HasSubstr("You have no characters yet.")));
  EXPECT_EQ(c.terminal().echo_changes(), (std::vector<bool>{false, true}));
  EXPECT_TRUE(store_->accounts().Load(kAccount).ok());
  EXPECT_TRUE(link_.entered().empty());

  Type(c, "new lovelace");
  EXPECT_THAT(c.terminal().TakeScreen(),
              HasSubstr("Lovelace opens their eyes for the first time."));
  const auto entered = link_.entered();
  ASSERT_EQ(entered.size(), 1u);
  EXPECT_EQ(entered[0].name_key, "lovelace");
  EXPECT_EQ(entered[0].display_name, "Lovelace");
  EXPECT_EQ(entered[0].state.name, "Lovelace");
  EXPECT_EQ(entered[0].state.room, StartRoom());
  EXPECT_TRUE(entered[0].assertion.empty());  // in-process: the world loads the claimed row
  EXPECT_TRUE(registrar_.registered("lovelace"));
  ExpectGauges(1, 1, 0);

  // Playing: lines go to the world, and the world's output comes back with a prompt.
  Type(c, "look");
  ASSERT_FALSE(link_.inputs().empty());
  EXPECT_EQ(link_.inputs().back(), std::make_pair(std::string("lovelace"), std::string("look")));
  EXPECT_EQ(Metric("telos_commands_total"), 1);
  world::PlayerOutput output;
  output.AddLine("The Atrium");
  output.events.push_back({"Room.Info", R"({"id":"atrium"})"});
  link_.Deliver("lovelace", std::move(output));
  EXPECT_EQ(c.terminal().TakeScreen(), "The Atrium\n> ");
  ASSERT_EQ(c.terminal().data().size(), 1u);
  EXPECT_EQ(c.terminal().data()[0].first, "Room.Info");
}

TEST_F(GateTest, ReturningPlayerLogsInAndPlaysFromTheMenu) {
  SeedAccount({"Lovelace"});
  StartGate();
  FakeConnection& c = Connect();
  Type(c, kAccount);
  EXPECT_THAT(c.terminal().TakeScreen(), HasSubstr("Password:"));
  EXPECT_EQ(c.terminal().echo_changes(), std::vector<bool>{false});
  Type(c, kPassword);
  EXPECT_THAT(c.terminal().TakeScreen(),
              AllOf(HasSubstr("Your characters:"), HasSubstr("1. Lovelace (lobby)")));
  EXPECT_EQ(c.terminal().echo_changes(), (std::vector<bool>{false, true}));

  Type(c, "1");
  EXPECT_THAT(c.terminal().TakeScreen(), Not(HasSubstr("opens their eyes")));
  const auto entered = link_.entered();
  ASSERT_EQ(entered.size(), 1u);
  EXPECT_EQ(entered[0].name_key, "lovelace");
  EXPECT_EQ(registrar_.awaits("lovelace"), 1);  // a save left from the last visit lands first
  EXPECT_TRUE(registrar_.registered("lovelace"));
  ExpectGauges(1, 1, 0);
}

TEST_F(GateTest, WrongPasswordsAreRefusedUntilTheLimitClosesTheConnection) {
  SeedAccount({"Lovelace"});
  StartGate();
  FakeConnection& c = Connect();
  c.terminal().TakeScreen();
  for (int attempt = 1; attempt <= 3; ++attempt) {
    SCOPED_TRACE(attempt);
    Type(c, kAccount);
    Type(c, "not the password");
    const std::string screen = c.terminal().TakeScreen();
    // The same words AccountService uses for an unknown name: they do not say which was wrong.
    EXPECT_THAT(screen, HasSubstr("Wrong account name or password."));
    if (attempt < 3) {
      EXPECT_THAT(screen, HasSubstr("Enter your account name"));
      EXPECT_FALSE(c.closed());
    }
  }
  EXPECT_EQ(c.terminal().close_reason(), "Too many attempts. Goodbye.");
  EXPECT_TRUE(c.closed());
  // Echo is back on: the client is not left hiding what the player types next time.
  EXPECT_EQ(c.terminal().echo_changes(),
            (std::vector<bool>{false, true, false, true, false, true}));
  EXPECT_TRUE(link_.entered().empty());
  EXPECT_EQ(Metric("telos_gate_errors_total"), 3);
  ExpectGauges(0, 0, 0);
}

TEST_F(GateTest, AWrongPasswordCanBeFollowedByTheRightOne) {
  SeedAccount({"Lovelace"});
  StartGate();
  FakeConnection& c = Connect();
  Type(c, kAccount);
  Type(c, "not the password");
  EXPECT_THAT(c.terminal().TakeScreen(), HasSubstr("Wrong account name or password."));
  LogIn(c);
  EXPECT_THAT(c.terminal().TakeScreen(), HasSubstr("1. Lovelace (lobby)"));
  EXPECT_FALSE(c.closed());
}

TEST_F(GateTest, AnUnknownAccountNameIsToldSoBeforeAnyPassword) {
  StartGate();
  FakeConnection& c = Connect();
  c.terminal().TakeScreen();
  Type(c, "nobody");
  // The gate does say the account does not exist (it offers to make one); no password prompt.
  EXPECT_THAT(c.terminal().TakeScreen(),
              AllOf(HasSubstr("There is no account by that name."),
                    HasSubstr("Enter your account name"), Not(HasSubstr("Password:"))));
  EXPECT_TRUE(c.terminal().echo_changes().empty());
  EXPECT_FALSE(c.closed());
}

TEST_F(GateTest, ALoginTooSlowIsClosedByTheLoginTimer) {
  StartGate(kLongGraceMs, /*login_timeout_ms=*/kShortGraceMs);
  FakeConnection& c = Connect();
  ASSERT_TRUE(PumpUntil([&] { return c.closed(); }));
  EXPECT_EQ(c.terminal().close_reason(), "You took too long to log in. Goodbye.");
  ExpectGauges(0, 0, 0);
}

TEST_F(GateTest, ALoginAfterAHangUpResumesTheSameCharacterWithoutANewEnter) {
  SeedAccount({"Lovelace"});
  StartGate(kLongGraceMs);
  FakeConnection& first = Connect("10.0.0.1");
  Play(first);
  ASSERT_EQ(link_.entered().size(), 1u);
  first.terminal().TakeScreen();

  first.HangUp();
  Pump();
  ExpectGauges(0, 0, 1);
  EXPECT_TRUE(link_.removed().empty());  // link-dead, still in the world
  // What the world says to a link-dead character goes nowhere.
  link_.Say("lovelace", "A bat flits past.");
  EXPECT_EQ(first.terminal().TakeScreen(), "");

  FakeConnection& second = Connect("10.0.0.2");
  EXPECT_THAT(second.terminal().TakeScreen(), HasSubstr("1 soul is abroad"));
  Play(second);
  EXPECT_THAT(second.terminal().TakeScreen(), HasSubstr("You take hold of Lovelace again."));
  EXPECT_EQ(link_.entered().size(), 1u);
  EXPECT_TRUE(link_.removed().empty());
  ASSERT_FALSE(link_.inputs().empty());
  EXPECT_EQ(link_.inputs().back(), std::make_pair(std::string("lovelace"), std::string("look")));
  EXPECT_EQ(registrar_.registers("lovelace"), 1);
  EXPECT_EQ(registrar_.unregisters("lovelace"), 0);
  ExpectGauges(1, 1, 0);

  link_.Say("lovelace", "The Atrium");
  EXPECT_EQ(second.terminal().TakeScreen(), "The Atrium\n> ");
  EXPECT_EQ(first.terminal().TakeScreen(), "");
}

TEST_F(GateTest, AResumedCharacterOutlivesTheGraceItInterrupted) {
  SeedAccount({"Lovelace"});
  StartGate(kShortGraceMs);
  FakeConnection& first = Connect("10.0.0.1");
  Play(first);
  FakeConnection& second = Connect("10.0.0.2");
  LogIn(second);  // at the menu while the first still plays
  second.terminal().TakeScreen();

  // Nothing runs io between the hang-up and the resume, so the grace cannot end in between;
  // its timer, if it was not cancelled, fires during PumpFor and must find the character held.
  first.HangUp();
  second.Type("1");
  Pump();
  EXPECT_THAT(second.terminal().TakeScreen(), HasSubstr("You take hold of Lovelace again."));
  PumpFor(std::chrono::milliseconds(kShortGraceMs * 5));
  EXPECT_TRUE(link_.removed().empty());
  EXPECT_EQ(link_.entered().size(), 1u);
  ExpectGauges(1, 1, 0);
}

TEST_F(GateTest, ASecondLoginDisplacesTheFirstConnection) {
  SeedAccount({"Lovelace"});
  StartGate(kLongGraceMs);
  FakeConnection& first = Connect("10.0.0.1");
  Play(first);
  first.terminal().TakeScreen();

  FakeConnection& second = Connect("10.0.0.2");
  LogIn(second);
  Type(second, "LOVELACE");  // by name this time
  EXPECT_THAT(second.terminal().TakeScreen(), HasSubstr("You take hold of Lovelace again."));
  EXPECT_EQ(first.terminal().close_reason(), "Your character was taken up by a new connection.");
  EXPECT_TRUE(first.closed());
  EXPECT_FALSE(second.closed());
  EXPECT_EQ(link_.entered().size(), 1u);
  EXPECT_TRUE(link_.removed().empty());
  EXPECT_EQ(registrar_.unregisters("lovelace"), 0);
  ExpectGauges(1, 1, 0);  // the displaced connection did not leave the character link-dead

  first.terminal().TakeScreen();
  link_.Say("lovelace", "The Atrium");
  EXPECT_EQ(second.terminal().TakeScreen(), "The Atrium\n> ");
  EXPECT_EQ(first.terminal().TakeScreen(), "");
  Type(second, "say hello");
  EXPECT_EQ(link_.inputs().back(),
            std::make_pair(std::string("lovelace"), std::string("say hello")));
}

TEST_F(GateTest, ALinkDeadCharacterIsRemovedWhenTheGraceRunsOut) {
  SeedAccount({"Lovelace"});
  StartGate(kShortGraceMs);
  FakeConnection& first = Connect();
  Play(first);
  ASSERT_EQ(link_.entered().size(), 1u);

  const auto hung_up = std::chrono::steady_clock::now();
  first.HangUp();
  Pump();
  ExpectGauges(0, 0, 1);
  ASSERT_TRUE(PumpUntil([&] { return !link_.removed().empty(); }));
  EXPECT_GE(std::chrono::steady_clock::now() - hung_up, std::chrono::milliseconds(kShortGraceMs));
  EXPECT_EQ(link_.removed(), std::vector<std::string>{"lovelace"});
  EXPECT_EQ(registrar_.unregisters("lovelace"), 1);
  EXPECT_FALSE(registrar_.registered("lovelace"));
  ExpectGauges(0, 0, 0);

  // Gone for good: the next visit enters the world afresh.
  FakeConnection& again = Connect();
  Play(again);
  EXPECT_THAT(again.terminal().TakeScreen(), Not(HasSubstr("take hold")));
  EXPECT_EQ(link_.entered().size(), 2u);
  ExpectGauges(1, 1, 0);
}

TEST_F(GateTest, AQuitAndAHangUpTogetherLetTheCharacterGoOnce) {
  SeedAccount({"Lovelace"});
  StartGate(kShortGraceMs);
  FakeConnection& c = Connect();
  Play(c);
  c.terminal().TakeScreen();

  // The world's farewell and the client's hang-up, before the gate's own close is delivered.
  link_.Quit("lovelace");
  c.HangUp();
  Pump();
  EXPECT_THAT(c.terminal().TakeScreen(), AllOf(HasSubstr("Farewell. Your progress has been saved."),
                                               HasSubstr("Come back soon.")));
  PumpFor(std::chrono::milliseconds(kShortGraceMs * 5));
  EXPECT_TRUE(link_.removed().empty());  // the world let it go itself
  EXPECT_EQ(registrar_.unregisters("lovelace"), 1);
  ExpectGauges(0, 0, 0);
}

TEST_F(GateTest, AHangUpThenTheQuitItRacedLetTheCharacterGoOnce) {
  SeedAccount({"Lovelace"});
  StartGate(kShortGraceMs);
  FakeConnection& c = Connect();
  Play(c);
  c.terminal().TakeScreen();

  // The player typed "quit" and dropped; the world answers after the gate saw the drop.
  c.HangUp();
  link_.Quit("lovelace");
  Pump();
  EXPECT_EQ(c.terminal().TakeScreen(), "");  // nobody to tell
  ExpectGauges(0, 0, 0);
  PumpFor(std::chrono::milliseconds(kShortGraceMs * 5));  // the grace, had it not been cancelled
  EXPECT_TRUE(link_.removed().empty());
  EXPECT_EQ(registrar_.unregisters("lovelace"), 1);
  ExpectGauges(0, 0, 0);
}

// The grace runs out while the player's "quit" is still on its way through the world: the gate
// asks the world to remove the character, the world answers the quit first (a departure), then
// finishes the removal (a second one). A new visit that began in between must survive it.
TEST_F(GateTest, AGraceEndingAsTheCharacterQuitsDoesNotUnseatItsNextVisit) {
  SeedAccount({"Lovelace"});
  StartGate(kShortGraceMs);
  link_.HoldRemovals();
  FakeConnection& first = Connect();
  Play(first);
  first.HangUp();
  ASSERT_TRUE(PumpUntil([&] { return !link_.removed().empty(); }));
  link_.Quit("lovelace");
  Pump();
  ExpectGauges(0, 0, 0);
  EXPECT_EQ(registrar_.unregisters("lovelace"), 1);

  FakeConnection& second = Connect();
  Play(second);
  ASSERT_EQ(link_.entered().size(), 2u);
  ExpectGauges(1, 1, 0);

  link_.CompleteRemovals();  // the first visit's removal finishes late
  Pump();
  EXPECT_TRUE(registrar_.registered("lovelace")) << "saves of the new visit are unregistered";
  EXPECT_EQ(registrar_.unregisters("lovelace"), 1);
  ExpectGauges(1, 1, 0);
  ASSERT_FALSE(HasFailure());

  // The new visit still goes link-dead and comes back as one character should.
  second.HangUp();
  Pump();
  ExpectGauges(0, 0, 1);
}

TEST_F(GateTest, AQuitRacingAHangUpOnTwoThreadsLetsTheCharacterGoOnce) {
  SeedAccount({"Lovelace"});
  StartGate(kShortGraceMs);
  for (int round = 1; round <= kRaceRounds; ++round) {
    SCOPED_TRACE(round);
    FakeConnection& c = Connect();
    Play(c);
    ASSERT_EQ(link_.entered().size(), static_cast<size_t>(round));
    std::thread world([this] { link_.Quit("lovelace"); });
    c.HangUp();
    world.join();
    Pump();
    ASSERT_TRUE(c.closed());
    EXPECT_EQ(registrar_.unregisters("lovelace"), round);
    ExpectGauges(0, 0, 0);
    ASSERT_FALSE(HasFailure());
  }
  PumpFor(std::chrono::milliseconds(kShortGraceMs * 5));  // any grace a hang-up started
  EXPECT_TRUE(link_.removed().empty());
  EXPECT_EQ(registrar_.unregisters("lovelace"), kRaceRounds);
  ExpectGauges(0, 0, 0);
}

TEST_F(GateTest, ShutdownTellsPlayersAndRefusesNewConnections) {
  SeedAccount({"Lovelace"});
  StartGate();
  FakeConnection& c = Connect();
  Play(c);
  c.terminal().TakeScreen();
  gate_->BeginShutdown("The world will close in one minute.");
  EXPECT_THAT(c.terminal().TakeScreen(), HasSubstr("The world will close in one minute."));
  FakeConnection& late = Connect();
  EXPECT_EQ(late.terminal().close_reason(), "The world is closing; please come back soon.");
  EXPECT_TRUE(late.closed());
  ExpectGauges(1, 1, 0);
}

}  // namespace
}  // namespace telos::gate
