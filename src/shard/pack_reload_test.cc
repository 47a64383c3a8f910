// Content hot reload across two shards in one process: two WorldHosts (zones on a
// ManualExecutor each, pumped by the test), each with its own content folder and reload agent
// on an InProcessBus client of one hub, and one MemoryDirectory. The coordinator (ReloadFleet)
// blocks, so it runs on a thread of its own while the test pumps the zones until it is done.
#include "telos/shard/pack_reload.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <random>
#include <sstream>
#include <thread>

#include "telos/base/assert.h"
#include "telos/base/clock.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/bus/in_process_bus.h"
#include "telos/directory/memory_directory.h"
#include "telos/world/character_state.h"
#include "telos/world/executor.h"

namespace telos::shard {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

constexpr auto kWait = std::chrono::seconds(20);
constexpr const char* kPrefix = "telos.reloadtest";

const char* kLobby = R"([zone]
id = "lobby"
name = "The Lobby"
kind = "lobby"
reset_minutes = 5

[[rooms]]
id = "atrium"
name = "Bright Atrium"
description = "Sunlight falls through a glass roof."
flags = ["safe"]

  [[rooms.exits]]
  dir = "east"
  to = "town:square"
)";

const char* kTown = R"([zone]
id = "town"
name = "Harrowgate"
kind = "town"
reset_minutes = 5

[[rooms]]
id = "square"
name = "Market Square"
description = "Stalls crowd the square."

  [[rooms.exits]]
  dir = "west"
  to = "lobby:atrium"
)";

// The town, its square described anew.
std::string EditedTown() {
  std::string town = kTown;
  town.replace(town.find("Stalls crowd"), 12, "Lanterns light");
  return town;
}

// A content folder, removed on destruction.
class PackDir {
 public:
  PackDir() {
    std::random_device device;
    dir_ = std::filesystem::temp_directory_path() /
           ("telos_pack_reload_" + std::to_string(device()) + std::to_string(device()));
    Write("pack.toml", "name = \"reload\"\nversion = \"0.1.0\"\nstart_room = \"lobby:atrium\"\n");
    Write("zones/lobby.toml", kLobby);
    Write("zones/town.toml", kTown);
  }
  ~PackDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  void Write(const std::string& rel, const std::string& text) const {
    std::filesystem::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << text;
  }
  std::shared_ptr<const world::Pack> Load() const {
    std::vector<world::Problem> problems;
    auto loaded = world::LoadPack(dir_, &problems);
    RELEASE_ASSERT(loaded.ok(), loaded.status().ToString());
    return std::make_shared<const world::Pack>(std::move(loaded).value());
  }
  std::string path() const { return dir_.string(); }

 private:
  std::filesystem::path dir_;
};

class Sink final : public world::PlayerSink {
 public:
  void Deliver(world::PlayerOutput output) override {
    std::lock_guard lock(mu_);
    text_ += output.text;
    if (output.disconnect) disconnected_ = true;
  }
  bool Has(const std::string& needle) const {
    std::lock_guard lock(mu_);
    return text_.find(needle) != std::string::npos;
  }
  bool disconnected() const {
    std::lock_guard lock(mu_);
    return disconnected_;
  }

 private:
  mutable std::mutex mu_;
  std::string text_;
  bool disconnected_ = false;
};

class NoPersistence final : public world::CharacterPersistence {
 public:
  void RequestSave(world::CharacterSnapshot) override {}
};
class EmptyMail final : public world::MailPort {
 public:
  void Send(std::string, std::string, std::string, std::string,
            std::function<void(Status)> done) override {
    done(Status::Unavailable("no post office"));
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
    done(Status::Unavailable("no passwords"));
  }
};

struct Env {
  ManualClock clock;
  Logger log{"pack_reload_test", LogLevel::kError};
  directory::MemoryDirectory directory{clock};
  std::shared_ptr<bus::InProcessBus::Hub> hub = bus::InProcessBus::NewHub();
};

// One world: its content folder, host, bus client and reload agent.
class World {
 public:
  // `registered`: in the directory at once (else once Register() is called).
  World(Env& env, const std::string& id, bool registered = true)
      : id_(id), executor(env.clock), bus(env.hub) {
    world::ZoneDeps deps;
    deps.clock = &env.clock;
    deps.logger = &env.log;
    deps.metrics = &metrics_;
    deps.persistence = &persistence_;
    deps.mail = &mail_;
    deps.passwords = &passwords_;
    host = std::make_unique<world::WorldHost>(
        content.Load(), deps,
        [this](const std::string&) {
          return std::shared_ptr<world::Executor>(std::shared_ptr<world::Executor>(), &executor);
        },
        7);
    RELEASE_ASSERT(host->StartAllZones().ok(), "zones start");
    executor.RunDue();
    agent = std::make_unique<PackReloadAgent>(
        PackReloadAgentOptions{
            .shard_id = id, .subject_prefix = kPrefix, .content_dir = content.path()},
        bus, *host, [](std::function<void()> task) { task(); },
        [this] {
          return refusal.load() ? std::string("postgres is down: hot reload is disabled")
                                : std::string();
        },
        env.log);
    RELEASE_ASSERT(agent->Start().ok(), "agent subscribes");
    if (registered) Register(env);
  }
  void Register(Env& env) {
    RELEASE_ASSERT(env.directory.RegisterShard(id_, "inproc:" + id_, 60'000).ok(), "registered");
  }
  ~World() {
    agent->Stop();
    for (const std::string& zone : host->RunningZones()) {
      (void)host->StopZone(zone, [](std::vector<world::PlayerTransfer>) {});
    }
    executor.RunReady();
  }

  std::shared_ptr<Sink> Login(const std::string& name, const std::string& room) {
    auto sink = std::make_shared<Sink>();
    world::CharacterState state = world::NewCharacter(name, *world::ParseRef(room, ""));
    RELEASE_ASSERT(host->Login(std::move(state), sink).ok(), "login");
    executor.RunReady();
    return sink;
  }

  PackDir content;
  std::atomic<bool> refusal{false};

 private:
  std::string id_;
  Metrics metrics_;
  NoPersistence persistence_;
  EmptyMail mail_;
  NoPasswords passwords_;

 public:
  world::ManualExecutor executor;
  std::unique_ptr<world::WorldHost> host;
  bus::InProcessBus bus;
  std::unique_ptr<PackReloadAgent> agent;
};

class PackReloadFleetTest : public ::testing::Test {
 protected:
  PackReloadFleetTest() : a_(env_, "world-a"), b_(env_, "world-b"), ctl_bus_(env_.hub) {}

  // Writes `file` on both worlds' disks.
  void WriteEverywhere(const std::string& rel, const std::string& text) {
    a_.content.Write(rel, text);
    b_.content.Write(rel, text);
  }

  // Runs the coordinator on its own thread, pumping both worlds' zones until it answers.
  // `before_pump` (if set) runs first in each round and says whether to pump in that round.
  FleetReloadReport Reload(const world::Pack& pack,
                           const std::function<bool()>& before_pump = nullptr) {
    auto future = std::async(std::launch::async, [&] {
      return ReloadFleet(ctl_bus_, env_.directory, pack, kPrefix, env_.log);
    });
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    while (future.wait_for(std::chrono::milliseconds(1)) != std::future_status::ready) {
      if (!before_pump || before_pump()) {
        a_.executor.RunReady();
        b_.executor.RunReady();
      }
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "the reload did not finish";
        break;
      }
    }
    return future.get();
  }

  std::string Lines(const FleetReloadReport& report) {
    std::string out;
    for (const std::string& line : report.lines) out += line + "\n";
    return out;
  }

  Env env_;
  World a_;
  World b_;
  bus::InProcessBus ctl_bus_;
};

TEST_F(PackReloadFleetTest, EveryWorldReloadsAndThePackVersionIsRecorded) {
  auto alice = a_.Login("Alice", "town:square");
  const std::string old_hash = a_.host->pack()->content_hash;
  PackDir edited;
  edited.Write("zones/town.toml", EditedTown());
  WriteEverywhere("zones/town.toml", EditedTown());
  const auto next = edited.Load();

  const FleetReloadReport report = Reload(*next);
  ASSERT_TRUE(report.status.ok()) << report.status.ToString() << "\n" << Lines(report);
  EXPECT_EQ(a_.host->pack()->content_hash, next->content_hash);
  EXPECT_EQ(b_.host->pack()->content_hash, next->content_hash);
  EXPECT_THAT(Lines(report), HasSubstr("world-a: now runs"));
  EXPECT_THAT(Lines(report), HasSubstr("rebuilt town; 1 player(s) kept in place"));
  auto version = env_.directory.ReadPackVersion();
  ASSERT_TRUE(version.ok() && version->has_value());
  EXPECT_EQ(**version, (directory::PackVersion{next->content_hash, ""}));

  // Alice is where she was, connected, and sees the new text.
  EXPECT_FALSE(alice->disconnected());
  EXPECT_EQ(a_.host->ZoneOf("Alice"), "town");
  ASSERT_TRUE(a_.host->Submit("Alice", "look").ok());
  a_.executor.RunReady();
  EXPECT_TRUE(alice->Has("Lanterns light the square."));

  // Afterwards a world on the old pack is refused; mid-reload it would have been accepted.
  EXPECT_THAT(PackRefusal(old_hash, *version, {next->content_hash}, false),
              HasSubstr("the fleet runs pack " + next->content_hash));
  EXPECT_EQ(PackRefusal(old_hash, directory::PackVersion{next->content_hash, old_hash},
                        {next->content_hash}, false),
            "");
}

TEST_F(PackReloadFleetTest, AWorldJoiningMidReloadIsReloadedToo) {
  // World C boots on the old pack (accepted mid-reload) once the directory records the reload
  // as under way; its disk already has the new pack, as every world's must.
  World c(env_, "world-c", /*registered=*/false);
  auto carol = c.Login("Carol", "town:square");
  PackDir edited;
  edited.Write("zones/town.toml", EditedTown());
  WriteEverywhere("zones/town.toml", EditedTown());
  c.content.Write("zones/town.toml", EditedTown());
  const auto next = edited.Load();
  ASSERT_NE(c.host->pack()->content_hash, next->content_hash);

  bool joined = false;
  const FleetReloadReport report = Reload(*next, [&] {
    if (!joined) {
      // Nothing of the apply can finish before the worlds are pumped: C joins while the
      // coordinator waits for the answers of the worlds it listed first.
      auto version = env_.directory.ReadPackVersion();
      if (!version.ok() || !version->has_value() || !(*version)->reloading()) return false;
      c.Register(env_);
      joined = true;
    }
    c.executor.RunReady();
    return true;
  });
  EXPECT_TRUE(joined);
  ASSERT_TRUE(report.status.ok()) << report.status.ToString() << "\n" << Lines(report);
  EXPECT_EQ(c.host->pack()->content_hash, next->content_hash);
  EXPECT_THAT(Lines(report), HasSubstr("world-c: now runs"));
  auto version = env_.directory.ReadPackVersion();
  ASSERT_TRUE(version.ok() && version->has_value());
  EXPECT_EQ(**version, (directory::PackVersion{next->content_hash, ""}));
  EXPECT_FALSE(carol->disconnected());
  EXPECT_EQ(c.host->ZoneOf("Carol"), "town");
}

TEST_F(PackReloadFleetTest, ABadPackOnOneWorldIsRefusedWithItsProblemsAndNothingChanges) {
  const auto a_before = a_.host->pack();
  const auto b_before = b_.host->pack();
  const auto town_before = a_.host->FindZone("town");
  const std::string good = EditedTown();
  PackDir edited;
  edited.Write("zones/town.toml", good);
  const auto next = edited.Load();
  a_.content.Write("zones/town.toml", good);
  // World B's copy names an exit to a room that does not exist.
  b_.content.Write("zones/town.toml",
                   good + "\n  [[rooms.exits]]\n  dir = \"up\"\n  to = \"attic\"\n");

  const FleetReloadReport report = Reload(*next);
  EXPECT_EQ(report.status.code(), StatusCode::kFailedPrecondition) << report.status.ToString();
  EXPECT_THAT(report.status.message(), HasSubstr("nothing changed"));
  EXPECT_THAT(Lines(report), HasSubstr("world-b: refused: the pack in"));
  EXPECT_THAT(Lines(report), HasSubstr("zones/town.toml:"));
  EXPECT_EQ(a_.host->pack(), a_before);
  EXPECT_EQ(b_.host->pack(), b_before);
  EXPECT_EQ(a_.host->FindZone("town"), town_before);
  auto version = env_.directory.ReadPackVersion();
  ASSERT_TRUE(version.ok());
  EXPECT_FALSE(version->has_value());
}

TEST_F(PackReloadFleetTest, AWorldWithADifferentPackOnItsDiskRefuses) {
  PackDir edited;
  edited.Write("zones/town.toml", EditedTown());
  const auto next = edited.Load();
  a_.content.Write("zones/town.toml", EditedTown());
  // B still has the old pack on its disk.
  const FleetReloadReport report = Reload(*next);
  EXPECT_EQ(report.status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(Lines(report), HasSubstr("every world must have the same pack on its disk first"));
  EXPECT_NE(a_.host->pack()->content_hash, next->content_hash);
}

TEST_F(PackReloadFleetTest, TheDatabaseDownRefusesTheReload) {
  PackDir edited;
  const std::string good = EditedTown();
  edited.Write("zones/town.toml", good);
  WriteEverywhere("zones/town.toml", good);
  b_.refusal = true;
  const FleetReloadReport report = Reload(*edited.Load());
  EXPECT_EQ(report.status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(Lines(report),
              HasSubstr("world-b: refused: postgres is down: hot reload is disabled"));
  EXPECT_NE(a_.host->pack()->content_hash, edited.Load()->content_hash);
}

TEST_F(PackReloadFleetTest, TheBusDownRefusesTheReload) {
  ctl_bus_.SetConnected(false);
  const FleetReloadReport report = Reload(*a_.content.Load());
  EXPECT_EQ(report.status.code(), StatusCode::kUnavailable);
  EXPECT_THAT(report.status.message(), HasSubstr("the bus (NATS) is down"));
  EXPECT_TRUE(report.lines.empty());
}

TEST(PackRefusalTest, MidReloadBothPacksAreAcceptedAndAfterwardsOnlyTheNewOne) {
  const directory::PackVersion mid{"new", "old"};
  const directory::PackVersion after{"new", ""};
  EXPECT_EQ(PackRefusal("old", mid, {"new"}, false), "");
  EXPECT_EQ(PackRefusal("new", mid, {"old"}, false), "");
  EXPECT_THAT(PackRefusal("stray", mid, {"new"}, false), HasSubstr("is neither"));
  EXPECT_THAT(PackRefusal("old", after, {}, false), HasSubstr("the fleet runs pack new"));
  EXPECT_THAT(PackRefusal("new", after, {"old"}, false), HasSubstr("a live world runs pack old"));
  EXPECT_EQ(PackRefusal("new", after, {"new"}, false), "");
  // No record: only the peers speak, as before any reload.
  EXPECT_THAT(PackRefusal("a", std::nullopt, {"b"}, false), HasSubstr("runs pack b"));
  EXPECT_EQ(PackRefusal("a", std::nullopt, {}, false), "");
  // Alone, the record speaks for no running world.
  EXPECT_EQ(PackRefusal("newer", after, {}, true), "");
}

}  // namespace
}  // namespace telos::shard
