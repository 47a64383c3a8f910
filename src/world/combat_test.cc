// Deterministic combat, affects and death: a seeded Random and a manual clock.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "telos/base/assert.h"
#include "world_test_util.h"

namespace telos::world {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::TempDir;
using testing::TestWorld;

CharacterState Fighter(const TestWorld& world, const std::string& room) {
  CharacterState state = NewCharacter("Alice", world.pack->start_room);
  state.room = *ParseRef(room, "");
  state.colour = false;
  state.equipment.push_back({WearSlot::kWield, {Ref{"town", "short_sword"}, {}}});
  return state;
}

// Alice kills the rat; returns everything she saw.
std::string FightTheRat(uint64_t seed) {
  TempDir dir;
  testing::WriteSmallPack(dir);
  TestWorld world(dir.path(), seed);
  auto sink = world.LoginState(Fighter(world, "town:alley"));
  std::string transcript = sink->Take();
  transcript += world.Do("Alice", "kill rat");
  for (int beat = 0; beat < 400 && transcript.find("is DEAD") == std::string::npos; ++beat) {
    world.Beat();
    transcript += sink->Take();
  }
  transcript += world.Do("Alice", "get all corpse");
  transcript += world.Do("Alice", "score");
  return transcript;
}

// The small pack with its sewer rat made a boss.
void WriteBossPack(const TempDir& dir) {
  testing::WriteSmallPack(dir);
  const std::filesystem::path town = dir.path() / "zones/town.toml";
  std::ifstream in(town);
  std::stringstream text;
  text << in.rdbuf();
  std::string toml = text.str();
  const std::string rat_flags = "gold = 7\nflags = [\"sentinel\"]";
  const size_t at = toml.find(rat_flags);
  RELEASE_ASSERT(at != std::string::npos, "the small pack's rat changed");
  toml.replace(at, rat_flags.size(), "gold = 7\nflags = [\"sentinel\", \"boss\"]");
  dir.Write("zones/town.toml", toml);
}

TEST(Combat, KillingABossPublishesOneGameEventNamingTheKiller) {
  TempDir dir;
  WriteBossPack(dir);
  TestWorld world(dir.path(), 7);
  world.LoginState(Fighter(world, "town:alley"))->Take();
  std::string transcript = world.Do("Alice", "kill rat");
  for (int beat = 0; beat < 400 && transcript.find("is DEAD") == std::string::npos; ++beat) {
    world.Beat();
    transcript += world.sink("Alice")->Take();
  }
  ASSERT_THAT(transcript, HasSubstr("A sewer rat is DEAD!"));
  EXPECT_EQ(world.game_events.events,
            (std::vector<testing::FakeGameEvents::Event>{{"boss_kill", "town:rat", "Alice"}}));
}

TEST(Combat, KillingAMobThatIsNoBossPublishesNothing) {
  TempDir dir;
  testing::WriteSmallPack(dir);
  TestWorld world(dir.path(), 7);
  world.LoginState(Fighter(world, "town:alley"))->Take();
  std::string transcript = world.Do("Alice", "kill rat");
  for (int beat = 0; beat < 400 && transcript.find("is DEAD") == std::string::npos; ++beat) {
    world.Beat();
    transcript += world.sink("Alice")->Take();
  }
  ASSERT_THAT(transcript, HasSubstr("A sewer rat is DEAD!"));
  EXPECT_TRUE(world.game_events.events.empty());
}

TEST(Records, TheCommandListsTheFleetsRecordsByTheirNamesInThePack) {
  TempDir dir;
  testing::WriteSmallPack(dir);
  TestWorld world(dir.path());
  world.Login("Alice")->Take();
  EXPECT_THAT(world.Do("Alice", "records"), HasSubstr("No deed has been recorded yet."));
  world.records.lines = {{"boss_kill", "town:rat", 3, "Brenna", 1, "Alice", 2},
                         {"boss_kill", "town:wolf", 1, "Cato", 3, "Cato", 3}};
  const std::string text = world.Do("Alice", "legends");
  EXPECT_THAT(text, HasSubstr("A sewer rat: slain 3 times; first by Brenna, last by Alice."));
  EXPECT_THAT(text, HasSubstr("A grey wolf: slain once; first by Cato."));
  world.records.up = false;
  EXPECT_THAT(world.Do("Alice", "records"), HasSubstr("The hall of legends is closed right now."));
}

TEST(Combat, KnownFightOutcome) {
  std::string transcript = FightTheRat(7);
  EXPECT_THAT(transcript, HasSubstr("You attack a sewer rat!"));
  EXPECT_THAT(transcript, HasSubstr("You hit a sewer rat for"));
  EXPECT_THAT(transcript, HasSubstr("A sewer rat is DEAD!"));
  EXPECT_THAT(transcript, HasSubstr("You receive 150 experience."));
  EXPECT_THAT(transcript, HasSubstr("You are now level 2!"));
  EXPECT_THAT(transcript, HasSubstr("You get 7 coins."));
  EXPECT_THAT(transcript, HasSubstr("Alice, level 2."));
  EXPECT_THAT(transcript, HasSubstr("Coins: 27 carried"));
}

TEST(Combat, SameSeedSameTranscript) {
  std::string first = FightTheRat(1234);
  EXPECT_EQ(first, FightTheRat(1234));
  // Different seeds play differently somewhere among a few tries.
  bool differs = false;
  for (uint64_t seed = 1; seed < 6 && !differs; ++seed) differs = FightTheRat(seed) != first;
  EXPECT_TRUE(differs);
}

TEST(Combat, AggressiveMobAttacksOnArrivalAndFleeWorks) {
  TempDir dir;
  testing::WriteSmallPack(dir);
  TestWorld world(dir.path(), 99);
  world.LoginState(Fighter(world, "lobby:hall"))->Take();
  std::string text = world.Do("Alice", "portal");
  EXPECT_THAT(text, HasSubstr("Wolf Den"));
  EXPECT_THAT(text, HasSubstr("A grey wolf attacks you!"));
  EXPECT_THAT(world.Do("Alice", "north"), HasSubstr("You are fighting! Try 'flee' first."));
  std::string fled;
  for (int i = 0; i < 20 && fled.find("You flee out!") == std::string::npos; ++i) {
    fled += world.Do("Alice", "flee");
  }
  EXPECT_THAT(fled, HasSubstr("You flee out!"));
  EXPECT_THAT(fled, HasSubstr("Dark Alley"));
  EXPECT_THAT(world.Do("Alice", "flee"), HasSubstr("You are not fighting anyone."));
  EXPECT_THAT(world.Do("Alice", "con rat"), HasSubstr("A sewer rat: A fair fight."));
}

TEST(Combat, NoFightingInSafeRooms) {
  TempDir dir;
  testing::WriteSmallPack(dir);
  TestWorld world(dir.path());
  world.LoginState(Fighter(world, "town:smithy"))->Take();
  EXPECT_THAT(world.Do("Alice", "kill smith"), HasSubstr("place of peace"));
}

TEST(Affects, HasteExpiresOnTheEighthHeartbeat) {
  TempDir dir;
  testing::WriteSmallPack(dir);
  TestWorld world(dir.path());
  CharacterState state = Fighter(world, "lobby:atrium");
  state.inventory.push_back({Ref{"lobby", "haste_potion"}, {}});
  auto sink = world.LoginState(state);
  sink->Take();
  EXPECT_THAT(world.Do("Alice", "quaff potion"), HasSubstr("The world slows around you."));
  EXPECT_THAT(world.Do("Alice", "score"), HasSubstr("Affected by haste for 2 more seconds."));
  world.Beat(7);  // 2 s = 8 heartbeats of 250 ms
  EXPECT_THAT(sink->Take(), Not(HasSubstr("You slow down")));
  world.Beat(1);
  EXPECT_THAT(sink->Take(), HasSubstr("You slow down to the pace of the world."));
  EXPECT_THAT(world.Do("Alice", "score"), Not(HasSubstr("Affected by")));
}

TEST(Affects, PoisonKillsAndThePlayerRespawnsWithACorpseLeftBehind) {
  TempDir dir;
  testing::WriteSmallPack(dir);
  TestWorld world(dir.path());
  CharacterState state = Fighter(world, "lobby:hall");
  state.hp = 3;
  state.wallet_coins = 11;
  state.inventory.push_back({Ref{"lobby", "poison_potion"}, {}});
  state.inventory.push_back({Ref{"lobby", "bread"}, {}});
  auto sink = world.LoginState(state);
  sink->Take();
  EXPECT_THAT(world.Do("Alice", "quaff murky"), HasSubstr("You feel very sick."));
  world.Beat(4);  // first pulse: 3 -> 1
  EXPECT_THAT(sink->Take(), HasSubstr("poison burns in your veins"));
  world.Beat(4);  // second pulse: dead
  std::string text = sink->Take();
  EXPECT_THAT(text, HasSubstr("You have been KILLED!"));
  EXPECT_THAT(text, HasSubstr("Bright Atrium"));
  EXPECT_THAT(text, HasSubstr("You wake with a gasp"));
  EXPECT_THAT(world.Do("Alice", "score"), HasSubstr("Hit points: 15/30"));
  EXPECT_THAT(world.Do("Alice", "i"), HasSubstr("Nothing."));
  EXPECT_THAT(world.Do("Alice", "n"), HasSubstr("The corpse of Alice lies here."));
  std::string looted = world.Do("Alice", "get all corpse");
  EXPECT_THAT(looted, HasSubstr("You get a loaf of bread from the corpse of Alice."));
  EXPECT_THAT(looted, HasSubstr("You get a short sword from the corpse of Alice."));
  EXPECT_THAT(looted, HasSubstr("You get 11 coins."));
}

TEST(Affects, RegenerationIsFasterWhenResting) {
  TempDir dir;
  testing::WriteSmallPack(dir);
  TestWorld world(dir.path());
  CharacterState state = Fighter(world, "lobby:atrium");
  state.hp = 10;
  world.LoginState(state)->Take();
  world.Beat(20);  // one regeneration tick standing: +3
  EXPECT_THAT(world.Do("Alice", "score"), HasSubstr("Hit points: 13/30"));
  EXPECT_THAT(world.Do("Alice", "rest"), HasSubstr("You sit down and rest."));
  EXPECT_THAT(world.Do("Alice", "north"), HasSubstr("You need to stand up first."));
  world.Beat(20);  // resting: +6
  EXPECT_THAT(world.Do("Alice", "score"), HasSubstr("Hit points: 19/30"));
}

}  // namespace
}  // namespace telos::world
