// Content hot reload in one host: the pack diff, and the in-place rebuild of changed zones
// (players stay, same room ids, a removed room sends its occupant to the zone's start room).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "telos/world/pack_diff.h"
#include "telos/world/world_host.h"
#include "world_test_util.h"
#include "zone_core.h"

namespace telos::world {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::TempDir;
using testing::TestWorld;

std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Replaces the one occurrence of `from` in `text`, or fails the test.
std::string ReplaceOnce(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "no '" << from << "' to replace";
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// The small pack, with a room script in the lobby's hall.
void WritePack(const TempDir& dir, const std::string& hall_script) {
  testing::WriteSmallPack(dir);
  const std::string lobby = ReadText(dir.path() / "zones/lobby.toml");
  dir.Write("zones/lobby.toml",
            ReplaceOnce(lobby, "description = \"Portraits line the walls.\"\n",
                        "description = \"Portraits line the walls.\"\nscript = \"hall.lua\"\n"));
  dir.Write("scripts/hall.lua", hall_script);
}

const char* kHallScript = R"(function on_enter(actor)
  if actor.is_player then telos.send(actor, "The portraits watch you.") end
end
)";

std::shared_ptr<const Pack> Load(const TempDir& dir) {
  std::vector<Problem> problems;
  Result<Pack> pack = LoadPack(dir.path(), &problems);
  for (const Problem& p : problems) ADD_FAILURE() << p.ToString();
  if (!pack.ok()) return nullptr;
  return std::make_shared<const Pack>(std::move(pack).value());
}

class PackReloadTest : public ::testing::Test {
 protected:
  PackReloadTest() {
    WritePack(dir_, kHallScript);
    world_ = std::make_unique<TestWorld>(dir_.path());  // every zone running
  }

  // A second copy of the pack, edited by `edit` (file -> new text) before it is loaded.
  std::shared_ptr<const Pack> Edited(
      const std::function<void(const TempDir&, std::map<std::string, std::string>&)>& edit) {
    auto next = std::make_unique<TempDir>();
    WritePack(*next, kHallScript);
    std::map<std::string, std::string> files;
    for (const char* rel : {"zones/lobby.toml", "zones/town.toml", "scripts/hall.lua"}) {
      files[rel] = ReadText(next->path() / rel);
    }
    edit(*next, files);
    for (const auto& [rel, text] : files) next->Write(rel, text);
    auto pack = Load(*next);
    edits_.push_back(std::move(next));
    return pack;
  }

  std::optional<CharacterState> StateOf(const std::string& zone, const std::string& key) {
    std::optional<CharacterState> state;
    auto running = world_->host->FindZone(zone);
    if (running == nullptr) return state;
    EXPECT_TRUE(
        running->Inspect([&](const ZoneCore& core) { state = core.PlayerState(key); }).ok());
    world_->Run();
    return state;
  }

  // Reloads and runs the executor until the host says it is done.
  WorldHost::ReloadReport Reload(std::shared_ptr<const Pack> next) {
    std::optional<WorldHost::ReloadReport> report;
    Status s = world_->host->Reload(std::move(next),
                                    [&](WorldHost::ReloadReport r) { report = std::move(r); });
    EXPECT_TRUE(s.ok()) << s.ToString();
    world_->Run();
    EXPECT_TRUE(report.has_value()) << "the reload did not finish";
    return report.value_or(WorldHost::ReloadReport{});
  }

  TempDir dir_;
  std::vector<std::unique_ptr<TempDir>> edits_;
  std::unique_ptr<TestWorld> world_;
};

TEST_F(PackReloadTest, TheSamePackChangesNoZone) {
  auto same = Edited([](const TempDir&, std::map<std::string, std::string>&) {});
  auto diff = DiffPacks(*world_->pack, *same);
  ASSERT_TRUE(diff.ok()) << diff.status().ToString();
  EXPECT_TRUE(diff->same_content());
  EXPECT_THAT(diff->unchanged_zones, ElementsAre("lobby", "town"));
}

TEST_F(PackReloadTest, ARoomDescriptionChangesOnlyItsZone) {
  auto next = Edited([](const TempDir&, std::map<std::string, std::string>& files) {
    files["zones/town.toml"] = ReplaceOnce(files["zones/town.toml"], "Heat rolls off the forge.",
                                           "The forge has gone cold.");
  });
  auto diff = DiffPacks(*world_->pack, *next);
  ASSERT_TRUE(diff.ok());
  EXPECT_THAT(diff->changed_zones, ElementsAre("town"));
  EXPECT_THAT(diff->unchanged_zones, ElementsAre("lobby"));
}

TEST_F(PackReloadTest, AScriptChangeChangesTheZoneThatUsesIt) {
  auto next = Edited([](const TempDir&, std::map<std::string, std::string>& files) {
    files["scripts/hall.lua"] =
        ReplaceOnce(files["scripts/hall.lua"], "The portraits watch you.", "The portraits sleep.");
  });
  auto diff = DiffPacks(*world_->pack, *next);
  ASSERT_TRUE(diff.ok());
  EXPECT_THAT(diff->changed_zones, ElementsAre("lobby"));
}

TEST_F(PackReloadTest, AForeignItemChangeChangesTheZoneThatSpawnsIt) {
  // The lobby's hall gets a reset of the town's cap; then only the cap's definition changes.
  auto with_cap = [](std::map<std::string, std::string>& files) {
    files["zones/lobby.toml"] += "\n[[resets]]\nitem = \"town:leather_cap\"\nroom = \"hall\"\n";
  };
  auto before =
      Edited([&](const TempDir&, std::map<std::string, std::string>& files) { with_cap(files); });
  auto after = Edited([&](const TempDir&, std::map<std::string, std::string>& files) {
    with_cap(files);
    files["zones/town.toml"] = ReplaceOnce(files["zones/town.toml"], "armor = 2", "armor = 3");
  });
  ASSERT_TRUE(before && after);
  auto diff = DiffPacks(*before, *after);
  ASSERT_TRUE(diff.ok());
  EXPECT_THAT(diff->changed_zones, ElementsAre("lobby", "town"));
}

TEST_F(PackReloadTest, AddingAZoneIsRefusedAndChangesNothing) {
  auto next = Edited([](const TempDir& dir, std::map<std::string, std::string>&) {
    dir.Write("zones/annex.toml", R"([zone]
id = "annex"
name = "The Annex"
kind = "town"
reset_minutes = 5

[[rooms]]
id = "porch"
name = "A Porch"
description = "Boards creak."
)");
  });
  ASSERT_NE(next, nullptr);
  auto diff = DiffPacks(*world_->pack, *next);
  ASSERT_FALSE(diff.ok());
  EXPECT_EQ(diff.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(diff.status().message(), HasSubstr("adds zone(s) annex"));

  auto town = world_->host->FindZone("town");
  Status s = world_->host->Reload(next, [](WorldHost::ReloadReport) { FAIL() << "reloaded"; });
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  world_->Run();
  EXPECT_EQ(world_->host->pack(), world_->pack);
  EXPECT_EQ(world_->host->FindZone("town"), town);
}

TEST_F(PackReloadTest, ChangedZoneIsRebuiltInPlaceAndItsPlayersStay) {
  auto alice = world_->Login("Alice", "town:smithy");
  auto bob = world_->Login("Bob", "lobby:hall");
  alice->Take();
  bob->Take();
  auto lobby_before = world_->host->FindZone("lobby");
  auto town_before = world_->host->FindZone("town");

  auto next = Edited([](const TempDir&, std::map<std::string, std::string>& files) {
    std::string town = files["zones/town.toml"];
    town = ReplaceOnce(town, "Heat rolls off the forge.", "The forge has gone cold.");
    town = ReplaceOnce(town, "A sewer rat sniffs along the wall.", "A fat rat dozes by the wall.");
    files["zones/town.toml"] = town;
  });
  ASSERT_NE(next, nullptr);
  const WorldHost::ReloadReport report = Reload(next);
  EXPECT_THAT(report.rebuilt, ElementsAre("town"));
  EXPECT_EQ(report.players, 1u);
  EXPECT_EQ(report.relocated, 0u);

  // The town is a new zone; the lobby the same one, untouched.
  EXPECT_NE(world_->host->FindZone("town"), town_before);
  EXPECT_EQ(world_->host->FindZone("lobby"), lobby_before);
  EXPECT_EQ(world_->host->pack(), next);

  // Alice never left: same room id, still online, connection untouched, new text.
  EXPECT_FALSE(alice->disconnected);
  EXPECT_EQ(world_->host->ZoneOf("Alice"), "town");
  auto state = StateOf("town", "alice");
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(state->room.ToString(), "town:smithy");
  EXPECT_THAT(world_->Do("Alice", "look"), HasSubstr("The forge has gone cold."));
  world_->Do("Alice", "south");
  EXPECT_THAT(world_->Do("Alice", "south"), HasSubstr("A fat rat dozes by the wall."));
  EXPECT_FALSE(bob->disconnected);
  EXPECT_EQ(world_->host->online_count(), 2u);
}

TEST_F(PackReloadTest, APlayerWhoseRoomWasRemovedGoesToTheZoneStartRoomWithAMessage) {
  auto alice = world_->Login("Alice", "town:store_room");
  alice->Take();
  auto next = Edited([](const TempDir&, std::map<std::string, std::string>& files) {
    std::string town = files["zones/town.toml"];
    // The store room goes, and the smithy's exit into it.
    town = ReplaceOnce(town, R"(  [[rooms.exits]]
  dir = "enter"
  to = "store_room"
)",
                       "");
    town = ReplaceOnce(town, R"([[rooms]]
id = "store_room"
name = "The Store Room"
description = "Sacks of charcoal are stacked to the beams."
flags = ["safe", "indoors"]

  [[rooms.exits]]
  dir = "out"
  to = "smithy"
)",
                       "");
    files["zones/town.toml"] = town;
  });
  ASSERT_NE(next, nullptr);
  const WorldHost::ReloadReport report = Reload(next);
  EXPECT_EQ(report.relocated, 1u);
  const std::string seen = alice->Take();
  EXPECT_THAT(seen, HasSubstr("Market Square"));
  EXPECT_THAT(seen, HasSubstr("the place where you stood is gone"));
  EXPECT_FALSE(alice->disconnected);
  auto state = StateOf("town", "alice");
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(state->room.ToString(), "town:square");
}

TEST_F(PackReloadTest, AScriptChangeRunsInTheRebuiltZone) {
  auto alice = world_->Login("Alice", "lobby:atrium");
  EXPECT_THAT(world_->Do("Alice", "north"), HasSubstr("The portraits watch you."));
  world_->Do("Alice", "south");
  auto next = Edited([](const TempDir&, std::map<std::string, std::string>& files) {
    files["scripts/hall.lua"] =
        ReplaceOnce(files["scripts/hall.lua"], "The portraits watch you.", "The portraits sleep.");
  });
  ASSERT_NE(next, nullptr);
  EXPECT_THAT(Reload(next).rebuilt, ElementsAre("lobby"));
  const std::string seen = world_->Do("Alice", "north");
  EXPECT_THAT(seen, HasSubstr("The portraits sleep."));
  EXPECT_THAT(seen, Not(HasSubstr("The portraits watch you.")));
  EXPECT_FALSE(alice->disconnected);
}

TEST_F(PackReloadTest, LinesTypedDuringTheRebuildAreAppliedAfterIt) {
  auto alice = world_->Login("Alice", "town:square");
  alice->Take();
  auto next = Edited([](const TempDir&, std::map<std::string, std::string>& files) {
    files["zones/town.toml"] =
        ReplaceOnce(files["zones/town.toml"], "Heat rolls off the forge.", "The forge is cold.");
  });
  ASSERT_NE(next, nullptr);
  bool done = false;
  ASSERT_TRUE(world_->host->Reload(next, [&](WorldHost::ReloadReport) { done = true; }).ok());
  // Typed before the old zone has let go of her: held, not lost.
  ASSERT_TRUE(world_->host->Submit("Alice", "north").ok());
  world_->Run();
  EXPECT_TRUE(done);
  EXPECT_THAT(alice->Take(), HasSubstr("The forge is cold."));
  auto state = StateOf("town", "alice");
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(state->room.ToString(), "town:smithy");
}

TEST_F(PackReloadTest, ZonesNotRunningHereStartFromTheNewPack) {
  auto town = world_->host->FindZone("town");
  bool stopped = false;
  ASSERT_TRUE(
      world_->host->StopZone("town", [&](std::vector<PlayerTransfer>) { stopped = true; }).ok());
  world_->Run();
  ASSERT_TRUE(stopped);
  auto next = Edited([](const TempDir&, std::map<std::string, std::string>& files) {
    files["zones/town.toml"] =
        ReplaceOnce(files["zones/town.toml"], "Heat rolls off the forge.", "The forge is cold.");
  });
  ASSERT_NE(next, nullptr);
  EXPECT_TRUE(Reload(next).rebuilt.empty());
  ASSERT_TRUE(world_->host->StartZone("town").ok());
  world_->Run();
  world_->Login("Alice", "town:smithy");
  EXPECT_THAT(world_->Do("Alice", "look"), HasSubstr("The forge is cold."));
}

// The town, with the forge's description changed: a reload rebuilds the town alone.
std::function<void(const TempDir&, std::map<std::string, std::string>&)> ColdForge() {
  return [](const TempDir&, std::map<std::string, std::string>& files) {
    files["zones/town.toml"] =
        ReplaceOnce(files["zones/town.toml"], "Heat rolls off the forge.", "The forge is cold.");
  };
}

TEST_F(PackReloadTest, AZoneStoppedDuringItsRebuildHandsOverEveryPlayer) {
  auto alice = world_->Login("Alice", "town:smithy");
  alice->Take();
  auto next = Edited(ColdForge());
  ASSERT_NE(next, nullptr);
  std::optional<WorldHost::ReloadReport> report;
  ASSERT_TRUE(world_->host->Reload(next, [&](WorldHost::ReloadReport r) { report = r; }).ok());
  // A drain (or a lost lease) stops the zone before the old one has let go of Alice.
  std::optional<std::vector<PlayerTransfer>> stopped;
  ASSERT_TRUE(
      world_->host
          ->StopZone("town",
                     [&](std::vector<PlayerTransfer> players) { stopped = std::move(players); })
          .ok());
  world_->Run();
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->relocated, 0u);
  ASSERT_TRUE(stopped.has_value()) << "the stop never finished";
  std::vector<std::string> names;
  for (const PlayerTransfer& player : *stopped) names.push_back(player.state.name);
  EXPECT_THAT(names, ElementsAre("Alice"));
  ASSERT_EQ(stopped->size(), 1u);
  EXPECT_EQ((*stopped)[0].state.room.ToString(), "town:smithy");
  EXPECT_EQ(world_->host->ZoneOf("Alice"), std::nullopt);
  EXPECT_EQ(world_->host->FindZone("town"), nullptr);
  EXPECT_FALSE(alice->disconnected);
  EXPECT_THAT(world_->host->RunningZones(), ElementsAre("lobby"));
}

TEST_F(PackReloadTest, NoReloadStartsOnceTheHostIsStopping) {
  world_->host->RefuseReloads();
  auto next = Edited(ColdForge());
  ASSERT_NE(next, nullptr);
  auto town = world_->host->FindZone("town");
  bool called = false;
  const Status s = world_->host->Reload(next, [&](WorldHost::ReloadReport) { called = true; });
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  world_->Run();
  EXPECT_FALSE(called);
  EXPECT_EQ(world_->host->FindZone("town"), town);
  EXPECT_NE(world_->host->pack(), next);
}

TEST_F(PackReloadTest, APlayerRemovedDuringTheRebuildIsGone) {
  world_->Login("Alice", "town:smithy");
  world_->Login("Bob", "town:square");
  auto next = Edited(ColdForge());
  ASSERT_NE(next, nullptr);
  bool reloaded = false;
  ASSERT_TRUE(world_->host->Reload(next, [&](WorldHost::ReloadReport) { reloaded = true; }).ok());
  // Alice's connection goes, Bob is handed off (a drain), both before the old zone lets go.
  bool removed = false;
  std::optional<std::string> zone_when_removed = "unset";
  world_->host->RemovePlayer("Alice", [&] {
    removed = true;
    zone_when_removed = world_->host->ZoneOf("Alice");
  });
  std::optional<Result<PlayerTransfer>> bob;
  ASSERT_TRUE(world_->host->FreezePlayer("Bob", [&](Result<PlayerTransfer> t) { bob = t; }).ok());
  world_->Run();
  EXPECT_TRUE(reloaded);
  EXPECT_TRUE(removed);
  EXPECT_EQ(zone_when_removed, std::nullopt);
  EXPECT_EQ(world_->host->ZoneOf("Alice"), std::nullopt);
  ASSERT_TRUE(bob.has_value());
  ASSERT_TRUE(bob->ok()) << bob->status().ToString();
  EXPECT_EQ((*bob)->state.name, "Bob");
  EXPECT_EQ(world_->host->ZoneOf("Bob"), std::nullopt);
  EXPECT_EQ(world_->host->online_count(), 0u);
  auto town = world_->host->FindZone("town");
  ASSERT_NE(town, nullptr);
  size_t in_town = 99;
  ASSERT_TRUE(town->Inspect([&](const ZoneCore& core) { in_town = core.player_count(); }).ok());
  world_->Run();
  EXPECT_EQ(in_town, 0u);
  // No ghost: she logs in again.
  world_->Login("Alice", "town:smithy");
  EXPECT_EQ(world_->host->ZoneOf("Alice"), "town");
}

TEST_F(PackReloadTest, TellsAndNoticesDuringTheRebuildArrive) {
  auto alice = world_->Login("Alice", "town:smithy");
  world_->Login("Bob", "lobby:hall");
  alice->Take();
  auto next = Edited(ColdForge());
  ASSERT_NE(next, nullptr);
  ASSERT_TRUE(world_->host->Reload(next, [](WorldHost::ReloadReport) {}).ok());
  ASSERT_TRUE(world_->host->Notify("alice", "A letter has come for you.").ok());
  std::string display;
  ASSERT_TRUE(world_->host->DeliverTell("Carol", "alice", "meet me at the well", &display).ok());
  EXPECT_EQ(display, "Alice");
  world_->Run();
  const std::string seen = alice->Take();
  EXPECT_THAT(seen, HasSubstr("A letter has come for you."));
  EXPECT_THAT(seen, HasSubstr("meet me at the well"));
}

}  // namespace
}  // namespace telos::world
