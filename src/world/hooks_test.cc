// The builder hooks of issue 32 item 4 and Lua quest predicates: on_command before the built-in
// commands, timers on the zone's clock (bounded per zone, cancelled with their owner),
// on_get/on_drop/on_give for items and mobs, and quest steps that name a Lua predicate. Hostile
// hooks (errors, endless loops, huge allocations) are logged with script and line and the
// command falls through; a zone full of hostile timers keeps its heartbeat.
#include <future>
#include <thread>

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

constexpr auto kHostileDeadline = std::chrono::seconds(60);

constexpr const char* kGardenZone = R"lua([zone]
id = "garden"
name = "The Garden"
kind = "town"
reset_minutes = 5

[[rooms]]
id = "lawn"
name = "The Lawn"
description = "Grass, neatly cut."
script = "lawn.lua"

  [[rooms.exits]]
  dir = "north"
  to = "shed"

[[rooms]]
id = "shed"
name = "The Shed"
description = "Tools hang on hooks."

  [[rooms.exits]]
  dir = "south"
  to = "lawn"

[[items]]
id = "lamp"
name = "a brass lamp"
keywords = ["lamp", "brass"]
ground = "A brass lamp lies in the grass."
type = "treasure"
value = 5
script = "lamp.lua"

[[items]]
id = "apple"
name = "a red apple"
keywords = ["apple"]
ground = "A red apple lies here."
type = "food"
use_heal = 1
script = "apple.lua"

[[mobs]]
id = "gardener"
name = "the gardener"
keywords = ["gardener"]
ground = "The gardener leans on a rake."
level = 5
hp = 50
flags = ["sentinel"]
script = "gardener.lua"

[[resets]]
mob = "gardener"
room = "lawn"

[[resets]]
item = "lamp"
room = "lawn"

[[resets]]
item = "apple"
room = "lawn"
)lua";

constexpr const char* kLawnLua = R"lua(function on_command(actor, verb, args)
  if verb == "dig" then telos.send(actor, "You dig a little hole in the lawn.") return true end
  if verb == "look" and args == "sky" then telos.send(actor, "The sky is a clear blue.") return true end
  if verb == "boom" then local t = nil return t.x end
  if verb == "spin" then while true do end end
  if verb == "hog" then
    local s = {}
    for i = 1, 1e9 do s[i] = string.rep("x", 4096) .. i end
  end
  return false
end
)lua";

constexpr const char* kGardenerLua = R"lua(function on_command(actor, verb, args, self)
  if verb == "pet" then telos.say(self, "I am not a dog, " .. actor.name .. ".") return true end
end
function on_give(actor, item, self)
  telos.say(self, "Thank you for " .. item.name .. " (" .. item.ref .. ").")
end
function on_drop(actor, item, self)
  telos.say(self, "Do not litter my lawn with " .. item.name .. "!")
end
function on_get(actor, item, self)
  telos.emote(self, "watches " .. actor.name .. " pick up " .. item.name .. ".")
end
function on_speech(actor, text, self)
  if text == "remind me" then
    telos.after(2000, function() telos.say(self, "Time to water the roses, " .. actor.name .. ".") end)
  elseif text == "chime" then
    chime = telos.every(1000, function() telos.emote(self, "rings a little bell.") end)
  elseif text == "hush" then
    telos.send(actor, "cancelled: " .. tostring(telos.cancel(chime)))
  elseif text == "flood" then
    local n = 0
    for i = 1, 100 do
      if telos.after(60000, function() end) then n = n + 1 end
    end
    telos.say(self, "I set " .. n .. " timers.")
  elseif text == "doom" then
    for i = 1, 64 do telos.every(1000, function() while true do end end) end
  elseif text == "gorge" then
    telos.after(0, function()
      local t = {}
      while true do t[#t + 1] = string.rep("y", 65536) .. #t end
    end)
  elseif text == "begone" then
    telos.damage(self, 100000)
  end
end
)lua";

constexpr const char* kLampLua = R"lua(function on_get(actor, item)
  telos.send(actor, "The lamp glows warmly in your hand.")
end
function on_drop(actor, item)
  telos.send(actor, "The lamp flickers out.")
end
function on_give(actor, item, receiver)
  telos.send(actor, "The lamp winks at " .. receiver.name .. ".")
end
function on_command(actor, verb, args, self)
  if verb == "rub" then telos.send(actor, "A genie yawns out of " .. self.name .. ".") return true end
  return false
end
)lua";

constexpr const char* kAppleLua = R"lua(function on_get(actor, item)
  telos.every(1000, function() telos.send(actor, "The apple smells sweet.") end)
end
)lua";

void WriteGardenPack(const TempDir& dir) {
  testing::WriteSmallPack(dir);
  dir.Write("zones/garden.toml", kGardenZone);
  dir.Write("scripts/lawn.lua", kLawnLua);
  dir.Write("scripts/gardener.lua", kGardenerLua);
  dir.Write("scripts/lamp.lua", kLampLua);
  dir.Write("scripts/apple.lua", kAppleLua);
}

CharacterState Gardener(const std::string& name) {
  CharacterState state = NewCharacter(name, Ref{"garden", "lawn"});
  state.colour = false;
  return state;
}

size_t TimersIn(TestWorld& world, const std::string& zone_id) {
  size_t count = 0;
  auto zone = world.host->FindZone(zone_id);
  EXPECT_NE(zone, nullptr);
  if (zone == nullptr) return 0;
  Status status = zone->Inspect([&](const ZoneCore& core) { count = core.timer_count(); });
  world.Run();
  EXPECT_TRUE(status.ok());
  return count;
}

TEST(OnCommand, RoomMobAndItemHandleVerbsBeforeTheBuiltIns) {
  TempDir dir;
  WriteGardenPack(dir);
  TestWorld world(dir.path());
  world.LoginState(Gardener("Alice"))->Take();
  // A new verb, and a built-in taken over for one argument only.
  EXPECT_THAT(world.Do("Alice", "dig"), HasSubstr("You dig a little hole in the lawn."));
  EXPECT_THAT(world.Do("Alice", "look sky"), HasSubstr("The sky is a clear blue."));
  std::string look = world.Do("Alice", "look");
  EXPECT_THAT(look, HasSubstr("Grass, neatly cut.")) << "returning false falls through";
  EXPECT_THAT(look, Not(HasSubstr("clear blue")));
  // A mob's verb, and an item's: lying on the floor and then carried.
  EXPECT_THAT(world.Do("Alice", "pet gardener"),
              HasSubstr("The gardener says, 'I am not a dog, Alice.'"));
  EXPECT_THAT(world.Do("Alice", "rub"), HasSubstr("A genie yawns out of a brass lamp."));
  world.Do("Alice", "get lamp");
  world.Do("Alice", "north");
  EXPECT_THAT(world.Do("Alice", "rub"), HasSubstr("A genie yawns out of a brass lamp."));
  // Away from the lawn and the gardener, their verbs are gone.
  EXPECT_THAT(world.Do("Alice", "dig"), HasSubstr("Unknown command 'dig'"));
  EXPECT_THAT(world.Do("Alice", "pet"), Not(HasSubstr("not a dog")));
}

TEST(OnCommand, FailingHooksAreLoggedAndTheCommandFallsThrough) {
  TempDir dir;
  WriteGardenPack(dir);
  TestWorld world(dir.path());
  world.LoginState(Gardener("Alice"))->Take();
  EXPECT_THAT(world.Do("Alice", "boom"), HasSubstr("Unknown command 'boom'"));
  std::string log = world.LogText();
  EXPECT_THAT(log, HasSubstr("\"script\":\"lawn.lua\""));
  EXPECT_THAT(log, HasSubstr("\"line\":4"));
  EXPECT_THAT(world.Do("Alice", "spin"), HasSubstr("Unknown command 'spin'"));
  EXPECT_THAT(world.LogText(), HasSubstr("scripts/lawn.lua:5: instruction budget exhausted"));
  EXPECT_THAT(world.Do("Alice", "hog"), HasSubstr("Unknown command 'hog'"));
  EXPECT_THAT(world.LogText(), HasSubstr("scripts/lawn.lua:8:"));
  // The hooks still run afterwards, and so does everything else.
  EXPECT_THAT(world.Do("Alice", "dig"), HasSubstr("You dig a little hole"));
  EXPECT_THAT(world.Do("Alice", "score"), HasSubstr("Alice, level 1."));
}

TEST(ItemHooks, GetDropAndGiveRunTheItemsAndTheMobsHooks) {
  TempDir dir;
  WriteGardenPack(dir);
  TestWorld world(dir.path());
  world.LoginState(Gardener("Alice"))->Take();
  std::string got = world.Do("Alice", "get lamp");
  EXPECT_THAT(got, HasSubstr("You get a brass lamp."));
  EXPECT_THAT(got, HasSubstr("The lamp glows warmly in your hand."));
  EXPECT_THAT(got, HasSubstr("The gardener watches Alice pick up a brass lamp."));
  std::string dropped = world.Do("Alice", "drop lamp");
  EXPECT_THAT(dropped, HasSubstr("The lamp flickers out."));
  EXPECT_THAT(dropped, HasSubstr("The gardener says, 'Do not litter my lawn with a brass lamp!'"));
  // get all: one hook call per item, after the items have moved.
  std::string all = world.Do("Alice", "get all");
  EXPECT_THAT(all, HasSubstr("The gardener watches Alice pick up a red apple."));
  EXPECT_THAT(all, HasSubstr("The gardener watches Alice pick up a brass lamp."));
  std::string given = world.Do("Alice", "give lamp gardener");
  EXPECT_THAT(given, HasSubstr("You give a brass lamp to the gardener."));
  EXPECT_THAT(given, HasSubstr("The lamp winks at the gardener."));
  EXPECT_THAT(given, HasSubstr("The gardener says, 'Thank you for a brass lamp (garden:lamp).'"));
}

TEST(ScriptTimers, FireOnTheZonesClockRepeatAndCancel) {
  TempDir dir;
  WriteGardenPack(dir);
  TestWorld world(dir.path());
  auto sink = world.LoginState(Gardener("Alice"));
  sink->Take();
  world.Do("Alice", "say remind me");
  world.Beat(7);  // 1.75 s
  EXPECT_THAT(sink->Take(), Not(HasSubstr("water the roses")));
  world.Beat(1);  // 2 s
  EXPECT_THAT(sink->Take(), HasSubstr("The gardener says, 'Time to water the roses, Alice.'"));
  world.Beat(20);
  EXPECT_THAT(sink->Take(), Not(HasSubstr("water the roses"))) << "a one-shot fires once";

  world.Do("Alice", "say chime");
  std::string bells;
  world.Beat(12);  // 3 s
  bells = sink->Take();
  size_t rung = 0;
  for (size_t at = bells.find("rings a little bell"); at != std::string::npos;
       at = bells.find("rings a little bell", at + 1)) {
    ++rung;
  }
  EXPECT_EQ(rung, 3u);
  EXPECT_EQ(TimersIn(world, "garden"), 1u);
  EXPECT_THAT(world.Do("Alice", "say hush"), HasSubstr("cancelled: true"));
  world.Beat(12);
  EXPECT_THAT(sink->Take(), Not(HasSubstr("rings a little bell")));
  EXPECT_EQ(TimersIn(world, "garden"), 0u);
  EXPECT_THAT(world.Do("Alice", "say hush"), HasSubstr("cancelled: false"));
}

TEST(ScriptTimers, BoundedPerZoneAndCancelledWithTheirOwner) {
  TempDir dir;
  WriteGardenPack(dir);
  TestWorld world(dir.path());
  auto sink = world.LoginState(Gardener("Alice"));
  sink->Take();
  EXPECT_THAT(world.Do("Alice", "say flood"),
              HasSubstr("The gardener says, 'I set " +
                        std::to_string(limits::kLuaTimersPerZoneMax) + " timers.'"));
  EXPECT_EQ(TimersIn(world, "garden"), limits::kLuaTimersPerZoneMax);
  EXPECT_THAT(world.LogText(), HasSubstr("too many timers in this zone"));
  // The gardener's timers go with him.
  world.Do("Alice", "say begone");
  world.Beat(4);
  EXPECT_EQ(TimersIn(world, "garden"), 0u);

  // An item's timer goes when the item is eaten.
  world.Do("Alice", "get apple");
  world.Beat(4);
  EXPECT_THAT(sink->Take(), HasSubstr("The apple smells sweet."));
  EXPECT_EQ(TimersIn(world, "garden"), 1u);
  world.Do("Alice", "eat apple");
  sink->Take();
  world.Beat(8);
  EXPECT_THAT(sink->Take(), Not(HasSubstr("The apple smells sweet.")));
  EXPECT_EQ(TimersIn(world, "garden"), 0u);
}

// Sixty-four endlessly looping timers and one that allocates without end: each firing ends at
// its budget or the memory cap, at most kLuaTimerFiresPerHeartbeatMax a heartbeat, a failed
// repeating timer is cancelled, and the zone goes on answering. On a worker thread under a
// deadline, so a regression fails instead of hanging.
TEST(ScriptTimers, HostileTimersDoNotStallTheZone) {
  struct Seen {
    std::string look;
    std::string log;
    size_t timers_after = 99;
    std::string dig;
  };
  std::promise<Seen> promise;
  std::future<Seen> future = promise.get_future();
  std::thread worker([promise = std::move(promise)]() mutable {
    auto dir = std::make_unique<TempDir>();
    WriteGardenPack(*dir);
    auto world = std::make_unique<TestWorld>(dir->path());
    world->LoginState(Gardener("Alice"))->Take();
    Seen seen;
    world->Do("Alice", "say gorge");
    world->Do("Alice", "say doom");  // 63 of its 64 fit beside gorge's
    world->Beat(4 + 64 / static_cast<int>(limits::kLuaTimerFiresPerHeartbeatMax) + 1);
    seen.look = world->Do("Alice", "look");
    seen.dig = world->Do("Alice", "dig");
    seen.timers_after = TimersIn(*world, "garden");
    seen.log = world->LogText();
    world.reset();
    dir.reset();
    promise.set_value(std::move(seen));
  });
  if (future.wait_for(kHostileDeadline) != std::future_status::ready) {
    worker.detach();
    FAIL() << "hostile timers pinned the zone";
  }
  worker.join();
  Seen seen = future.get();
  EXPECT_THAT(seen.look, HasSubstr("The gardener leans on a rake."));
  EXPECT_THAT(seen.dig, HasSubstr("You dig a little hole"));
  EXPECT_EQ(seen.timers_after, 0u);
  EXPECT_THAT(seen.log, HasSubstr("scripts/gardener.lua:27: instruction budget exhausted"));
  EXPECT_THAT(seen.log, HasSubstr("script timer cancelled: its callback failed"));
  EXPECT_THAT(seen.log, HasSubstr("scripts/gardener.lua:31:"));
}

// --- Quest predicates

constexpr const char* kPredicateGame = R"lua(default_race = "human"
default_class = "warrior"

[[races]]
id = "human"
name = "Human"

[[classes]]
id = "warrior"
name = "Warrior"

[[classes]]
id = "mage"
name = "Mage"

[[quests]]
id = "lamp_lighter"
name = "The Lamp Lighter"
giver = "garden:gardener"
exp = 10

  [[quests.steps]]
  kind = "lua"
  text = "Reach level 2 and carry the brass lamp"
  when = "return player.level >= 2 and has_item('garden:lamp')"

[[quests]]
id = "warriors_only"
name = "Warriors Only"
giver = "garden:gardener"

  [[quests.steps]]
  kind = "lua"
  text = "Be a warrior"
  script = "quests.lua"
  function = "is_warrior"

[[quests]]
id = "endless"
name = "The Endless Task"
giver = "garden:gardener"

  [[quests.steps]]
  kind = "lua"
  text = "Wait for ever"
  when = "while true do end"
)lua";

void WritePredicatePack(const TempDir& dir) {
  WriteGardenPack(dir);
  dir.Write("game.toml", kPredicateGame);
  dir.Write("scripts/quests.lua",
            "function is_warrior(player, quest_id)\n"
            "  return player.class == 'warrior' and quest_id == 'warriors_only'\n"
            "end\n");
}

TEST(QuestPredicates, LoadAndRejectBadPredicates) {
  TempDir dir;
  WritePredicatePack(dir);
  std::vector<Problem> problems;
  Result<Pack> pack = LoadPack(dir.path(), &problems);
  ASSERT_TRUE(pack.ok()) << pack.status().ToString();
  const QuestDef* lamp = pack->game.FindQuest("lamp_lighter");
  ASSERT_NE(lamp, nullptr);
  EXPECT_EQ(lamp->steps[0].kind, QuestStepKind::kLua);
  EXPECT_THAT(lamp->steps[0].when, HasSubstr("has_item('garden:lamp')"));
  EXPECT_EQ(pack->game.FindQuest("warriors_only")->steps[0].function, "is_warrior");

  auto problems_with = [](const std::string& from, const std::string& to) {
    TempDir bad;
    WritePredicatePack(bad);
    std::string text = kPredicateGame;
    text.replace(text.find(from), from.size(), to);
    bad.Write("game.toml", text);
    std::vector<Problem> found;
    EXPECT_FALSE(LoadPack(bad.path(), &found).ok());
    std::string all;
    for (const Problem& p : found) all += p.ToString() + "\n";
    return all;
  };
  std::string text = kPredicateGame;
  const int when_line =
      1 + static_cast<int>(std::count(text.begin(), text.begin() + text.find("when = "), '\n'));
  EXPECT_THAT(problems_with("player.level >= 2 and", "player.level >= and"),
              HasSubstr("game.toml:" + std::to_string(when_line) +
                        ": step of quest 'lamp_lighter': step 1: Lua syntax error in when:1:"));
  EXPECT_THAT(problems_with("function = \"is_warrior\"", "function = \"is_wizard\""),
              HasSubstr("quest 'warriors_only' step 1: function 'is_wizard' is not defined in "
                        "scripts/quests.lua"));
  EXPECT_THAT(problems_with("script = \"quests.lua\"", "script = \"nowhere.lua\""),
              HasSubstr("script 'nowhere.lua' not found in scripts/"));
  EXPECT_THAT(problems_with("  script = \"quests.lua\"\n", ""),
              HasSubstr("a named predicate needs both 'script' and 'function'"));
  EXPECT_THAT(problems_with("text = \"Be a warrior\"", "count = 2"),
              HasSubstr("a lua step needs 'text'"));
  EXPECT_THAT(problems_with("kind = \"lua\"\n  text = \"Be a warrior\"",
                            "kind = \"talk\"\n  mob = \"garden:gardener\""),
              HasSubstr("only a lua step has 'script'"));
}

TEST(QuestPredicates, StepsHoldWhileTheirPredicateDoes) {
  TempDir dir;
  WritePredicatePack(dir);
  TestWorld world(dir.path());
  CharacterState state = Gardener("Alice");
  state.race = "human";
  state.char_class = "warrior";
  state.may_choose = false;
  world.LoginState(state)->Take();
  world.Do("Alice", "quest accept lamp");
  EXPECT_THAT(world.Do("Alice", "quest info lamp"),
              HasSubstr("Reach level 2 and carry the brass lamp (0/1)"));
  world.Do("Alice", "get lamp");
  EXPECT_THAT(world.Do("Alice", "quest complete lamp"), HasSubstr("You have not finished"))
      << "level 1 with the lamp is not enough";

  std::string warriors = world.Do("Alice", "quest accept warriors");
  EXPECT_THAT(warriors, HasSubstr("Be a warrior (1/1)"));
  EXPECT_THAT(world.Do("Alice", "quest complete warriors"),
              HasSubstr("You complete the quest 'Warriors Only'!"));

  // A predicate that never ends is stopped by its budget, logged, and simply does not hold.
  world.Do("Alice", "quest accept endless");
  EXPECT_THAT(world.Do("Alice", "quest info endless"), HasSubstr("Wait for ever (0/1)"));
  EXPECT_THAT(world.LogText(), HasSubstr("instruction budget exhausted"));
  EXPECT_THAT(world.LogText(), HasSubstr("\"script\":\"quest endless step 1\""));
  world.Do("Alice", "quest abandon endless");
  world.Do("Alice", "quit");
  world.Run();

  // At level 2, carrying the lamp, the step holds.
  state.level = 2;
  state.inventory.push_back({Ref{"garden", "lamp"}, {}});
  world.LoginState(state)->Take();
  world.Do("Alice", "quest accept lamp");
  EXPECT_THAT(world.Do("Alice", "quest"), HasSubstr("The Lamp Lighter (ready to turn in)"));
  EXPECT_THAT(world.Do("Alice", "quest complete lamp"),
              HasSubstr("You complete the quest 'The Lamp Lighter'!"));
}

TEST(QuestPredicates, AMageIsNoWarrior) {
  TempDir dir;
  WritePredicatePack(dir);
  TestWorld world(dir.path());
  CharacterState state = Gardener("Merlin");
  state.race = "human";
  state.char_class = "mage";
  state.may_choose = false;
  world.LoginState(state)->Take();
  EXPECT_THAT(world.Do("Merlin", "quest accept warriors"), HasSubstr("Be a warrior (0/1)"));
}

}  // namespace
}  // namespace telos::world
