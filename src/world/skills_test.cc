// Races, classes, skills and spells: game.toml loading and validation, the creation dialogue,
// migration of characters saved before classes, practice and train, cast and skill verbs with
// cost, lag, cooldown and proficiency, each effect type, and mobs casting in a fight. All on the
// manual clock and a seeded Random.
#include <algorithm>
#include <set>

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
description = "Even in every way."

[[races]]
id = "elf"
name = "Elf"
stats = { str = 11, dex = 15, con = 11, int = 15, wis = 13 }

[[classes]]
id = "warrior"
name = "Warrior"
stats = { str = 2 }
hp = 40
mana = 5
moves = 100
hp_per_level = 12
practices_per_level = 3

  [[classes.skills]]
  skill = "kick"
  level = 1

[[classes]]
id = "mage"
name = "Mage"
stats = { int = 2, str = -1 }
hp = 24
mana = 40
moves = 80

  [[classes.skills]]
  skill = "magic_missile"
  level = 1

  [[classes.skills]]
  skill = "cure"
  level = 1

  [[classes.skills]]
  skill = "shield"
  level = 1

  [[classes.skills]]
  skill = "recall"
  level = 1

  [[classes.skills]]
  skill = "summon_rat"
  level = 1

  [[classes.skills]]
  skill = "insight"
  level = 1

  [[classes.skills]]
  skill = "fireball"
  level = 5

[[skills]]
id = "kick"
name = "kick"
kind = "skill"
moves = 10
lag_ms = 500
cooldown_ms = 4000
target = "character"
effect = "damage"
amount = "1d4"

[[skills]]
id = "magic_missile"
name = "magic missile"
kind = "spell"
mana = 5
lag_ms = 1000
target = "character"
effect = "damage"
amount = "2d4+1"

[[skills]]
id = "cure"
name = "cure"
kind = "spell"
mana = 5
target = "character"
effect = "heal"
amount = "10d1"

[[skills]]
id = "shield"
name = "shield"
kind = "spell"
mana = 5
target = "self"
effect = "affect"
affect = "shield"
seconds = 30

[[skills]]
id = "recall"
name = "recall"
kind = "spell"
mana = 5
target = "self"
effect = "teleport"
to = "lobby:hall"
cooldown_ms = 60000

[[skills]]
id = "summon_rat"
name = "summon rat"
kind = "spell"
mana = 5
target = "self"
effect = "summon"
mob = "town:rat"

[[skills]]
id = "insight"
name = "insight"
kind = "spell"
mana = 1
target = "character"
effect = "lua"
script = "insight.lua"
function = "insight"

[[skills]]
id = "fireball"
name = "fireball"
kind = "spell"
mana = 20
target = "room"
effect = "damage"
amount = "3d6"
)";

constexpr const char* kGuildToml = R"([zone]
id = "guild"
name = "The Guild"
kind = "town"
reset_minutes = 1

[[rooms]]
id = "hall"
name = "Guild Hall"
description = "Weapons and books line the walls."
flags = ["safe"]

  [[rooms.exits]]
  dir = "east"
  to = "yard"

[[rooms]]
id = "yard"
name = "Practice Yard"
description = "Straw dummies stand in a row."

  [[rooms.exits]]
  dir = "west"
  to = "hall"

[[mobs]]
id = "trainer"
name = "the guild trainer"
keywords = ["trainer"]
ground = "The guild trainer waits here."
level = 30
hp = 300
flags = ["sentinel", "trainer"]

[[mobs]]
id = "adept"
name = "an adept"
keywords = ["adept"]
ground = "An adept mutters over a book."
level = 2
hp = 500
damage = "1d2"
exp = 10
flags = ["sentinel"]
spells = ["magic_missile"]

[[resets]]
mob = "trainer"
room = "hall"

[[resets]]
mob = "adept"
room = "yard"
)";

void WriteGamePack(const TempDir& dir) {
  testing::WriteSmallPack(dir);
  dir.Write("game.toml", kGameToml);
  dir.Write("zones/guild.toml", kGuildToml);
  dir.Write("scripts/insight.lua",
            "function insight(caster, target)\n"
            "  telos.send(caster, 'Insight: ' .. target.name .. ' has ' .. target.hp .. ' hp')\n"
            "end\n");
}

// A mage who knows her spells perfectly (100: never fails, never improves), in `room`.
CharacterState Mage(const TestWorld& world, const std::string& room, int proficiency = 100,
                    const std::string& name = "Alice") {
  CharacterState s = NewCharacter(name, world.pack->start_room);
  s.room = *ParseRef(room, "");
  s.colour = false;
  s.race = "elf";
  s.char_class = "mage";
  s.may_choose = false;
  s.mana = s.max_mana = 200;
  s.hp = s.max_hp = 200;
  for (const char* id : {"magic_missile", "cure", "shield", "recall", "summon_rat", "insight"}) {
    s.skills[id] = proficiency;
  }
  return s;
}

// The live state of a player, wherever they are.
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

std::string BeatUntil(TestWorld& world, const std::string& name, const std::string& needle,
                      int max_beats) {
  std::string seen;
  for (int i = 0; i < max_beats && seen.find(needle) == std::string::npos; ++i) {
    world.Beat();
    seen += world.sink(name)->Take();
  }
  return seen;
}

// --- Content

TEST(GameContent, LoadsRacesClassesAndSkills) {
  TempDir dir;
  WriteGamePack(dir);
  std::vector<Problem> problems;
  Result<Pack> pack = LoadPack(dir.path(), &problems);
  ASSERT_TRUE(pack.ok()) << pack.status().ToString();
  const GameRules& game = pack->game;
  ASSERT_EQ(game.races.size(), 2u);
  EXPECT_EQ(game.races[1].stats.dexterity, 15);
  EXPECT_EQ(game.races[0].stats.wisdom, 13);  // unspecified: 13
  const ClassDef* mage = game.FindClass("mage");
  ASSERT_NE(mage, nullptr);
  EXPECT_EQ(mage->stats.intelligence, 2);
  EXPECT_EQ(mage->LevelFor("fireball"), 5);
  EXPECT_EQ(mage->LevelFor("kick"), 0);
  const SkillDef* recall = game.FindSkill("recall");
  ASSERT_NE(recall, nullptr);
  EXPECT_EQ(recall->effect, SkillEffect::kTeleport);
  EXPECT_EQ(recall->to, (Ref{"lobby", "hall"}));
  EXPECT_TRUE(game.FindSkill("magic_missile")->hostile);
  EXPECT_FALSE(game.FindSkill("cure")->hostile);
  ASSERT_NE(pack->FindMob(Ref{"guild", "adept"}), nullptr);
  EXPECT_EQ(pack->FindMob(Ref{"guild", "adept"})->spells,
            std::vector<std::string>{"magic_missile"});
  EXPECT_NE(pack->FindMob(Ref{"guild", "trainer"})->flags & kMobTrainer, 0u);
}

TEST(GameContent, PackWithoutGameTomlHasNoClasses) {
  TempDir dir;
  testing::WriteSmallPack(dir);
  std::vector<Problem> problems;
  Result<Pack> pack = LoadPack(dir.path(), &problems);
  ASSERT_TRUE(pack.ok()) << pack.status().ToString();
  EXPECT_TRUE(pack->game.empty());
}

TEST(GameContent, TheDefaultWorldShowsEveryFeature) {
  std::vector<Problem> problems;
  Result<Pack> pack = LoadPack(std::filesystem::path(TELOS_SOURCE_DIR) / "content", &problems);
  ASSERT_TRUE(pack.ok()) << pack.status().ToString();
  const GameRules& game = pack->game;
  EXPECT_GE(game.races.size(), 3u);
  EXPECT_GE(game.classes.size(), 3u);
  EXPECT_GE(game.skills.size(), 12u);
  std::set<SkillEffect> effects;
  std::set<SkillTarget> targets;
  for (const SkillDef& skill : game.skills) {
    effects.insert(skill.effect);
    targets.insert(skill.target);
  }
  EXPECT_EQ(effects.size(), 6u) << "every effect type is shown off";
  EXPECT_EQ(targets.size(), 4u) << "every target is shown off";
  bool trainer = false, caster = false;
  for (const ZoneDef& zone : pack->zones) {
    for (const MobDef& mob : zone.mobs) {
      trainer = trainer || (mob.flags & kMobTrainer) != 0;
      caster = caster || !mob.spells.empty();
    }
  }
  EXPECT_TRUE(trainer);
  EXPECT_TRUE(caster);
}

// Writes the game pack with `from` in game.toml replaced by `to`, loads it, returns the problems.
std::string ProblemsWith(const std::string& file, const std::string& from, const std::string& to) {
  TempDir dir;
  WriteGamePack(dir);
  std::string text = file == "game.toml" ? kGameToml : kGuildToml;
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  dir.Write(file == "game.toml" ? "game.toml" : "zones/guild.toml", text);
  std::vector<Problem> problems;
  Result<Pack> pack = LoadPack(dir.path(), &problems);
  EXPECT_FALSE(pack.ok());
  std::string all;
  for (const Problem& problem : problems) all += problem.ToString() + "\n";
  return all;
}

int LineOf(const std::string& text, const std::string& needle) {
  size_t at = text.find(needle);
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
}

TEST(GameContent, BadContentIsReportedWithFileAndLine) {
  // A class naming a skill that does not exist.
  std::string text = kGameToml;
  int line = LineOf(text, "skill = \"kick\"");
  EXPECT_THAT(ProblemsWith("game.toml", "skill = \"kick\"", "skill = \"kik\""),
              HasSubstr("game.toml:" + std::to_string(line) +
                        ": skill of class 'warrior': unknown skill 'kik'"));
  // A spell with no cost.
  line = LineOf(text, "mana = 5\nlag_ms = 1000");
  EXPECT_THAT(ProblemsWith("game.toml", "mana = 5\nlag_ms = 1000", "lag_ms = 1000"),
              HasSubstr("skill 'magic_missile': a spell must cost mana"));
  // A teleport to a room that does not exist.
  line = LineOf(text, "to = \"lobby:hall\"");
  EXPECT_THAT(ProblemsWith("game.toml", "to = \"lobby:hall\"", "to = \"lobby:nowhere\""),
              HasSubstr("game.toml:" + std::to_string(line) +
                        ": skill 'recall': unknown room 'lobby:nowhere'"));
  // A summon of a mob that does not exist, an unknown effect, a damage spell with no dice.
  EXPECT_THAT(ProblemsWith("game.toml", "mob = \"town:rat\"", "mob = \"town:dragon\""),
              HasSubstr("skill 'summon_rat': unknown mob 'town:dragon'"));
  EXPECT_THAT(ProblemsWith("game.toml", "effect = \"heal\"", "effect = \"smite\""),
              HasSubstr("unknown effect 'smite'"));
  EXPECT_THAT(ProblemsWith("game.toml", "amount = \"2d4+1\"", ""),
              HasSubstr("skill 'magic_missile': a damage or heal effect needs 'amount'"));
  EXPECT_THAT(ProblemsWith("game.toml", "default_class = \"warrior\"", "default_class = \"bard\""),
              HasSubstr("game.toml:2: game: unknown class 'bard'"));
  EXPECT_THAT(ProblemsWith("game.toml", "target = \"self\"\neffect = \"affect\"",
                           "target = \"sideways\"\neffect = \"affect\""),
              HasSubstr("unknown target 'sideways'"));
  // A mob naming a spell that does not exist.
  std::string guild = kGuildToml;
  line = LineOf(guild, "spells = [\"magic_missile\"]");
  EXPECT_THAT(ProblemsWith("guild", "spells = [\"magic_missile\"]", "spells = [\"meteor\"]"),
              HasSubstr("zones/guild.toml:" + std::to_string(line) +
                        ": spells of mob 'adept': unknown skill 'meteor'"));
}

// A class may teach no more skills than a saved character may hold, or its characters would
// be refused at their next load: the loader says so at the entry past the limit.
TEST(GameContent, AClassTeachingTooManySkillsIsReportedWithFileAndLine) {
  std::string text = kGameToml;
  std::string skills, taught;
  for (size_t i = 0; i <= limits::kCharacterSkillsMax; ++i) {
    std::string id = "drill" + std::to_string(i);
    skills += "\n[[skills]]\nid = \"" + id + "\"\nname = \"" + id +
              "\"\nkind = \"skill\"\nmoves = 1\ntarget = \"self\"\neffect = \"heal\"\n"
              "amount = \"1d1\"\n";
    taught += "\n  [[classes.skills]]\n  skill = \"" + id + "\"\n  level = 1\n";
  }
  std::string classes = "\n[[classes]]\nid = \"drillmaster\"\nname = \"Drillmaster\"\n" + taught;
  text += classes + skills;
  std::string past = "skill = \"drill" + std::to_string(limits::kCharacterSkillsMax) + "\"";
  const int line = LineOf(text, past);
  TempDir dir;
  WriteGamePack(dir);
  dir.Write("game.toml", text);
  std::vector<Problem> problems;
  Result<Pack> pack = LoadPack(dir.path(), &problems);
  EXPECT_FALSE(pack.ok());
  std::string all;
  for (const Problem& problem : problems) all += problem.ToString() + "\n";
  EXPECT_THAT(all, HasSubstr("game.toml:" + std::to_string(line) +
                             ": skill of class 'drillmaster': a class may teach at most " +
                             std::to_string(limits::kCharacterSkillsMax) + " skills"));
}

// --- Creation and migration

TEST(Creation, NewCharacterChoosesRaceAndClassInADialogue) {
  TempDir dir;
  WriteGamePack(dir);
  TestWorld world(dir.path());
  CharacterState fresh = NewCharacter("Alice", world.pack->start_room);
  fresh.colour = false;
  auto sink = world.LoginState(fresh);
  std::string arrival = sink->Take();
  EXPECT_THAT(arrival, HasSubstr("may choose your race and class: type 'choose'"));
  EXPECT_THAT(arrival, HasSubstr("Until then you are Human, Warrior."));

  std::string races = world.Do("Alice", "choose");
  EXPECT_THAT(races, HasSubstr("Which race are you?"));
  EXPECT_THAT(races, HasSubstr("1) Human"));
  EXPECT_THAT(races, HasSubstr("2) Elf"));
  std::string classes = world.Do("Alice", "2");
  EXPECT_THAT(classes, HasSubstr("Which class will you follow?"));
  EXPECT_THAT(classes, HasSubstr("2) Mage"));
  EXPECT_THAT(world.Do("Alice", "mage"), HasSubstr("You are now Elf, Mage."));

  std::string score = world.Do("Alice", "score");
  EXPECT_THAT(score, HasSubstr("Alice, level 1 Elf Mage."));
  // Elf stats plus the mage's bonuses; the mage's points.
  EXPECT_THAT(score, HasSubstr("Str 10  Dex 15  Con 11  Int 17  Wis 13"));
  EXPECT_THAT(score, HasSubstr("Mana: 44/44"));  // 40 + int bonus 2 * 2
  EXPECT_THAT(world.Do("Alice", "who"), HasSubstr("[  1 Elf Mage] Alice"));
  // The web client's character line learns the choice through GMCP.
  ASSERT_FALSE(sink->events.empty());
  bool told = false;
  for (const OutputEvent& event : sink->events) {
    told = told || (event.name == "Char.Status" &&
                    event.json.find(R"("race":"Elf","class":"Mage")") != std::string::npos);
  }
  EXPECT_TRUE(told);
  // The choice is made once.
  EXPECT_THAT(world.Do("Alice", "choose human warrior"), HasSubstr("You chose your path long ago"));
  std::optional<CharacterState> saved = StateOf(world, "alice");
  ASSERT_TRUE(saved.has_value());
  EXPECT_EQ(saved->race, "elf");
  EXPECT_EQ(saved->char_class, "mage");
  EXPECT_FALSE(saved->may_choose);
}

TEST(Creation, OneLineChoiceAndAWrongAnswerEndsTheDialogue) {
  TempDir dir;
  WriteGamePack(dir);
  TestWorld world(dir.path());
  world.Login("Bob");
  world.sink("Bob")->Take();
  world.Do("Bob", "choose");
  // Not a race: the dialogue ends and the player is not trapped in it.
  EXPECT_THAT(world.Do("Bob", "north"), HasSubstr("That is not one of the races"));
  EXPECT_THAT(world.Do("Bob", "look"), HasSubstr("Bright Atrium"));
  EXPECT_THAT(world.Do("Bob", "choose elf"), HasSubstr("Usage: choose <race> <class>"));
  EXPECT_THAT(world.Do("Bob", "choose elf warrior"), HasSubstr("You are now Elf, Warrior."));
}

TEST(Creation, CharacterSavedBeforeClassesGetsTheDefaultsAndKeepsItsStats) {
  TempDir dir;
  WriteGamePack(dir);
  TestWorld world(dir.path());
  const char* v1 = R"({"schema":1,"name":"Old","level":4,"exp":2000,
    "stats":{"str":16,"dex":12,"con":14,"int":11,"wis":10},
    "hp":50,"max_hp":60,"mana":5,"max_mana":25,"moves":70,"max_moves":85,
    "room":"lobby:atrium","wallet_coins":9,"bank_coins":0,"colour":false})";
  Result<CharacterState> old = DecodeCharacter(v1);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  auto sink = world.LoginState(*old);
  EXPECT_THAT(sink->Take(), Not(HasSubstr("choose")));
  std::string score = world.Do("Old", "score");
  EXPECT_THAT(score, HasSubstr("Old, level 4 Human Warrior."));
  EXPECT_THAT(score, HasSubstr("Str 16  Dex 12  Con 14  Int 11  Wis 10"));
  EXPECT_THAT(score, HasSubstr("Hit points: 50/60"));
  EXPECT_THAT(world.Do("Old", "choose elf mage"), HasSubstr("You chose your path long ago"));
  std::optional<CharacterState> saved = StateOf(world, "old");
  ASSERT_TRUE(saved.has_value());
  EXPECT_EQ(saved->char_class, "warrior");
  EXPECT_EQ(saved->race, "human");
}

// --- Practice and train

TEST(Training, PracticeAndTrainNeedATrainerAndSpendPoints) {
  TempDir dir;
  WriteGamePack(dir);
  TestWorld world(dir.path());
  CharacterState s = Mage(world, "guild:yard");
  s.skills.clear();
  s.practices = 1;
  s.trains = 1;
  world.LoginState(s);
  world.sink("Alice")->Take();
  EXPECT_THAT(world.Do("Alice", "practice magic"), HasSubstr("There is no trainer here."));
  world.Do("Alice", "west");
  EXPECT_THAT(world.Do("Alice", "practice kick"), HasSubstr("A mage cannot learn 'kick'."));
  EXPECT_THAT(world.Do("Alice", "practice fireball"), HasSubstr("You must reach level 5"));
  // Elf mage: int 15, wis 13 as saved (Mage() keeps NewCharacter's 13s): gain 15.
  EXPECT_THAT(world.Do("Alice", "practice magic"),
              HasSubstr("The guild trainer teaches you magic missile. You are 15% skilled."));
  EXPECT_THAT(world.Do("Alice", "practice cure"), HasSubstr("You have no practices left"));
  EXPECT_THAT(world.Do("Alice", "spells"), HasSubstr("magic missile     15%"));
  EXPECT_THAT(world.Do("Alice", "train int"), HasSubstr("Your int is now 14."));
  EXPECT_THAT(world.Do("Alice", "train int"), HasSubstr("no training sessions left"));
  std::optional<CharacterState> saved = StateOf(world, "alice");
  ASSERT_TRUE(saved.has_value());
  EXPECT_EQ(saved->skills.at("magic_missile"), 15);
  EXPECT_EQ(saved->stats.intelligence, 14);
  EXPECT_EQ(saved->practices, 0);
}

// What practice teaches is in the next periodic save (saves do not wait for a "dirty" mark:
// every player is saved each interval), so a crash after it loses at most one interval.
TEST(Training, APractisedSkillIsInTheNextPeriodicSave) {
  TempDir dir;
  WriteGamePack(dir);
  TestWorld world(dir.path());
  CharacterState s = Mage(world, "guild:hall");
  s.skills.clear();
  s.practices = 1;
  world.LoginState(s);
  world.sink("Alice")->Take();
  world.persistence.saves.clear();
  EXPECT_THAT(world.Do("Alice", "practice magic"), HasSubstr("You are 15% skilled."));
  const int beats = static_cast<int>(limits::kCharacterSaveIntervalMs / limits::kZoneHeartbeatMs);
  for (int i = 0; i <= beats && world.persistence.saves.empty(); ++i) world.Beat();
  ASSERT_FALSE(world.persistence.saves.empty());
  EXPECT_EQ(world.persistence.saves.front().reason, SaveReason::kPeriodic);
  Result<CharacterState> saved = DecodeCharacter(world.persistence.saves.front().state_json);
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  EXPECT_EQ(saved->skills.at("magic_missile"), 15);
  EXPECT_EQ(saved->practices, 0);
}

// --- Casting, cost, lag, cooldown, proficiency

TEST(Casting, CastCostsManaAndLagsAndStartsAFight) {
  TempDir dir;
  WriteGamePack(dir);
  TestWorld world(dir.path());
  world.LoginState(Mage(world, "guild:yard"));
  world.sink("Alice")->Take();
  EXPECT_THAT(world.Do("Alice", "cast meteor adept"), HasSubstr("You know no spell called"));
  EXPECT_THAT(world.Do("Alice", "cast 'magic missile' nobody"), HasSubstr("You do not see"));
  std::string hit = world.Do("Alice", "cast 'magic missile' adept");
  EXPECT_THAT(hit, HasSubstr("Your magic missile hits an adept for"));
  EXPECT_THAT(world.Do("Alice", "score"), HasSubstr("Mana: 195/200"));
  // Lag: one second before the next use.
  EXPECT_THAT(world.Do("Alice", "cast magic"), HasSubstr("You are still recovering"));
  world.Beat(4);
  // No target named: the opponent.
  EXPECT_THAT(world.Do("Alice", "cast magic"), HasSubstr("Your magic missile hits an adept"));
  EXPECT_EQ(StateOf(world, "alice")->mana, 190);
}

TEST(Casting, SkillVerbHasACooldown) {
  TempDir dir;
  WriteGamePack(dir);
  TestWorld world(dir.path());
  CharacterState s = NewCharacter("Bruno", world.pack->start_room);
  s.room = Ref{"guild", "yard"};
  s.colour = false;
  s.race = "human";
  s.char_class = "warrior";
  s.may_choose = false;
  s.skills["kick"] = 100;
  world.LoginState(s);
  world.sink("Bruno")->Take();
  EXPECT_THAT(world.Do("Bruno", "kick adept"), HasSubstr("Your kick hits an adept for"));
  world.Beat(2);  // past the 500 ms lag, inside the 4 s cooldown
  EXPECT_THAT(world.Do("Bruno", "kick"), HasSubstr("Kick is not ready yet (4 seconds)."));
  world.Beat(14);
  EXPECT_THAT(world.Do("Bruno", "kick"), HasSubstr("Your kick hits an adept"));
  // A mage has no kick verb at all.
  EXPECT_THAT(world.Do("Bruno", "cast kick"), HasSubstr("You know no spell called 'kick'"));
}

TEST(Casting, UnlearnedSpellIsRefusedAndSafeRoomsForbidHarm) {
  TempDir dir;
  WriteGamePack(dir);
  TestWorld world(dir.path());
  CharacterState s = Mage(world, "guild:hall");
  s.skills.erase("magic_missile");
  world.LoginState(s);
  world.sink("Alice")->Take();
  EXPECT_THAT(world.Do("Alice", "cast magic trainer"),
              HasSubstr("You do not know the spell 'magic missile'."));
  world.LoginState(Mage(world, "guild:hall", 100, "Cara"));
  world.sink("Cara")->Take();
  EXPECT_THAT(world.Do("Cara", "cast magic trainer"), HasSubstr("This is a place of peace."));
  EXPECT_EQ(StateOf(world, "cara")->mana, 200) << "a refused cast costs nothing";
}

TEST(Casting, ProficiencyRisesWithUseAndFailuresHappen) {
  TempDir dir;
  WriteGamePack(dir);
  TestWorld world(dir.path(), 99);
  world.LoginState(Mage(world, "guild:hall", 5));
  world.sink("Alice")->Take();
  std::string seen;
  for (int i = 0; i < 40; ++i) {
    seen += world.Do("Alice", "cast shield");
    world.Beat(1);
  }
  EXPECT_THAT(seen, HasSubstr("You lose your concentration."));
  EXPECT_THAT(seen, HasSubstr("You have become better at shield!"));
  EXPECT_GT(StateOf(world, "alice")->skills.at("shield"), 5);
}

// A cooldown is an instant the character carries: changing zones (recall itself teleports to
// another zone) and logging out and in again do not reset it.
TEST(Casting, CooldownSurvivesAZoneTransferAndARelogin) {
  TempDir dir;
  WriteGamePack(dir);
  TestWorld world(dir.path());
  world.LoginState(Mage(world, "guild:yard"));
  world.sink("Alice")->Take();
  EXPECT_THAT(world.Do("Alice", "cast recall"), HasSubstr("Quiet Hall"));
  world.Beat(4);
  ASSERT_EQ(StateOf(world, "alice")->room, (Ref{"lobby", "hall"}));
  EXPECT_THAT(world.Do("Alice", "cast recall"), HasSubstr("Recall is not ready yet (59 seconds)."));

  world.persistence.saves.clear();
  world.Do("Alice", "quit");
  world.Run();
  ASSERT_FALSE(world.persistence.saves.empty());
  Result<CharacterState> saved = DecodeCharacter(world.persistence.saves.back().state_json);
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  world.Beat(4);
  world.LoginState(*saved);
  world.sink("Alice")->Take();
  EXPECT_THAT(world.Do("Alice", "cast recall"), HasSubstr("Recall is not ready yet (58 seconds)."));
  world.Beat(58 * 4);
  EXPECT_THAT(world.Do("Alice", "cast recall"), Not(HasSubstr("not ready")));
}

// How many actors named `name` stand in `room` ("zone:room").
int CountIn(TestWorld& world, const std::string& room, const std::string& name) {
  Ref ref = *ParseRef(room, "");
  int count = 0;
  auto zone = world.host->FindZone(ref.zone);
  if (zone == nullptr) return -1;
  Status status = zone->Inspect([&](const ZoneCore& core) {
    for (const Actor* actor : core.ActorsIn(ref.id)) count += actor->name == name ? 1 : 0;
  });
  world.Run();
  EXPECT_TRUE(status.ok());
  return count;
}

// Summons are bounded per summoner, fade when their time is up or their summoner leaves the
// zone, and leave no corpse, coins or exp when killed (the rat is worth 150 exp and 7 coins).
TEST(Effects, SummonsLapseAndLeaveNothing) {
  TempDir dir;
  WriteGamePack(dir);
  TestWorld world(dir.path());
  world.LoginState(Mage(world, "guild:yard"));
  world.sink("Alice")->Take();
  EXPECT_THAT(world.Do("Alice", "cast summon"), HasSubstr("A sewer rat answers your call."));
  EXPECT_THAT(world.Do("Alice", "cast summon"), HasSubstr("A sewer rat answers your call."));
  EXPECT_THAT(world.Do("Alice", "cast summon"), HasSubstr("Nothing answers your call."));
  EXPECT_EQ(CountIn(world, "guild:yard", "a sewer rat"), 2);

  const int64_t exp = StateOf(world, "alice")->exp;
  world.Do("Alice", "kill rat");
  std::string fight = BeatUntil(world, "Alice", "is DEAD!", 400);
  ASSERT_THAT(fight, HasSubstr("A sewer rat is DEAD!"));
  EXPECT_EQ(StateOf(world, "alice")->exp, exp);
  EXPECT_THAT(world.Do("Alice", "look"), Not(HasSubstr("corpse")));
  EXPECT_EQ(CountIn(world, "guild:yard", "a sewer rat"), 1);

  // The other one's time runs out.
  const int beats = static_cast<int>(limits::kSummonLifetimeMs / limits::kZoneHeartbeatMs) + 8;
  EXPECT_THAT(BeatUntil(world, "Alice", "A sewer rat fades away.", beats),
              HasSubstr("A sewer rat fades away."));
  EXPECT_EQ(CountIn(world, "guild:yard", "a sewer rat"), 0);

  // One whose summoner left the zone fades at once.
  EXPECT_THAT(world.Do("Alice", "cast summon"), HasSubstr("A sewer rat answers your call."));
  EXPECT_THAT(world.Do("Alice", "cast recall"), HasSubstr("Quiet Hall"));
  world.Beat(kAffectPulseHeartbeats);
  EXPECT_EQ(CountIn(world, "guild:yard", "a sewer rat"), 0);
}

// --- Effects

TEST(Effects, HealShieldTeleportSummonAndLua) {
  TempDir dir;
  WriteGamePack(dir);
  TestWorld world(dir.path());
  CharacterState s = Mage(world, "guild:yard");
  s.hp = 100;
  world.LoginState(s);
  world.sink("Alice")->Take();

  world.Do("Alice", "cast cure");  // 10d1: exactly 10, on herself
  EXPECT_EQ(StateOf(world, "alice")->hp, 110);
  world.Beat(1);

  EXPECT_THAT(world.Do("Alice", "cast shield"), HasSubstr("A shimmering shield surrounds you."));
  std::string score = world.Do("Alice", "score");
  EXPECT_THAT(score, HasSubstr("Affected by shield for 30 more seconds."));
  EXPECT_THAT(score, HasSubstr("Armor: 20."));

  EXPECT_THAT(world.Do("Alice", "cast insight adept"), HasSubstr("Insight: an adept has 500 hp"));

  EXPECT_THAT(world.Do("Alice", "cast summon"), HasSubstr("A sewer rat answers your call."));
  EXPECT_THAT(world.Do("Alice", "look"), HasSubstr("A sewer rat sniffs along the wall."));

  EXPECT_THAT(world.Do("Alice", "cast recall"), HasSubstr("Quiet Hall"));
  EXPECT_EQ(StateOf(world, "alice")->room, (Ref{"lobby", "hall"}));
}

TEST(Effects, RoomDamageHitsEveryFoeAndNotThePlayers) {
  TempDir dir;
  WriteGamePack(dir);
  TestWorld world(dir.path());
  CharacterState s = Mage(world, "guild:yard");
  s.level = 5;
  s.skills["fireball"] = 100;
  world.LoginState(s);
  world.Do("Alice", "cast summon");
  world.Beat(1);
  world.Login("Bob", "guild:yard");
  world.sink("Bob")->Take();
  std::string burst = world.Do("Alice", "cast fireball");
  EXPECT_THAT(burst, HasSubstr("Your fireball hits an adept for"));
  // The summoned rat is on Alice's side: her fireball spares it.
  EXPECT_THAT(burst, Not(HasSubstr("Your fireball hits a sewer rat")));
  EXPECT_THAT(world.sink("Bob")->Take(), Not(HasSubstr("hits you")));
}

// --- Mobs cast, and it replays

std::string FightTheAdept(uint64_t seed) {
  TempDir dir;
  WriteGamePack(dir);
  TestWorld world(dir.path(), seed);
  world.LoginState(Mage(world, "guild:yard"));
  std::string seen = world.sink("Alice")->Take();
  seen += world.Do("Alice", "kill adept");
  seen += BeatUntil(world, "Alice", "An adept's magic missile hits you for", 2000);
  return seen;
}

TEST(MobSpells, AFightingMobCastsItsSpellsDeterministically) {
  std::string seen = FightTheAdept(5);
  EXPECT_THAT(seen, HasSubstr("An adept utters the words, 'magic missile'."));
  EXPECT_THAT(seen, HasSubstr("An adept's magic missile hits you for"));
  EXPECT_EQ(seen, FightTheAdept(5));
}

// --- Levels grow by class

TEST(Levels, ClassGrowthAndPracticesOnLevelling) {
  TempDir dir;
  WriteGamePack(dir);
  TestWorld world(dir.path());
  CharacterState s = NewCharacter("Bruno", world.pack->start_room);
  s.room = Ref{"town", "alley"};
  s.colour = false;
  s.race = "human";
  s.char_class = "warrior";
  s.may_choose = true;  // still new: the choice closes on levelling
  s.level = 1;
  s.exp = 1;  // not fresh: keeps these stats
  s.hp = s.max_hp = 100;
  s.practices = 0;
  s.equipment.push_back({WearSlot::kWield, {Ref{"town", "short_sword"}, {}}});
  world.LoginState(s);
  world.sink("Bruno")->Take();
  world.Do("Bruno", "kill rat");
  std::string seen = BeatUntil(world, "Bruno", "You are now level 2!", 400);
  ASSERT_THAT(seen, HasSubstr("You are now level 2!"));
  std::optional<CharacterState> after = StateOf(world, "bruno");
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->max_hp, 112);  // hp_per_level 12, con 13: no bonus
  EXPECT_EQ(after->practices, 3);
  EXPECT_EQ(after->trains, 1);
  EXPECT_FALSE(after->may_choose);
}

}  // namespace
}  // namespace telos::world
