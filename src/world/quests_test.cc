// Quests: loading and validation, taking one from its giver, progress from kills, visits (also
// in another zone), talk and fetched items, turning it in for the rewards, abandon, repeat
// rules, the giver's on_quest hook, and progress kept in the saved state.
#include <algorithm>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "telos/world/character_state.h"
#include "world_test_util.h"
#include "zone_core.h"

namespace telos::world {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::TempDir;
using testing::TestWorld;

constexpr const char* kGameToml = R"(default_race = "human"
default_class = "warrior"

[[races]]
id = "human"
name = "Human"

[[classes]]
id = "warrior"
name = "Warrior"

[[quests]]
id = "smiths_errand"
name = "The Smith's Errand"
giver = "town:smith"
description = "The smith needs a hand."
offer = "Kill the rat, see the hall, bring me bread, and say hello."
complete = "Thank you kindly."
exp = 50
coins = 5
items = ["town:leather_cap"]

  [[quests.steps]]
  kind = "kill"
  mob = "town:rat"

  [[quests.steps]]
  kind = "visit"
  room = "lobby:hall"

  [[quests.steps]]
  kind = "fetch"
  item = "lobby:bread"

  [[quests.steps]]
  kind = "talk"
  mob = "town:smith"
  text = "Say hello to the smith"

[[quests]]
id = "again"
name = "Again and Again"
giver = "town:smith"
repeatable = true
exp = 1

  [[quests.steps]]
  kind = "talk"
  mob = "town:smith"

[[quests]]
id = "later"
name = "Later On"
giver = "town:smith"
level = 5

  [[quests.steps]]
  kind = "talk"
  mob = "town:smith"
)";

void WriteQuestPack(const TempDir& dir) {
  testing::WriteSmallPack(dir);
  dir.Write("game.toml", kGameToml);
}

std::optional<CharacterState> StateOf(TestWorld& world, const std::string& key) {
  std::optional<CharacterState> state;
  std::optional<std::string> zone_id = world.host->ZoneOf(key);
  if (!zone_id) return state;
  auto zone = world.host->FindZone(*zone_id);
  if (zone == nullptr) return state;
  Status status = zone->Inspect([&](const ZoneCore& core) { state = core.PlayerState(key); });
  world.Run();
  EXPECT_TRUE(status.ok());
  return state;
}

CharacterState Hero(const TestWorld& world, const std::string& room) {
  CharacterState s = NewCharacter("Alice", world.pack->start_room);
  s.room = *ParseRef(room, "");
  s.colour = false;
  s.race = "human";
  s.char_class = "warrior";
  s.may_choose = false;
  s.hp = s.max_hp = 200;
  s.equipment.push_back({WearSlot::kWield, {Ref{"town", "short_sword"}, {}}});
  return s;
}

TEST(QuestContent, LoadsAndRejectsBadQuests) {
  TempDir dir;
  WriteQuestPack(dir);
  std::vector<Problem> problems;
  Result<Pack> pack = LoadPack(dir.path(), &problems);
  ASSERT_TRUE(pack.ok()) << pack.status().ToString();
  const QuestDef* errand = pack->game.FindQuest("smiths_errand");
  ASSERT_NE(errand, nullptr);
  ASSERT_EQ(errand->steps.size(), 4u);
  EXPECT_EQ(errand->steps[1].kind, QuestStepKind::kVisit);
  EXPECT_EQ(errand->steps[1].target, (Ref{"lobby", "hall"}));
  EXPECT_TRUE(pack->game.FindQuest("again")->repeatable);

  auto problems_with = [](const std::string& from, const std::string& to) {
    TempDir bad;
    WriteQuestPack(bad);
    std::string text = kGameToml;
    text.replace(text.find(from), from.size(), to);
    bad.Write("game.toml", text);
    std::vector<Problem> found;
    EXPECT_FALSE(LoadPack(bad.path(), &found).ok());
    std::string all;
    for (const Problem& p : found) all += p.ToString() + "\n";
    return all;
  };
  std::string text = kGameToml;
  const int giver_line =
      1 + static_cast<int>(std::count(text.begin(), text.begin() + text.find("giver = "), '\n'));
  EXPECT_THAT(problems_with("giver = \"town:smith\"", "giver = \"town:nobody\""),
              HasSubstr("game.toml:" + std::to_string(giver_line) +
                        ": giver of quest 'smiths_errand': unknown mob 'town:nobody'"));
  EXPECT_THAT(problems_with("room = \"lobby:hall\"", "room = \"lobby:attic\""),
              HasSubstr("step of quest 'smiths_errand': unknown room 'lobby:attic'"));
  EXPECT_THAT(problems_with("kind = \"fetch\"", "kind = \"juggle\""),
              HasSubstr("unknown step kind 'juggle'"));
  EXPECT_THAT(problems_with("mob = \"town:rat\"", "mob = \"rat\""),
              HasSubstr("'rat' must be a 'zone:id' reference"));
  EXPECT_THAT(problems_with("room = \"lobby:hall\"", "room = \"lobby:hall\"\n  count = 2"),
              HasSubstr("a visit or talk step happens once"));
  EXPECT_THAT(problems_with("items = [\"town:leather_cap\"]", "items = [\"town:crown\"]"),
              HasSubstr("reward of quest 'smiths_errand': unknown item 'town:crown'"));
}

TEST(Quests, TakeProgressAcrossZonesAndTurnIn) {
  TempDir dir;
  WriteQuestPack(dir);
  TestWorld world(dir.path());
  world.LoginState(Hero(world, "town:smithy"));
  world.sink("Alice")->Take();
  std::string offered = world.Do("Alice", "quest");
  EXPECT_THAT(offered, HasSubstr("You have no quests."));
  EXPECT_THAT(offered, HasSubstr("The Smith's Errand"));
  EXPECT_THAT(offered, Not(HasSubstr("Later On"))) << "level 5 quests are not offered at 1";
  EXPECT_THAT(world.Do("Alice", "quest accept later"),
              HasSubstr("You must be level 5 to take it."));

  std::string taken = world.Do("Alice", "quest accept smith");
  EXPECT_THAT(taken, HasSubstr("You take the quest 'The Smith's Errand'."));
  EXPECT_THAT(taken, HasSubstr("The smith says, 'Kill the rat, see the hall"));
  EXPECT_THAT(taken, HasSubstr("Kill a sewer rat (0/1)"));
  EXPECT_THAT(world.Do("Alice", "quest complete"), HasSubstr("You have not finished"));

  // Talk: anything said where the smith stands.
  EXPECT_THAT(world.Do("Alice", "say hello"),
              HasSubstr("Quest 'The Smith's Errand': Say hello to the smith (1/1)."));
  // Kill.
  world.Do("Alice", "south");
  world.Do("Alice", "south");
  world.Do("Alice", "kill rat");
  std::string fight;
  for (int i = 0; i < 400 && fight.find("Kill a sewer rat (1/1)") == std::string::npos; ++i) {
    world.Beat();
    fight += world.sink("Alice")->Take();
  }
  EXPECT_THAT(fight, HasSubstr("Quest 'The Smith's Errand': Kill a sewer rat (1/1)."));
  // Visit, in another zone: the progress travels with her.
  world.Do("Alice", "north");
  world.Do("Alice", "west");
  world.Run();
  std::string hall = world.Do("Alice", "north");
  world.Run();
  hall += world.sink("Alice")->Take();
  EXPECT_THAT(hall, HasSubstr("Visit Quiet Hall (1/1)."));
  std::optional<CharacterState> saved = StateOf(world, "alice");
  ASSERT_TRUE(saved.has_value());
  EXPECT_EQ(saved->quests.at("smiths_errand"), (std::vector<int>{1, 1, 0, 1}));
  // Fetch: carried when turning in.
  world.Do("Alice", "south");
  world.Run();
  world.Do("Alice", "east");
  world.Run();
  world.Do("Alice", "north");
  world.sink("Alice")->Take();
  EXPECT_THAT(world.Do("Alice", "quest info errand"), HasSubstr("Bring a loaf of bread (0/1)"));
  EXPECT_THAT(world.Do("Alice", "quest complete"), HasSubstr("You have not finished"));
  world.Do("Alice", "quit");
  world.Run();

  CharacterState again = *saved;
  again.room = Ref{"town", "smithy"};
  again.inventory.push_back({Ref{"lobby", "bread"}, {}});
  world.LoginState(again);
  world.sink("Alice")->Take();
  std::string done = world.Do("Alice", "quest complete");
  EXPECT_THAT(done, HasSubstr("You give a loaf of bread to the smith."));
  EXPECT_THAT(done, HasSubstr("You complete the quest 'The Smith's Errand'!"));
  EXPECT_THAT(done, HasSubstr("The smith says, 'Thank you kindly.'"));
  EXPECT_THAT(done, HasSubstr("You receive 5 coins."));
  EXPECT_THAT(done, HasSubstr("You receive a leather cap."));
  EXPECT_THAT(done, HasSubstr("You receive 50 experience."));
  saved = StateOf(world, "alice");
  ASSERT_TRUE(saved.has_value());
  EXPECT_TRUE(saved->quests.empty());
  EXPECT_EQ(saved->quests_done.at("smiths_errand"), 1);
  EXPECT_EQ(saved->wallet_coins, again.wallet_coins + 5);
  EXPECT_TRUE(
      std::none_of(saved->inventory.begin(), saved->inventory.end(), [](const ItemState& i) {
        return i.proto == Ref{"lobby", "bread"};
      }));
  EXPECT_THAT(world.Do("Alice", "quest accept errand"),
              HasSubstr("You have already done that quest."));
  EXPECT_THAT(world.Do("Alice", "quest"), Not(HasSubstr("The Smith's Errand")));
}

TEST(Quests, RepeatableAbandonAndTheGiverMustBeThere) {
  TempDir dir;
  WriteQuestPack(dir);
  TestWorld world(dir.path());
  world.LoginState(Hero(world, "town:smithy"));
  world.sink("Alice")->Take();
  for (int round = 0; round < 2; ++round) {
    world.Do("Alice", "quest accept again");
    world.Do("Alice", "say hi");
    EXPECT_THAT(world.Do("Alice", "quest complete again"),
                HasSubstr("You complete the quest 'Again and Again'!"));
  }
  EXPECT_EQ(StateOf(world, "alice")->quests_done.at("again"), 2);

  world.Do("Alice", "quest accept errand");
  EXPECT_THAT(world.Do("Alice", "quest accept errand"),
              HasSubstr("You are already on that quest."));
  world.Do("Alice", "south");
  EXPECT_THAT(world.Do("Alice", "quest complete errand"), HasSubstr("Return to whoever gave"));
  EXPECT_THAT(world.Do("Alice", "quest"), HasSubstr("The Smith's Errand"));
  EXPECT_THAT(world.Do("Alice", "quest abandon errand"), HasSubstr("You abandon the quest"));
  EXPECT_THAT(world.Do("Alice", "quest"), HasSubstr("You have no quests."));
}

TEST(Quests, GiverScriptHearsTheQuest) {
  TempDir dir;
  WriteQuestPack(dir);
  std::string town;
  {
    // The smith gets a script with an on_quest hook.
    std::ifstream in(dir.path() / "zones" / "town.toml");
    std::stringstream buffer;
    buffer << in.rdbuf();
    town = buffer.str();
  }
  const std::string flags = "flags = [\"shopkeeper\", \"sentinel\"]";
  town.replace(town.find(flags), flags.size(), flags + "\nscript = \"smith.lua\"");
  dir.Write("zones/town.toml", town);
  dir.Write("scripts/smith.lua",
            "function on_quest(actor, quest_id, event, self)\n"
            "  telos.emote(self, 'hears ' .. event .. ' of ' .. quest_id .. ' from ' .. "
            "actor.name)\n"
            "end\n");
  TestWorld world(dir.path());
  world.LoginState(Hero(world, "town:smithy"));
  world.Login("Bob", "town:smithy");
  world.sink("Bob")->Take();
  world.Do("Alice", "quest accept again");
  EXPECT_THAT(world.sink("Bob")->Take(), HasSubstr("The smith hears offer of again from Alice"));
}

}  // namespace
}  // namespace telos::world
