// FleetComms between two shards in one process: two WorldHosts (a one-room pack, zones on a
// ManualExecutor each), two InProcessBus clients of one hub standing in for NATS, and one
// MemoryDirectory under a ManualClock for placements and presence. Bus handlers run on the
// buses' threads; the test pumps both executors until what it waits for shows up or a deadline
// passes (Until), never sleeping to "let it happen".
#include "telos/shard/fleet_comms.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "telos/auth/documents.h"
#include "telos/auth/keys.h"
#include "telos/base/assert.h"
#include "telos/base/clock.h"
#include "telos/base/limits.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/base/utf8.h"
#include "telos/bus/in_process_bus.h"
#include "telos/directory/forwarding_directory.h"
#include "telos/directory/memory_directory.h"
#include "telos/shard/fleet_messages.h"
#include "telos/shard/records_announcer.h"
#include "telos/store/sqlite_store.h"
#include "telos/world/character_state.h"
#include "telos/world/content.h"
#include "telos/world/executor.h"
#include "telos/world/mail_ping.h"
#include "telos/world/world_host.h"

namespace telos::shard {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr auto kWait = std::chrono::seconds(10);
constexpr const char* kPrefix = "telos.test";

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

// A one-zone, one-room pack in a temporary folder.
class TinyPack {
 public:
  TinyPack() {
    std::random_device device;
    dir_ = std::filesystem::temp_directory_path() /
           ("telos_fleet_comms_" + std::to_string(device()) + std::to_string(device()));
    std::filesystem::create_directories(dir_ / "zones");
    std::ofstream(dir_ / "pack.toml") << R"(name = "fleet"
version = "0.1.0"
start_room = "lobby:atrium"
)";
    std::ofstream(dir_ / "zones" / "lobby.toml") << R"([zone]
id = "lobby"
name = "The Lobby"
kind = "lobby"
reset_minutes = 5

[[rooms]]
id = "atrium"
name = "Bright Atrium"
description = "Sunlight falls through a glass roof."
flags = ["safe"]
)";
    std::vector<world::Problem> problems;
    auto loaded = world::LoadPack(dir_, &problems);
    for (const auto& p : problems) ADD_FAILURE() << p.ToString();
    RELEASE_ASSERT(loaded.ok(), loaded.status().ToString());
    pack = std::make_shared<const world::Pack>(std::move(loaded).value());
  }
  ~TinyPack() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::shared_ptr<const world::Pack> pack;

 private:
  std::filesystem::path dir_;
};

// Everything a player is shown, kept whole (Deliver runs on the zone executor: the test thread).
class Sink final : public world::PlayerSink {
 public:
  void Deliver(world::PlayerOutput output) override {
    std::lock_guard lock(mu_);
    text_ += output.text;
  }
  std::string Text() const {
    std::lock_guard lock(mu_);
    return text_;
  }
  bool Has(const std::string& needle) const { return Text().find(needle) != std::string::npos; }

 private:
  mutable std::mutex mu_;
  std::string text_;
};

class NoPersistence final : public world::CharacterPersistence {
 public:
  void RequestSave(world::CharacterSnapshot) override {}
};

class EmptyMail final : public world::MailPort {
 public:
  void Send(std::string, std::string, std::string, std::string,
            std::function<void(Status)> done) override {
    done(Status::Unavailable("no post office in this test"));
  }
  void List(std::string,
            std::function<void(Result<std::vector<world::MailHeader>>)> done) override {
    done(std::vector<world::MailHeader>{});
  }
  void Read(std::string, int64_t, std::function<void(Result<world::MailMessage>)> done) override {
    done(Status::NotFound("no such letter"));
  }
};

class NoPasswords final : public world::PasswordPort {
 public:
  void Change(std::string, std::string, std::string, std::function<void(Status)> done) override {
    done(Status::Unavailable("no passwords in this test"));
  }
};

// Staff actions a world audited, kept whole (written from zone executors and bus threads).
class RecordingAudit final : public world::AuditPort {
 public:
  void Record(world::AuditRecord record) override {
    std::lock_guard lock(mu_);
    records_.push_back(std::move(record));
  }
  std::vector<world::AuditRecord> records() const {
    std::lock_guard lock(mu_);
    return records_;
  }
  // Whether some record of `action` has a detail containing `needle`.
  bool Has(const std::string& action, const std::string& needle) const {
    std::lock_guard lock(mu_);
    for (const auto& r : records_) {
      if (r.action == action && r.detail.find(needle) != std::string::npos) return true;
    }
    return false;
  }

 private:
  mutable std::mutex mu_;
  std::vector<world::AuditRecord> records_;
};

// What both shards share.
struct FleetEnv {
  // The account service's key: every login assertion in the test is signed with it.
  auth::SigningKey account_key = auth::SigningKey::Generate();
  ManualClock clock;
  Logger log{"fleet_comms_test", LogLevel::kError};
  directory::MemoryDirectory directory{clock};
  std::shared_ptr<bus::InProcessBus::Hub> hub = bus::InProcessBus::NewHub();
  boost::asio::io_context io;  // the presence refresh timers; run only by the test that checks them
  TinyPack content;
};

struct ShardOptions {
  int64_t presence_ttl_ms = directory::kPresenceTtlMsDefault;
  int64_t tell_timeout_ms = 2'000;
  // Directory calls on a one-thread pool (in order, on another thread) instead of inline.
  bool blocking_pool = false;
  directory::Directory* directory = nullptr;  // null: the environment's
};

// One `telos world` process worth of comms: a host with the lobby running, its own bus client
// and its FleetComms, wired as apps/telos/world_process.cc does.
class Shard {
 public:
  Shard(FleetEnv& env, const std::string& id, ShardOptions options = {})
      : env_(env), executor(env.clock), bus(env.hub) {
    world::ZoneDeps deps;
    deps.clock = &env.clock;
    deps.logger = &env.log;
    deps.metrics = &metrics;
    deps.persistence = &persistence_;
    deps.mail = &mail_;
    deps.passwords = &passwords_;
    host = std::make_unique<world::WorldHost>(
        env.content.pack, deps,
        [this](const std::string&) {
          return std::shared_ptr<world::Executor>(std::shared_ptr<world::Executor>(), &executor);
        },
        7);
    FleetCommsOptions comms_options;
    comms_options.shard_id = id;
    comms_options.subject_prefix = kPrefix;
    comms_options.presence_ttl_ms = options.presence_ttl_ms;
    comms_options.tell_timeout_ms = options.tell_timeout_ms;
    BlockingRunner blocking = [](std::function<void()> task) { task(); };
    if (options.blocking_pool) {
      pool_ = std::make_unique<boost::asio::thread_pool>(1);
      blocking = [pool = pool_.get()](std::function<void()> task) {
        boost::asio::post(*pool, std::move(task));
      };
    }
    directory::Directory& directory =
        options.directory != nullptr ? *options.directory : env.directory;
    comms = std::make_unique<FleetComms>(comms_options, bus, directory, *host, env.io,
                                         std::move(blocking), env.log, metrics);
    StaffAuth staff_auth;
    staff_auth.assertion_of = [this](const std::string& name_key) {
      std::lock_guard lock(assertions_mu_);
      auto it = assertions.find(name_key);
      return it == assertions.end() ? std::string() : it->second;
    };
    staff_auth.verify_keys = auth::KeyRing(env.account_key.verify_key());
    staff_auth.clock = &env.clock;
    comms->SetStaffAuth(std::move(staff_auth));
    host->SetAuditPort(&audit, id);
    host->SetRemoteComms(comms.get());  // before any zone starts
    host->SetRemoteBroadcasts(comms.get());
    const Status started = host->StartAllZones();
    RELEASE_ASSERT(started.ok(), started.ToString());
    executor.RunDue();
    const Status s = comms->Start();
    RELEASE_ASSERT(s.ok(), s.ToString());
  }

  ~Shard() {
    comms->Stop();
    if (pool_) pool_->join();  // queued directory calls see the comms stopped and return
    for (const std::string& zone : host->RunningZones()) {
      (void)host->StopZone(zone, [](std::vector<world::PlayerTransfer>) {});
    }
    executor.RunReady();
  }

  // Logs `name` in and reports them resident here, attached through `gate` (empty: no gate).
  std::shared_ptr<Sink> Login(const std::string& name, const std::string& gate,
                              Roles roles = kRolePlayer) {
    auto sink = std::make_shared<Sink>();
    world::CharacterState state = world::NewCharacter(name, env_.content.pack->start_room);
    state.roles = roles;
    {
      // As the gate's attach would: the account service's assertion, with the signed roles.
      std::lock_guard lock(assertions_mu_);
      assertions[world::NameKey(name)] = auth::IssueAssertion(
          env_.account_key, 1, name, gate.empty() ? "gate-0" : gate, 60'000, env_.clock, roles);
    }
    const Status s = host->Login(std::move(state), sink);
    RELEASE_ASSERT(s.ok(), s.ToString());
    executor.RunReady();
    comms->Arrived(world::NameKey(name), gate);
    return sink;
  }

  void Say(const std::string& name, const std::string& line) {
    const Status s = host->Submit(name, line);
    RELEASE_ASSERT(s.ok(), s.ToString());
    executor.RunReady();
  }

  std::string MetricsText() const { return metrics.RenderText(); }

 private:
  FleetEnv& env_;
  NoPersistence persistence_;
  EmptyMail mail_;
  NoPasswords passwords_;
  std::unique_ptr<boost::asio::thread_pool> pool_;

 public:
  std::mutex assertions_mu_;
  std::map<std::string, std::string> assertions;  // by name key; guarded by assertions_mu_
  RecordingAudit audit;
  Metrics metrics;
  // After the ports and before the host: queued tasks keep zones alive until it goes.
  world::ManualExecutor executor;
  std::unique_ptr<world::WorldHost> host;
  bus::InProcessBus bus;
  std::unique_ptr<FleetComms> comms;
};

class FleetCommsTest : public ::testing::Test {
 protected:
  void MakeShards(ShardOptions a_options = {}, ShardOptions b_options = {}) {
    a_ = std::make_unique<Shard>(env_, "shard-a", a_options);
    b_ = std::make_unique<Shard>(env_, "shard-b", b_options);
  }
  ~FleetCommsTest() override {
    b_.reset();
    a_.reset();
  }

  // Runs both shards' zones until `done` holds or kWait passes.
  bool Until(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    while (true) {
      if (a_) a_->executor.RunReady();
      if (b_) b_->executor.RunReady();
      if (done()) return true;
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  std::optional<directory::Presence> PresenceOf(const std::string& key) {
    auto presence = env_.directory.GetPresence(key);
    RELEASE_ASSERT(presence.ok(), presence.status().ToString());
    return *presence;
  }

  // Polls the directory until `key`'s presence names `gate` (empty: no presence) or kWait passes.
  bool PresenceBecomes(const std::string& key, const std::string& gate) {
    return Until([&] {
      auto presence = PresenceOf(key);
      return gate.empty() ? !presence.has_value() : presence.has_value() && presence->gate == gate;
    });
  }

  FleetEnv env_;
  std::unique_ptr<Shard> a_;
  std::unique_ptr<Shard> b_;
};

// ---------------------------------------------------------------- staff orders

TEST_F(FleetCommsTest, AnAdminOnOneWorldMutesStatsAndKicksAPlayerOnTheOther) {
  MakeShards();
  auto ada = a_->Login("Ada", "gate-1", kRoleAdmin);
  auto bob = b_->Login("Bob", "gate-2");
  a_->Say("Ada", "mute bob 5 flooding");
  ASSERT_TRUE(Until([&] {
    return ada->Has("You mute Bob for 5 minutes.") &&
           bob->Has("Ada has muted you for 5 minutes: flooding");
  })) << "ada: "
      << ada->Text() << "\nbob: " << bob->Text();
  b_->Say("Bob", "say hello?");
  EXPECT_TRUE(bob->Has("You are muted for 5 more minutes."));

  a_->Say("Ada", "stat bob");
  ASSERT_TRUE(Until([&] { return ada->Has("Bob (player)"); })) << ada->Text();

  a_->Say("Ada", "boot bob enough");
  ASSERT_TRUE(Until([&] {
    return ada->Has("You remove Bob from the game.") && !b_->host->ZoneOf("Bob").has_value();
  })) << ada->Text();
  EXPECT_TRUE(bob->Has("Ada has removed you from the game: enough"));

  a_->Say("Ada", "boot nobody");
  ASSERT_TRUE(Until([&] { return ada->Has("Nobody called 'nobody' is online."); })) << ada->Text();
}

TEST_F(FleetCommsTest, AStaffOrderWithoutTheAdminRoleIsRefusedByTheTargetsWorld) {
  MakeShards();
  auto bob = b_->Login("Bob", "gate-2");
  // Whoever publishes on the bus can write any order; one claiming no role is refused there.
  world::StaffOrder forged;
  forged.kind = world::StaffKind::kKick;
  forged.issuer = "Mallory";
  forged.target = "bob";
  std::atomic<bool> answered = false;
  world::StaffOutcome outcome;
  a_->bus.Request(b_->comms->PlayerSubject("bob"), EncodeStaffOrder(forged),
                  std::chrono::seconds(5), [&](Result<std::string> reply) {
                    ASSERT_TRUE(reply.ok()) << reply.status().ToString();
                    outcome = DecodeStaffOutcome(*reply);
                    answered = true;
                  });
  ASSERT_TRUE(Until([&] { return answered.load(); }));
  EXPECT_EQ(outcome.status.code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(b_->host->ZoneOf("Bob").has_value());
  EXPECT_FALSE(bob->Has("removed you"));
}

// An order as anyone who can publish on the bus could send it to `target`'s subject, with
// the reply it gets.
world::StaffOutcome SendRawOrder(FleetEnv& env, Shard& to, const world::StaffOrder& order,
                                 const std::function<bool(const std::function<bool()>&)>& until) {
  bus::InProcessBus stranger(env.hub);
  std::atomic<bool> answered = false;
  world::StaffOutcome outcome;
  std::mutex mu;
  stranger.Request(to.comms->PlayerSubject(order.target), EncodeStaffOrder(order),
                   std::chrono::seconds(5), [&](Result<std::string> reply) {
                     std::lock_guard lock(mu);
                     if (reply.ok()) {
                       outcome = DecodeStaffOutcome(*reply);
                     } else {
                       outcome.status = reply.status();
                     }
                     answered = true;
                   });
  EXPECT_TRUE(until([&] { return answered.load(); }));
  std::lock_guard lock(mu);
  return outcome;
}

TEST_F(FleetCommsTest, AForgedAdminOrderIsRefusedAndAuditedThereAsRefused) {
  MakeShards();
  auto bob = b_->Login("Bob", "gate-2");
  // Claiming the admin role in the message is not enough: no signed assertion says so.
  world::StaffOrder forged;
  forged.kind = world::StaffKind::kKick;
  forged.issuer = "Mallory";
  forged.issuer_roles = kRoleAdmin;
  forged.target = "bob";
  const auto until = [this](const std::function<bool()>& done) { return Until(done); };
  EXPECT_EQ(SendRawOrder(env_, *b_, forged, until).status.code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(b_->host->ZoneOf("Bob").has_value());
  EXPECT_FALSE(bob->Has("removed you"));
  EXPECT_TRUE(b_->audit.Has("kick", "refused"));

  // A player's own valid assertion, with the admin role claimed beside it.
  forged.issuer_assertion =
      auth::IssueAssertion(env_.account_key, 9, "Mallory", "gate-9", 60'000, env_.clock);
  EXPECT_EQ(SendRawOrder(env_, *b_, forged, until).status.code(), StatusCode::kPermissionDenied);
  // An admin's assertion presented under another name.
  forged.issuer_assertion =
      auth::IssueAssertion(env_.account_key, 1, "Ada", "gate-1", 60'000, env_.clock, kRoleAdmin);
  EXPECT_EQ(SendRawOrder(env_, *b_, forged, until).status.code(), StatusCode::kPermissionDenied);
  // An admin assertion signed by a key that is not the account service's.
  forged.issuer = "Ada";
  forged.issuer_assertion = auth::IssueAssertion(auth::SigningKey::Generate(), 1, "Ada", "gate-1",
                                                 60'000, env_.clock, kRoleAdmin);
  EXPECT_EQ(SendRawOrder(env_, *b_, forged, until).status.code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(b_->host->ZoneOf("Bob").has_value());
  EXPECT_FALSE(bob->Has("removed you"));
  // The real thing is applied.
  forged.issuer_assertion =
      auth::IssueAssertion(env_.account_key, 1, "Ada", "gate-1", 60'000, env_.clock, kRoleAdmin);
  EXPECT_TRUE(SendRawOrder(env_, *b_, forged, until).status.ok());
  EXPECT_FALSE(b_->host->ZoneOf("Bob").has_value());
}

TEST_F(FleetCommsTest, AnAdminsAssertionIsAcceptedPastItsExpiryForTheStalenessBoundOnly) {
  MakeShards();
  auto ada = a_->Login("Ada", "gate-1", kRoleAdmin);  // an assertion good for a minute
  auto bob = b_->Login("Bob", "gate-2");
  // Worlds never see the gate's renewals: hours into the session the order still goes.
  env_.clock.Advance(std::chrono::hours(11));
  a_->Say("Ada", "mute bob 5");
  ASSERT_TRUE(Until([&] { return ada->Has("You mute Bob for 5 minutes."); })) << ada->Text();
  a_->Say("Ada", "unmute bob");
  ASSERT_TRUE(Until([&] { return ada->Has("You unmute Bob."); })) << ada->Text();
  // Past kStaffAssertionStaleMsMax it is refused, and both worlds' trails say so.
  env_.clock.Advance(std::chrono::hours(2));
  a_->Say("Ada", "mute bob 5");
  ASSERT_TRUE(Until([&] { return ada->Has("That order was refused"); })) << ada->Text();
  b_->Say("Bob", "say still free");
  EXPECT_TRUE(bob->Has("You say, 'still free'")) << bob->Text();
  EXPECT_TRUE(b_->audit.Has("mute", "refused"));
  EXPECT_TRUE(a_->audit.Has("mute", "failed"));
}

TEST_F(FleetCommsTest, AnOrderIsBoundedOnReceiptNotOnlyWhereItWasIssued) {
  MakeShards();
  auto bob = b_->Login("Bob", "gate-2");
  const auto until = [this](const std::function<bool()>& done) { return Until(done); };
  const int64_t now =
      std::chrono::duration_cast<std::chrono::milliseconds>(env_.clock.WallNow().time_since_epoch())
          .count();
  world::StaffOrder order;
  order.issuer = "Ada";
  order.target = "bob";
  order.issuer_assertion =
      auth::IssueAssertion(env_.account_key, 1, "Ada", "gate-1", 60'000, env_.clock, kRoleAdmin);
  // A ten-year mute, signed by a real admin, is still more than a world allows.
  order.kind = world::StaffKind::kMute;
  order.mute_until_unix_ms = now + int64_t{10} * 365 * 24 * 3600 * 1000;
  EXPECT_EQ(SendRawOrder(env_, *b_, order, until).status.code(), StatusCode::kInvalidArgument);
  b_->Say("Bob", "say free");
  EXPECT_TRUE(bob->Has("You say, 'free'")) << bob->Text();
  EXPECT_TRUE(b_->audit.Has("mute", "refused"));
  // A transfer to a room this world's pack does not have.
  order.kind = world::StaffKind::kTransfer;
  order.room = world::Ref{"nowhere", "void"};
  EXPECT_EQ(SendRawOrder(env_, *b_, order, until).status.code(), StatusCode::kInvalidArgument);
  // A reason past the bound is cut (between characters) and the order applied.
  order.kind = world::StaffKind::kMute;
  order.mute_until_unix_ms = now + 60'000;
  order.reason = "x";
  for (int i = 0; i < 300; ++i) order.reason += "\xc3\xa9";
  EXPECT_TRUE(SendRawOrder(env_, *b_, order, until).status.ok());
  ASSERT_TRUE(Until([&] { return bob->Has("Ada has muted you"); })) << bob->Text();
  for (const auto& record : b_->audit.records()) {
    EXPECT_TRUE(IsValidUtf8(record.detail));
    EXPECT_LE(record.detail.size(), limits::kAuditDetailBytesMax);
  }
  EXPECT_TRUE(b_->audit.Has("mute", "applied; from world"));
}

TEST_F(FleetCommsTest, BothWorldsAuditAnOrderAcrossThemAndATimeoutIsAnUnknownOutcome) {
  ShardOptions quick;
  quick.tell_timeout_ms = 100;
  MakeShards(quick);
  auto ada = a_->Login("Ada", "gate-1", kRoleAdmin);
  auto bob = b_->Login("Bob", "gate-2");
  a_->Say("Ada", "boot bob enough");
  ASSERT_TRUE(Until([&] { return ada->Has("You remove Bob from the game."); })) << ada->Text();
  EXPECT_TRUE(a_->audit.Has("kick", "ok"));
  EXPECT_TRUE(b_->audit.Has("kick", "applied; from world shard-a"));
  // Something subscribes to ghost's subject but never answers.
  bus::InProcessBus stranger(env_.hub);
  auto silent = stranger.Subscribe(a_->comms->PlayerSubject("ghost"), [](const bus::Message&) {});
  ASSERT_TRUE(silent.ok());
  a_->Say("Ada", "boot ghost");
  ASSERT_TRUE(Until([&] { return a_->audit.Has("kick", "unknown outcome"); })) << ada->Text();
  EXPECT_TRUE(ada->Has("may or may not have been applied")) << ada->Text();
}

// ---------------------------------------------------------------- tells

TEST_F(FleetCommsTest, TellReachesAPlayerOnTheOtherShardAndTheReplyComesBack) {
  MakeShards();
  auto alice = a_->Login("Alice", "gate-1");
  auto bob = b_->Login("Bob", "gate-2");
  a_->Say("Alice", "tell bob the ferry leaves at noon");
  ASSERT_TRUE(Until([&] {
    return alice->Has("You tell Bob, 'the ferry leaves at noon'") &&
           bob->Has("Alice tells you, 'the ferry leaves at noon'");
  })) << "alice: "
      << alice->Text() << "\nbob: " << bob->Text();

  // Bob's reply goes back the same way (Alice is resident on shard A).
  b_->Say("Bob", "reply I'll be there");
  ASSERT_TRUE(Until([&] {
    return bob->Has("You tell Alice, 'I'll be there'") &&
           alice->Has("Bob tells you, 'I'll be there'");
  })) << "alice: "
      << alice->Text() << "\nbob: " << bob->Text();
  EXPECT_EQ(Count(bob->Text(), "tells you, 'the ferry leaves at noon'"), 1u);
  EXPECT_THAT(a_->MetricsText(), HasSubstr("telos_comms_tells_total{outcome=\"delivered\"} 1"));
}

TEST_F(FleetCommsTest, TellToSomeoneNobodyHostsAsksThePlacementRecord) {
  MakeShards();
  auto alice = a_->Login("Alice", "gate-1");
  // No record at all: no such player.
  a_->Say("Alice", "tell Carol hello");
  ASSERT_TRUE(Until([&] { return alice->Has("There is no player called 'Carol'."); }))
      << alice->Text();

  // A record (logged out: tombstoned) but no shard answering: not online, and mail reaches them.
  ASSERT_TRUE(env_.directory.RegisterPlacement("dave", {"lobby", 1, "", "shard-b"}).ok());
  ASSERT_TRUE(env_.directory.TombstonePlacement("dave", "shard-b", 1, "", "lobby").ok());
  a_->Say("Alice", "tell Dave hello");
  ASSERT_TRUE(Until([&] {
    return alice->Has("Dave is not online. ('mail send Dave <message>' reaches them later.)");
  })) << alice->Text();
  EXPECT_THAT(alice->Text(), Not(HasSubstr("There is no player called 'Dave'")));
  EXPECT_THAT(a_->MetricsText(), HasSubstr("telos_comms_tells_total{outcome=\"refused\"} 2"));
}

TEST_F(FleetCommsTest, TellWhileTheBusIsDownIsRefusedAndWorksOnceItIsBack) {
  MakeShards();
  auto alice = a_->Login("Alice", "gate-1");
  auto bob = b_->Login("Bob", "gate-2");
  a_->bus.SetConnected(false);
  a_->Say("Alice", "tell bob are you there?");
  ASSERT_TRUE(Until([&] { return alice->Has("cannot reach the rest of the world"); }))
      << alice->Text();
  EXPECT_THAT(alice->Text(), Not(HasSubstr("You tell Bob")));

  a_->bus.SetConnected(true);
  a_->Say("Alice", "tell bob back now");
  ASSERT_TRUE(Until([&] { return bob->Has("Alice tells you, 'back now'"); })) << bob->Text();
  EXPECT_THAT(bob->Text(), Not(HasSubstr("are you there?")));
}

TEST_F(FleetCommsTest, ChannelWhileTheBusIsDownIsHeardOnThisShardOnly) {
  MakeShards();
  auto alice = a_->Login("Alice", "gate-1");
  auto carol = a_->Login("Carol", "gate-1");
  auto bob = b_->Login("Bob", "gate-2");
  a_->bus.SetConnected(false);
  a_->Say("Alice", "ooc is this thing on?");
  EXPECT_THAT(alice->Text(), HasSubstr("[ooc] Alice: is this thing on?"));
  EXPECT_THAT(alice->Text(), HasSubstr("Only players on this shard heard that"));
  EXPECT_THAT(carol->Text(), HasSubstr("[ooc] Alice: is this thing on?"));
  EXPECT_THAT(carol->Text(), Not(HasSubstr("Only players on this shard")));

  a_->bus.SetConnected(true);
  a_->Say("Alice", "ooc and now?");
  ASSERT_TRUE(Until([&] { return bob->Has("[ooc] Alice: and now?"); })) << bob->Text();
  EXPECT_THAT(bob->Text(), Not(HasSubstr("is this thing on?")));  // nothing was queued
  EXPECT_EQ(Count(alice->Text(), "Only players on this shard"), 1u);
}

TEST_F(FleetCommsTest, TellToALinkDeadPlayerIsRefusedUntilTheyAttachAgain) {
  MakeShards();
  auto alice = a_->Login("Alice", "gate-1");
  auto bob = b_->Login("Bob", "gate-2");
  b_->comms->LinkDead("bob");
  a_->Say("Alice", "tell bob wake up");
  ASSERT_TRUE(Until([&] { return alice->Has("cannot hear you right now."); })) << alice->Text();
  EXPECT_THAT(alice->Text(), AnyOf(HasSubstr("Bob cannot hear you right now."),
                                   HasSubstr("bob cannot hear you right now.")));
  EXPECT_THAT(alice->Text(), Not(HasSubstr("You tell Bob")));
  // Shard B answered without handing the tell to its host.
  b_->executor.RunReady();
  EXPECT_THAT(bob->Text(), Not(HasSubstr("wake up")));

  b_->comms->Attached("bob", "gate-3");
  a_->Say("Alice", "tell bob welcome back");
  ASSERT_TRUE(Until([&] { return bob->Has("Alice tells you, 'welcome back'"); })) << bob->Text();
}

TEST_F(FleetCommsTest, TellNobodyAnswersInTimeCannotBeHeard) {
  ShardOptions quick;
  quick.tell_timeout_ms = 100;
  MakeShards(quick);
  auto alice = a_->Login("Alice", "gate-1");
  // Something subscribes to ghost's subject but never answers.
  bus::InProcessBus stranger(env_.hub);
  auto silent = stranger.Subscribe(a_->comms->PlayerSubject("ghost"), [](const bus::Message&) {});
  ASSERT_TRUE(silent.ok());
  a_->Say("Alice", "tell ghost boo");
  ASSERT_TRUE(Until([&] { return alice->Has("ghost cannot hear you right now."); }))
      << alice->Text();
}

// ---------------------------------------------------------------- parties

TEST_F(FleetCommsTest, APartyFormsAcrossShardsAndItsChatReachesEveryMember) {
  MakeShards();
  auto alice = a_->Login("Alice", "gate-1");
  auto bob = b_->Login("Bob", "gate-2");
  auto carol = b_->Login("Carol", "gate-2");
  a_->Say("Alice", "group invite bob");
  ASSERT_TRUE(Until([&] { return bob->Has("Alice invites you to join their party"); }))
      << bob->Text();
  b_->Say("Bob", "group accept");
  ASSERT_TRUE(Until([&] {
    return bob->Has("You join Alice's party.") && alice->Has("Bob joins your party.");
  })) << "alice: "
      << alice->Text() << "\nbob: " << bob->Text();

  a_->Say("Alice", "gtell to the docks");
  ASSERT_TRUE(Until([&] { return bob->Has("[party] Alice: to the docks"); })) << bob->Text();
  b_->Say("Bob", "gtell on my way");
  ASSERT_TRUE(Until([&] { return alice->Has("[party] Bob: on my way"); })) << alice->Text();
  EXPECT_THAT(carol->Text(), Not(HasSubstr("to the docks")));
  EXPECT_THAT(a_->MetricsText(),
              HasSubstr("telos_comms_party_messages_total{outcome=\"delivered\"}"));

  // Leaving from the far shard reaches the leader.
  b_->Say("Bob", "group leave");
  ASSERT_TRUE(Until([&] { return alice->Has("Bob leaves your party."); })) << alice->Text();
}

TEST_F(FleetCommsTest, APartyInviteToSomeoneNobodyHostsSaysWhyAndFoundsNoParty) {
  MakeShards();
  auto alice = a_->Login("Alice", "gate-1");
  a_->Say("Alice", "group invite carol");
  ASSERT_TRUE(Until([&] { return alice->Has("There is no player called 'carol'."); }))
      << alice->Text();
  ASSERT_TRUE(env_.directory.RegisterPlacement("dave", {"lobby", 1, "", "shard-b"}).ok());
  ASSERT_TRUE(env_.directory.TombstonePlacement("dave", "shard-b", 1, "", "lobby").ok());
  a_->Say("Alice", "group invite dave");
  ASSERT_TRUE(Until([&] { return alice->Has("dave is not online."); })) << alice->Text();
  a_->Say("Alice", "group");
  ASSERT_TRUE(Until([&] { return alice->Has("You are not in a party."); })) << alice->Text();
}

// ---------------------------------------------------------------- channels

TEST_F(FleetCommsTest, ChannelLinesCrossShardsAndEachIsHeardOnce) {
  MakeShards();
  auto alice = a_->Login("Alice", "gate-1");
  auto bob = b_->Login("Bob", "gate-2");
  a_->Say("Alice", "ooc hello fleet");
  ASSERT_TRUE(Until([&] { return bob->Has("[ooc] Alice: hello fleet"); })) << bob->Text();

  // Shard A's own line came back to it on the bus too. A later line from the same publisher
  // arrives after it, so once the marker is in, an echo would have been delivered already.
  ASSERT_TRUE(a_->bus
                  .Publish(std::string(kPrefix) + ".chan.ooc",
                           R"({"origin":"shard-z","channel":"ooc","from":"Zed","text":"marker"})")
                  .ok());
  ASSERT_TRUE(
      Until([&] { return alice->Has("[ooc] Zed: marker") && bob->Has("[ooc] Zed: marker"); }));
  EXPECT_EQ(Count(alice->Text(), "[ooc] Alice: hello fleet"), 1u) << alice->Text();
  EXPECT_EQ(Count(bob->Text(), "[ooc] Alice: hello fleet"), 1u) << bob->Text();

  b_->Say("Bob", "ooc hi from b");
  ASSERT_TRUE(Until([&] { return alice->Has("[ooc] Bob: hi from b"); })) << alice->Text();
  EXPECT_EQ(Count(bob->Text(), "[ooc] Bob: hi from b"), 1u);
  EXPECT_THAT(b_->MetricsText(), HasSubstr("telos_comms_channel_lines_total 2"));  // Alice, Zed
}

TEST_F(FleetCommsTest, LinesWithInvalidUtf8CrossShardsRepaired) {
  MakeShards();
  auto alice = a_->Login("Alice", "gate-1");
  auto bob = b_->Login("Bob", "gate-2");
  a_->Say("Alice", "ooc cut \xE2\x82 \"q\" \\ end");
  ASSERT_TRUE(Until([&] { return bob->Has("[ooc] Alice: cut \xEF\xBF\xBD \"q\" \\ end"); }))
      << bob->Text();
}

TEST_F(FleetCommsTest, StrayChannelMessagesAreIgnored) {
  MakeShards();
  auto alice = a_->Login("Alice", "gate-1");
  const std::string subject = std::string(kPrefix) + ".chan.ooc";
  ASSERT_TRUE(b_->bus.Publish(subject, "not json at all").ok());
  ASSERT_TRUE(b_->bus.Publish(subject, R"(["an", "array"])").ok());
  ASSERT_TRUE(
      b_->bus.Publish(subject, R"({"origin":"shard-z","from":"Zed","text":"no channel"})").ok());
  ASSERT_TRUE(
      b_->bus.Publish(subject, R"({"origin":"shard-z","channel":"ooc","from":"Zed","text":"ok"})")
          .ok());
  ASSERT_TRUE(Until([&] { return alice->Has("[ooc] Zed: ok"); })) << alice->Text();
  EXPECT_THAT(alice->Text(), Not(HasSubstr("no channel")));
  EXPECT_EQ(Count(alice->Text(), "[ooc]"), 1u) << alice->Text();
}

// ---------------------------------------------------------------- announcements

TEST_F(FleetCommsTest, AnAnnouncementReachesItsScopeOnEveryShardOnce) {
  MakeShards();
  auto alice = a_->Login("Alice", "gate-1");
  auto bob = b_->Login("Bob", "gate-2");
  EXPECT_TRUE(a_->host->Announce("", "The realm trembles."));
  ASSERT_TRUE(Until([&] { return bob->Has("The realm trembles."); })) << bob->Text();
  // Zone-scoped: the lobby is where both stand; a zone nobody runs reaches nobody.
  EXPECT_TRUE(b_->host->Announce("moor", "The moor is quiet."));
  EXPECT_TRUE(b_->host->Announce("lobby", "The atrium doors open."));
  ASSERT_TRUE(Until([&] { return alice->Has("The atrium doors open."); })) << alice->Text();
  // A marker from a third origin, published after: once it is in, any echo would be too.
  ASSERT_TRUE(
      a_->bus.Publish(AnnouncementSubject(kPrefix), EncodeAnnouncement({"shard-z", "", "marker"}))
          .ok());
  ASSERT_TRUE(Until([&] { return alice->Has("marker") && bob->Has("marker"); }));
  EXPECT_EQ(Count(alice->Text(), "The realm trembles."), 1u) << alice->Text();
  EXPECT_EQ(Count(bob->Text(), "The realm trembles."), 1u) << bob->Text();
  EXPECT_EQ(Count(bob->Text(), "The atrium doors open."), 1u) << bob->Text();
  EXPECT_THAT(alice->Text() + bob->Text(), Not(HasSubstr("The moor is quiet.")));
  // Shard B received two from elsewhere (shard A's and the marker); its own is not counted.
  EXPECT_THAT(b_->MetricsText(), HasSubstr("telos_comms_announcements_total 2"));
}

TEST_F(FleetCommsTest, AnAnnouncementWhileTheBusIsDownIsHeardOnThisShardOnly) {
  MakeShards();
  auto alice = a_->Login("Alice", "gate-1");
  auto bob = b_->Login("Bob", "gate-2");
  a_->bus.SetConnected(false);
  EXPECT_FALSE(a_->host->Announce("", "Only shard A."));
  ASSERT_TRUE(Until([&] { return alice->Has("Only shard A."); }));
  a_->bus.SetConnected(true);
  EXPECT_TRUE(a_->host->Announce("", "Everyone again."));
  ASSERT_TRUE(Until([&] { return bob->Has("Everyone again."); }));
  EXPECT_THAT(bob->Text(), Not(HasSubstr("Only shard A.")));
}

TEST_F(FleetCommsTest, TheDirectorsAnnouncementOfAnAppliedEventReachesEveryShard) {
  MakeShards();
  auto alice = a_->Login("Alice", "gate-1");
  auto bob = b_->Login("Bob", "gate-2");
  auto store = store::SqliteStore::Open({.path = ":memory:"}, env_.clock);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const store::GameEvent kill{"shard-a", 1, "boss_kill", "lobby:abbot", "Alice", 1'000};
  ASSERT_TRUE((*store)->records().Apply("director-tally", kill).ok());
  bus::InProcessBus director_bus(env_.hub);
  RecordsAnnouncer announcer(director_bus, kPrefix, env_.content.pack, (*store)->records(),
                             env_.log);
  announcer.OnApplied(kill);
  ASSERT_TRUE(Until([&] {
    return alice->Has("has fallen to Alice, the first time") &&
           bob->Has("has fallen to Alice, the first time");
  })) << bob->Text();
  ASSERT_TRUE((*store)
                  ->records()
                  .Apply("director-tally", {"shard-b", 1, "boss_kill", "lobby:abbot", "Bob", 2'000})
                  .ok());
  announcer.OnApplied({"shard-b", 1, "boss_kill", "lobby:abbot", "Bob", 2'000});
  ASSERT_TRUE(Until([&] { return alice->Has("has fallen to Bob (2 times in all)."); }))
      << alice->Text();
}

// ---------------------------------------------------------------- mail pings

TEST_F(FleetCommsTest, MailPingReachesAConnectedRecipientWhosePresenceWasLost) {
  MakeShards();
  auto bob = b_->Login("Bob", "gate-2");
  // A directory blip lost the presence write (it is refreshed only every third of its TTL).
  ASSERT_TRUE(env_.directory.ClearPresence("bob", "gate-2").ok());
  ASSERT_FALSE(PresenceOf("bob").has_value());
  a_->comms->PingMail("Bob", "Alice");
  ASSERT_TRUE(Until([&] { return bob->Has(world::PingingMail::PingLine("Alice")); }))
      << bob->Text();
}

TEST_F(FleetCommsTest, MailPingReachesAConnectedRecipientOnTheOtherShard) {
  MakeShards();
  auto bob = b_->Login("Bob", "gate-2");
  a_->comms->PingMail("Bob", "Alice");
  ASSERT_TRUE(Until([&] { return bob->Has(world::PingingMail::PingLine("Alice")); }))
      << bob->Text();
  EXPECT_THAT(a_->MetricsText(), HasSubstr("telos_comms_mail_pings_total 1"));
}

TEST_F(FleetCommsTest, MailPingIsShownOnlyToConnectedRecipients) {
  MakeShards();
  auto carl = b_->Login("Carl", "");  // hosted, waiting for a gate
  auto dora = b_->Login("Dora", "gate-3");
  b_->comms->LinkDead("dora");
  auto bob = b_->Login("Bob", "gate-2");
  // The publishes run inline here, in order. The hosting shard decides, not the directory.
  a_->comms->PingMail("Carl", "Alice");
  a_->comms->PingMail("Dora", "Alice");
  a_->comms->PingMail("Nobody", "Alice");
  a_->comms->PingMail("Bob", "Alice");
  EXPECT_THAT(a_->MetricsText(), HasSubstr("telos_comms_mail_pings_total 4"));
  // Bob's ping was published last to the same bus client, so anything for Carl or Dora would
  // have been delivered to shard B's host before it.
  ASSERT_TRUE(Until([&] { return bob->Has("You have new mail from Alice."); })) << bob->Text();
  b_->executor.RunReady();
  EXPECT_THAT(carl->Text(), Not(HasSubstr("new mail")));
  EXPECT_THAT(dora->Text(), Not(HasSubstr("new mail")));
}

// ---------------------------------------------------------------- presence

TEST_F(FleetCommsTest, PresenceFollowsResidency) {
  ShardOptions pooled;
  pooled.blocking_pool = true;  // as in production: directory calls on another thread
  MakeShards({}, pooled);
  b_->comms->Arrived("bob", "gate-1");
  ASSERT_TRUE(PresenceBecomes("bob", "gate-1"));
  EXPECT_EQ(PresenceOf("bob")->shard, "shard-b");
  EXPECT_GT(PresenceOf("bob")->ttl_ms, 0);

  b_->comms->Attached("bob", "gate-2");  // reconnected through another gate
  ASSERT_TRUE(PresenceBecomes("bob", "gate-2"));
  b_->comms->LinkDead("bob");
  ASSERT_TRUE(PresenceBecomes("bob", ""));
  b_->comms->Attached("bob", "gate-3");
  ASSERT_TRUE(PresenceBecomes("bob", "gate-3"));
  b_->comms->Left("bob");
  ASSERT_TRUE(PresenceBecomes("bob", ""));

  // No gate yet: no presence. Attached for someone not resident here: ignored.
  b_->comms->Arrived("carl", "");
  b_->comms->Attached("zed", "gate-9");
  b_->comms->Arrived("dora", "gate-4");  // queued after the two above on the one pool thread
  ASSERT_TRUE(PresenceBecomes("dora", "gate-4"));
  EXPECT_FALSE(PresenceOf("carl").has_value());
  EXPECT_FALSE(PresenceOf("zed").has_value());
}

TEST_F(FleetCommsTest, LinkDeadDoesNotClearPresenceAnotherGateNowHolds) {
  MakeShards();
  b_->comms->Arrived("bob", "gate-1");
  // The player connected through gate-2 elsewhere meanwhile (as seen by the directory).
  ASSERT_TRUE(env_.directory.SetPresence("bob", "gate-2", "shard-a", 60'000).ok());
  b_->comms->LinkDead("bob");
  ASSERT_TRUE(PresenceOf("bob").has_value());
  EXPECT_EQ(PresenceOf("bob")->gate, "gate-2");
}

TEST_F(FleetCommsTest, PresenceOfConnectedPlayersIsRefreshedBeforeItExpires) {
  ShardOptions short_ttl;
  short_ttl.presence_ttl_ms = 300;  // refreshed every 100 ms of real time
  MakeShards({}, short_ttl);
  b_->comms->Arrived("bob", "gate-1");
  b_->comms->Arrived("carl", "gate-2");
  b_->comms->LinkDead("carl");
  ASSERT_TRUE(PresenceOf("bob").has_value());
  env_.clock.Advance(std::chrono::milliseconds(301));
  ASSERT_FALSE(PresenceOf("bob").has_value());  // expired on the directory's clock

  const auto deadline = std::chrono::steady_clock::now() + kWait;
  while (!PresenceOf("bob").has_value() && std::chrono::steady_clock::now() < deadline) {
    env_.io.run_one_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(PresenceOf("bob").has_value());
  EXPECT_EQ(PresenceOf("bob")->gate, "gate-1");
  EXPECT_EQ(PresenceOf("bob")->ttl_ms, 300);
  EXPECT_FALSE(PresenceOf("carl").has_value());  // link-dead: not refreshed
}

// ---------------------------------------------------------------- subjects and lifecycle

TEST_F(FleetCommsTest, PlayerSubjectIsOneTokenDerivedFromTheName) {
  MakeShards();
  EXPECT_EQ(a_->comms->PlayerSubject("Bob"), "telos.test.player.bob");
  EXPECT_EQ(a_->comms->PlayerSubject("bob"), a_->comms->PlayerSubject("BOB"));
  // Whatever a player types, it cannot add tokens or wildcards to the subject.
  const std::string hostile = a_->comms->PlayerSubject("x.*.>");
  EXPECT_TRUE(bus::ValidSubject(hostile, /*allow_wildcards=*/false)) << hostile;
  EXPECT_EQ(Count(hostile, "."), 3u) << hostile;
  EXPECT_EQ(SubjectPrefixFor("prod"), "telos.prod");
  EXPECT_EQ(SubjectPrefixFor("eu.west"), "telos.eu_2ewest");
}

TEST_F(FleetCommsTest, StoppedCommsReceiveNothing) {
  MakeShards();
  auto alice = a_->Login("Alice", "gate-1");
  auto bob = b_->Login("Bob", "gate-2");
  a_->comms->Stop();
  // Alice's subject has no subscriber any more: nobody hosts her, as far as the fleet can tell.
  b_->Say("Bob", "tell alice still there?");
  ASSERT_TRUE(Until([&] { return bob->Has("There is no player called 'alice'."); })) << bob->Text();
  b_->Say("Bob", "ooc anyone?");
  a_->executor.RunReady();
  EXPECT_THAT(alice->Text(), Not(HasSubstr("still there?")));
  EXPECT_THAT(alice->Text(), Not(HasSubstr("anyone?")));
  // And residency reported after Stop subscribes nothing.
  a_->comms->Arrived("carol", "gate-1");
  EXPECT_FALSE(PresenceOf("carol").has_value());
}

// A directory whose presence writes wait until the test lets them go, then fail (so the task
// goes on to log through the comms object once it is released).
class HeldPresenceDirectory final : public directory::ForwardingDirectory {
 public:
  using ForwardingDirectory::ForwardingDirectory;
  Status SetPresence(std::string_view, std::string_view, std::string_view, int64_t) override {
    entered.set_value();
    release.get_future().wait();
    return Status::Unavailable("injected: presence write failed");
  }
  std::promise<void> entered, release;
};

TEST_F(FleetCommsTest, StopWaitsForAPresenceWriteInFlight) {
  HeldPresenceDirectory held(env_.directory);
  ShardOptions options;
  options.blocking_pool = true;
  options.directory = &held;
  a_ = std::make_unique<Shard>(env_, "shard-a", options);
  a_->Login("Alice", "gate-1");  // its presence write runs on the pool and waits inside
  held.entered.get_future().wait();
  auto stopping = std::async(std::launch::async, [&] { a_->comms->Stop(); });
  // Stop must not return (and let the comms be destroyed) while the write is still inside it.
  EXPECT_EQ(stopping.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
  held.release.set_value();
  EXPECT_EQ(stopping.wait_for(kWait), std::future_status::ready);
  a_.reset();
}

}  // namespace
}  // namespace telos::shard
