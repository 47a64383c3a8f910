// The gate's login-and-play conversation against a fake terminal and a fake world link.
//
// Accounts are real, wired as `telos serve` wires them (LocalAccountDesk, with its login
// tickets and signed assertions, over AccountService over an in-memory SQLite store, with the
// cheapest argon2
// cost), because what a player is told on a wrong password or a taken name comes from there,
// and so does the signed assertion a world admits a character on. Everything else the gate
// talks to is a fake the test drives by hand:
//   - FakeTerminal records what the gate writes (text, prompts, echo, GMCP, the close);
//   - FakeConnection stands for the transport: it feeds lines to the handler one at a time and
//     delivers OnClosed at most once, whether the client hung up or the gate closed it;
//   - FakeWorldLink records Enter/Input/Remove and lets the test speak as the world, through the
//     sink the gate handed to Enter (a `disconnect` output is the character quitting); like the
//     real link it refuses an Enter without an assertion;
//   - blocking work (hashing, the store) waits in a queue the test drains, so every step runs
//     on the test thread in an order the test chooses.
// The gate's login and link-dead timers are asio steady timers on `io`, not the Clock, so the
// tests that need one to fire use a grace of a few milliseconds and pump `io` until a condition
// holds or a deadline passes; the others use a grace no test outlives.
//
// The world claims, loads and saves characters itself, so the gate's side of a character's
// coming and going shows only in what it asks of the link (an Enter per visit, a Remove per
// link-dead grace that ran out), in its gauges, and in whether a later login resumes the
// character (no new Enter) or enters it afresh. A character the gate let go twice, or not at
// all, shows there: a stale binding turns the next visit into a resume, a lost one into a
// second Enter of a character still in the world, and either puts the gauges off.
#include "telos/gate/gate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
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
#include "telos/account/login_tickets.h"
#include "telos/account/passwords.h"
#include "telos/auth/documents.h"
#include "telos/auth/keys.h"
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
// A grace long enough that a test can tell "at once" from "after a whole grace".
constexpr int64_t kWholeGraceMs = 250;
// How long a test waits for a timer before it gives up and fails.
constexpr auto kDeadline = 5s;
// The longest one wait on `io` blocks before the condition is checked again.
constexpr auto kPollSlice = 5ms;
// Rounds of the two-thread quit-and-hang-up race.
constexpr int kRaceRounds = 25;
// The address throttle must not get in the way of a test's deliberate wrong passwords.
constexpr size_t kAddressFailuresMax = 100;
// The shortest assertion life the account service allows; only the renewal test moves the
// manual clock that far.
constexpr int64_t kAssertionTtlMs = limits::kAssertionTtlMsMin;
constexpr char kGateId[] = "gate-test";

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
  // Refuses what a world would: no assertion (FleetWorldLink::Enter), or one already online.
  Status Enter(EnterRequest request, std::shared_ptr<world::PlayerSink> sink) override {
    std::lock_guard lock(mu_);
    if (request.assertion.empty()) {
      ++refused_;
      return Status::PermissionDenied("no assertion for " + request.display_name);
    }
    if (online_.count(request.name_key) != 0) {
      ++refused_;
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
  const std::string& gate_id() const override { return gate_id_; }
  void UpdateAssertion(const std::string& name_key, std::string assertion) override {
    std::lock_guard lock(mu_);
    if (online_.count(name_key) != 0) assertions_[name_key] = std::move(assertion);
  }
  // The assertion the link would present for `name_key` now: the latest renewal, else the
  // Enter's.
  std::string assertion(const std::string& name_key) const {
    std::lock_guard lock(mu_);
    if (auto it = assertions_.find(name_key); it != assertions_.end()) return it->second;
    for (const auto& request : entered_) {
      if (request.name_key == name_key) return request.assertion;
    }
    return "";
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
  // Enters refused (no assertion, or the character still online): a gate that lost track of a
  // character it had entered would ask again.
  int refused() const {
    std::lock_guard lock(mu_);
    return refused_;
  }
  bool online(const std::string& name_key) const {
    std::lock_guard lock(mu_);
    return online_.count(name_key) != 0;
  }

 private:
  mutable std::mutex mu_;
  std::set<std::string> online_;  // guarded by mu_
  const std::string gate_id_ = kGateId;
  std::map<std::string, std::shared_ptr<world::PlayerSink>> sinks_;  // guarded by mu_
  std::map<std::string, std::string> assertions_;                    // guarded by mu_; renewed
  std::vector<EnterRequest> entered_;                                // guarded by mu_
  std::vector<std::pair<std::string, std::string>> inputs_;          // guarded by mu_
  std::vector<std::string> removed_;                                 // guarded by mu_
  int refused_ = 0;                                                  // guarded by mu_
  bool hold_removals_ = false;                                       // guarded by mu_
  std::vector<std::function<void()>> held_removals_;                 // guarded by mu_
};

// The real desk, except that its next RenewAssertion answers are the statuses queued in
// `renewal_refusals` (a caller-token refusal on the wire, say), then it answers for real.
class RefusingDesk final : public account::AccountDesk {
 public:
  explicit RefusingDesk(account::AccountDesk& real) : real_(real) {}
  std::deque<Status> renewal_refusals;

  Result<bool> AccountExists(std::string_view name, std::string_view address) override {
    return real_.AccountExists(name, address);
  }
  Result<account::AccountRef> CreateAccount(std::string_view name, std::string_view password,
                                            std::string_view address) override {
    return real_.CreateAccount(name, password, address);
  }
  Result<account::AccountRef> Authenticate(std::string_view name, std::string_view password,
                                           std::string_view address) override {
    return real_.Authenticate(name, password, address);
  }
  Result<std::vector<account::CharacterSummary>> Characters(std::string_view ticket) override {
    return real_.Characters(ticket);
  }
  Status CreateCharacter(std::string_view ticket, std::string_view name, std::string_view zone_id,
                         std::string_view room_id) override {
    return real_.CreateCharacter(ticket, name, zone_id, room_id);
  }
  Result<account::CharacterClaim> ClaimCharacter(std::string_view ticket, std::string_view name,
                                                 std::string_view gate_id) override {
    return real_.ClaimCharacter(ticket, name, gate_id);
  }
  Result<account::CharacterClaim> RenewAssertion(std::string_view ticket,
                                                 std::string_view assertion) override {
    if (!renewal_refusals.empty()) {
      Status refusal = renewal_refusals.front();
      renewal_refusals.pop_front();
      return refusal;
    }
    return real_.RenewAssertion(ticket, assertion);
  }
  Status ChangePassword(std::string_view character_name, std::string_view old_password,
                        std::string_view new_password) override {
    return real_.ChangePassword(character_name, old_password, new_password);
  }

 private:
  account::AccountDesk& real_;
};

class GateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = store::SqliteStore::Open({":memory:"}, clock_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
    service_ = std::make_unique<account::AccountService>(
        store_->accounts(), store_->characters(), hasher_, throttle_, clock_, log_, metrics_);
    desk_ = std::make_unique<account::LocalAccountDesk>(
        *service_, assertion_key_, clock_, account::LocalAccountDeskOptions{kAssertionTtlMs});
    refusing_desk_ = std::make_unique<RefusingDesk>(*desk_);
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
    options.assertion_renew_sweep_ms = 0;  // the renewal test sweeps by hand
    BlockingRunner blocking = [this](std::function<void()> task) {
      std::lock_guard lock(blocking_mu_);
      blocking_.push_back(std::move(task));
    };
    gate_ = std::make_unique<Gate>(options, io_, std::move(blocking), *refusing_desk_, link_,
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
      auto created = service_->CreateCharacter(account->id, name, StartRoom().zone, StartRoom().id);
      ASSERT_TRUE(created.ok()) << created.status().ToString();
    }
  }

  // The assertion a world would admit `request` on: signed by the test's account service, for
  // this character and account.
  void ExpectAdmissible(const EnterRequest& request, const std::string& display_name) {
    auto assertion = auth::VerifyAssertion(assertion_key_.verify_key(), request.assertion, clock_);
    ASSERT_TRUE(assertion.ok()) << assertion.status().ToString();
    EXPECT_EQ(assertion->character, display_name);
    auto account = store_->accounts().Load(kAccount);
    ASSERT_TRUE(account.ok()) << account.status().ToString();
    EXPECT_EQ(assertion->account_id, account->id);
    EXPECT_EQ(assertion->gate_id, kGateId);  // issued for the gate the link says hello as
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
  // After the character left the world for good: the next login enters it afresh, once, where a
  // binding left behind would resume a ghost ("take hold") and a binding lost while the
  // character was still in the world would meet a refused Enter. Leaves the visit playing.
  void ExpectNextVisitEntersAfresh() {
    const size_t entered_before = link_.entered().size();
    const int refused_before = link_.refused();
    FakeConnection& next = Connect();
    Play(next);
    EXPECT_THAT(next.terminal().TakeScreen(), Not(HasSubstr("take hold")));
    EXPECT_EQ(link_.entered().size(), entered_before + 1);
    EXPECT_EQ(link_.refused(), refused_before);
    ExpectGauges(1, 1, 0);
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
  const auth::SigningKey assertion_key_ = auth::SigningKey::Generate();
  std::unique_ptr<account::LocalAccountDesk> desk_;
  std::unique_ptr<RefusingDesk> refusing_desk_;  // what the gate calls
  FakeWorldLink link_;
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
  ExpectAdmissible(entered[0], "Lovelace");
  EXPECT_EQ(link_.refused(), 0);
  // The account service made the first state from the name and the gate's start room.
  auto row = store_->characters().Load("lovelace");
  ASSERT_TRUE(row.ok()) << row.status().ToString();
  auto state = world::DecodeCharacter(row->state_json);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(*state, world::NewCharacter("Lovelace", StartRoom()));
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
  ExpectAdmissible(entered[0], "Lovelace");
  ExpectGauges(1, 1, 0);
}

// Issue 23 item 3: an assertion lives minutes, so the gate renews it while the character is in
// the world (link-dead too), and the link presents the fresh one from then on.
TEST_F(GateTest, TheGateRenewsTheAssertionOfACharacterInTheWorld) {
  SeedAccount({"Lovelace"});
  StartGate();
  FakeConnection& c = Connect();
  Play(c);
  ASSERT_EQ(link_.entered().size(), 1u);
  auto first =
      auth::VerifyAssertion(assertion_key_.verify_key(), link_.assertion("lovelace"), clock_);
  ASSERT_TRUE(first.ok()) << first.status().ToString();

  // Not yet half its life: nothing to do.
  clock_.Advance(std::chrono::milliseconds(kAssertionTtlMs / 2 - 1));
  gate_->RenewDueAssertions();
  Pump();
  EXPECT_EQ(link_.assertion("lovelace"), link_.entered()[0].assertion);
  EXPECT_EQ(Metric("telos_gate_assertion_renewals_total"), 0);

  // Then, renewed on each sweep past half its life, the session outlives many assertions;
  // the player hangs up halfway and the link-dead character is renewed all the same.
  for (int round = 0; round < 6; ++round) {
    if (round == 3) {
      c.HangUp();
      Pump();
      ExpectGauges(0, 0, 1);
    }
    // Just past half its life (the first time: just past the check above).
    clock_.Advance(std::chrono::milliseconds(round == 0 ? 2 : kAssertionTtlMs / 2 + 1));
    gate_->RenewDueAssertions();
    Pump();
    auto now =
        auth::VerifyAssertion(assertion_key_.verify_key(), link_.assertion("lovelace"), clock_);
    ASSERT_TRUE(now.ok()) << round << ": " << now.status().ToString();
    EXPECT_EQ(now->nonce, first->nonce);
    EXPECT_EQ(now->gate_id, kGateId);
    EXPECT_EQ(now->character, "Lovelace");
  }
  EXPECT_EQ(Metric("telos_gate_assertion_renewals_total"), 6);
  EXPECT_FALSE(
      auth::VerifyAssertion(assertion_key_.verify_key(), link_.entered()[0].assertion, clock_)
          .ok());
}

// A refusal of the gate itself (its caller token, during a token roll) says nothing about the
// session: the gate asks again on the next sweep. Only the session's own refusal (its ticket
// forgotten, its assertion no longer valid: the account service's LoginExpired) ends renewal.
// The gate goes by the code, never the words: a caller refusal worded like a ticket's or an
// assertion's is asked again, and an expired login in words never seen before is not.
TEST_F(GateTest, ARenewalRefusedForTheCallerIsAskedAgainButOneRefusedForTheSessionIsNot) {
  SeedAccount({"Lovelace"});
  StartGate();
  FakeConnection& c = Connect();
  Play(c);
  ASSERT_EQ(link_.entered().size(), 1u);
  std::string current = link_.assertion("lovelace");

  double failures = 0;
  double renewals = 0;
  for (const Status& caller_refusal :
       {Status::PermissionDenied("caller token wrong"),
        Status::PermissionDenied(std::string(account::kTicketRefusedMessage)),
        Status::PermissionDenied("assertion: caller token wrong")}) {
    SCOPED_TRACE(caller_refusal.ToString());
    refusing_desk_->renewal_refusals.push_back(caller_refusal);
    clock_.Advance(std::chrono::milliseconds(kAssertionTtlMs / 2 + 1));
    gate_->RenewDueAssertions();
    Pump();
    EXPECT_EQ(link_.assertion("lovelace"), current);
    EXPECT_EQ(Metric("telos_gate_assertion_renewal_failures_total"), ++failures);

    gate_->RenewDueAssertions();
    Pump();
    EXPECT_NE(link_.assertion("lovelace"), current);
    EXPECT_EQ(Metric("telos_gate_assertion_renewals_total"), ++renewals);
    current = link_.assertion("lovelace");
  }

  // The ticket forgotten: asking again cannot help, so the gate stops asking.
  refusing_desk_->renewal_refusals.push_back(
      Status::LoginExpired("your session is over, in words never used before"));
  clock_.Advance(std::chrono::milliseconds(kAssertionTtlMs / 2 + 1));
  gate_->RenewDueAssertions();
  Pump();
  clock_.Advance(std::chrono::milliseconds(kAssertionTtlMs / 4));
  gate_->RenewDueAssertions();
  Pump();
  EXPECT_EQ(Metric("telos_gate_assertion_renewal_failures_total"), failures + 1);
  EXPECT_EQ(Metric("telos_gate_assertion_renewals_total"), renewals);
}

// Issue 23 item 2: the account service forgets a login left idle; the menu then asks for it
// again instead of acting on an account the gate names.
TEST_F(GateTest, AnIdleLoginThatLapsedIsAskedForAgain) {
  SeedAccount({"Lovelace"});
  StartGate();
  FakeConnection& c = Connect();
  LogIn(c);
  c.terminal().TakeScreen();
  clock_.Advance(std::chrono::milliseconds(limits::kLoginTicketIdleMs));
  Type(c, "1");
  EXPECT_THAT(c.terminal().TakeScreen(),
              AllOf(HasSubstr(std::string(account::kTicketRefusedMessage)),
                    HasSubstr("Enter your account name")));
  EXPECT_TRUE(link_.entered().empty());
  LogIn(c);
  Type(c, "1");
  ASSERT_EQ(link_.entered().size(), 1u);
  ExpectAdmissible(link_.entered()[0], "Lovelace");
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
  EXPECT_EQ(link_.refused(), 0);
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

// The first grace's timer has fired, but its handler has not run, when the player comes back:
// cancelling the timer is then too late (asio runs a completed wait as a success), so the
// handler runs after the resume. If the player has dropped again by then, that stale handler
// must not take the character out at once: the second drop earned a whole grace of its own.
TEST_F(GateTest, AGraceThatFiredAsThePlayerCameBackDoesNotCutTheNextGraceShort) {
  SeedAccount({"Lovelace"});
  StartGate(kWholeGraceMs);
  FakeConnection& first = Connect("10.0.0.1");
  Play(first);
  FakeConnection& second = Connect("10.0.0.2");
  LogIn(second);  // at the menu while the first still plays
  second.terminal().TakeScreen();

  first.HangUp();  // the first grace starts
  const auto first_grace_over =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kWholeGraceMs);
  // A deadline, not a condition: nothing may run io until the first grace is over.
  std::this_thread::sleep_until(first_grace_over);
  // One handler through io, posted behind the expired wait: asio completes that wait first and
  // queues its handler after ours, where it waits until the next Pump.
  bool ran = false;
  boost::asio::post(io_, [&ran] { ran = true; });
  io_.restart();
  ASSERT_EQ(io_.run_one(), 1u);
  ASSERT_TRUE(ran);

  second.Type("1");  // the resume: too late to cancel the first grace's wait
  EXPECT_THAT(second.terminal().TakeScreen(), HasSubstr("You take hold of Lovelace again."));
  second.HangUp();  // the second grace starts
  const auto second_hung_up = std::chrono::steady_clock::now();
  Pump();  // the first grace's handler runs now
  EXPECT_TRUE(link_.removed().empty()) << "the first grace ended the second at once";
  ExpectGauges(0, 0, 1);

  ASSERT_TRUE(PumpUntil([&] { return !link_.removed().empty(); }));
  EXPECT_GE(std::chrono::steady_clock::now() - second_hung_up,
            std::chrono::milliseconds(kWholeGraceMs));
  EXPECT_EQ(link_.removed(), std::vector<std::string>{"lovelace"});
  ExpectGauges(0, 0, 0);
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
  EXPECT_EQ(link_.refused(), 0);
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
  ExpectGauges(0, 0, 0);

  // Gone for good: the next visit enters the world afresh, and the old grace is spent.
  ExpectNextVisitEntersAfresh();
  EXPECT_EQ(link_.entered().size(), 2u);
  PumpFor(std::chrono::milliseconds(kShortGraceMs * 5));
  EXPECT_EQ(link_.removed(), std::vector<std::string>{"lovelace"});
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
  ExpectGauges(0, 0, 0);
  ExpectNextVisitEntersAfresh();
  PumpFor(std::chrono::milliseconds(kShortGraceMs * 5));  // nothing of the old visit is left
  EXPECT_TRUE(link_.removed().empty());
  ExpectGauges(1, 1, 0);
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
  ExpectGauges(0, 0, 0);
  ExpectNextVisitEntersAfresh();
  PumpFor(std::chrono::milliseconds(kShortGraceMs * 5));
  EXPECT_TRUE(link_.removed().empty());
  ExpectGauges(1, 1, 0);
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

  FakeConnection& second = Connect();
  Play(second);
  ASSERT_EQ(link_.entered().size(), 2u);
  ExpectGauges(1, 1, 0);

  // The first visit's removal finishes late: a second departure would take the new visit's
  // binding, leaving its player uncounted and its next login no resume.
  link_.CompleteRemovals();
  Pump();
  ExpectGauges(1, 1, 0);
  ASSERT_FALSE(HasFailure());

  // The new visit still goes link-dead and comes back as one character should: resumed, with
  // no Enter of a character the world still holds.
  second.HangUp();
  Pump();
  ExpectGauges(0, 0, 1);
  FakeConnection& third = Connect();
  Play(third);
  EXPECT_THAT(third.terminal().TakeScreen(), HasSubstr("You take hold of Lovelace again."));
  EXPECT_EQ(link_.entered().size(), 2u);
  EXPECT_EQ(link_.refused(), 0);
  EXPECT_EQ(link_.removed(), std::vector<std::string>{"lovelace"});
  ExpectGauges(1, 1, 0);
}

TEST_F(GateTest, AQuitRacingAHangUpOnTwoThreadsLetsTheCharacterGoOnce) {
  SeedAccount({"Lovelace"});
  StartGate(kShortGraceMs);
  for (int round = 1; round <= kRaceRounds; ++round) {
    SCOPED_TRACE(round);
    // Each round's login enters afresh: the last round's race left no binding behind.
    FakeConnection& c = Connect();
    Play(c);
    ASSERT_EQ(link_.entered().size(), static_cast<size_t>(round));
    EXPECT_EQ(link_.refused(), 0);
    ExpectGauges(1, 1, 0);
    std::thread world([this] { link_.Quit("lovelace"); });
    c.HangUp();
    world.join();
    Pump();
    ASSERT_TRUE(c.closed());
    ExpectGauges(0, 0, 0);
    ASSERT_FALSE(HasFailure());
  }
  PumpFor(std::chrono::milliseconds(kShortGraceMs * 5));  // any grace a hang-up started
  EXPECT_TRUE(link_.removed().empty());
  ExpectGauges(0, 0, 0);
  ExpectNextVisitEntersAfresh();
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
