// The Lua sandbox: escapes fail, budgets and caps hold, errors do not stop a zone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <spdlog/sinks/ostream_sink.h>

#include "lua_vm.h"
#include "world_test_util.h"

namespace telos::world {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;
using testing::TestWorld;

class FakeHost final : public ScriptHost {
 public:
  std::optional<ActorInfo> DescribeActor(uint64_t id) override {
    return ActorInfo{id, "Tester", true, 1, 10, 10, "room"};
  }
  void ScriptSend(uint64_t, std::string_view text) override { sent.emplace_back(text); }
  void ScriptEcho(std::string_view, std::string_view) override {}
  void ScriptSay(uint64_t, std::string_view) override {}
  void ScriptEmote(uint64_t, std::string_view) override {}
  bool ScriptMove(uint64_t, std::string_view) override { return false; }
  void ScriptHeal(uint64_t, int) override {}
  void ScriptDamage(uint64_t, int) override {}
  bool ScriptAffect(uint64_t, std::string_view, int64_t) override { return false; }
  bool ScriptGive(uint64_t, std::string_view) override { return false; }
  int64_t ScriptRandom(int64_t lo, int64_t) override { return lo; }
  double ScriptUnit() override { return 0.5; }
  const FlagValue* ScriptFlag(std::string_view) override { return nullptr; }
  bool ScriptSetFlag(std::string_view, FlagValue) override { return true; }
  std::vector<std::string> sent;
};

class LuaSandbox : public ::testing::Test {
 protected:
  LuaSandbox()
      : logger_("test", LogLevel::kError, std::make_shared<spdlog::sinks::ostream_sink_mt>(log_)),
        vm_("zone", logger_, host_, 4 << 20, 100'000) {}
  // Runs `body` as the body of a function and returns what it reports via telos.send.
  std::string Eval(const std::string& expression) {
    std::string script = "function probe(a)\n  local ok, v = pcall(function() return " +
                         expression +
                         " end)\n  telos.send(a, tostring(ok) .. ':' .. tostring(v))\nend\n";
    EXPECT_TRUE(vm_.Load("probe.lua", script));
    host_.sent.clear();
    EXPECT_TRUE(vm_.Call("probe.lua", "probe", {LuaActor{1}}));
    return host_.sent.empty() ? "" : host_.sent[0];
  }
  std::ostringstream log_;
  Logger logger_;
  FakeHost host_;
  LuaVm vm_;
};

TEST_F(LuaSandbox, EscapeAttemptsFail) {
  EXPECT_EQ(Eval("io"), "true:nil");
  EXPECT_EQ(Eval("os"), "true:nil");
  EXPECT_EQ(Eval("debug"), "true:nil");
  EXPECT_EQ(Eval("package"), "true:nil");
  EXPECT_EQ(Eval("load"), "true:nil");
  EXPECT_EQ(Eval("loadstring"), "true:nil");
  EXPECT_EQ(Eval("loadfile"), "true:nil");
  EXPECT_EQ(Eval("dofile"), "true:nil");
  EXPECT_EQ(Eval("require"), "true:nil");
  EXPECT_EQ(Eval("collectgarbage"), "true:nil");
  EXPECT_EQ(Eval("string.dump"), "true:nil");
  EXPECT_THAT(Eval("io.open('/etc/passwd')"), HasSubstr("false:"));
  EXPECT_THAT(Eval("os.execute('true')"), HasSubstr("false:"));
  EXPECT_THAT(Eval("require('os')"), HasSubstr("false:"));
  EXPECT_THAT(Eval("load('return 1')()"), HasSubstr("false:"));
  // The shared string metatable is hidden, so scripts cannot rewire string methods.
  EXPECT_EQ(Eval("getmetatable('')"), "true:false");
  EXPECT_THAT(Eval("getmetatable('').__index"), HasSubstr("false:"));
  // Safe things still work.
  EXPECT_EQ(Eval("string.upper('ok') .. math.floor(2.5) .. #table.concat({'a','b'})"), "true:OK22");
  EXPECT_EQ(Eval("math.random(3, 9)"), "true:3");
}

TEST_F(LuaSandbox, InfiniteLoopIsCutByTheBudget) {
  ASSERT_TRUE(vm_.Load("loop.lua", "function spin() while true do end end\n"));
  EXPECT_FALSE(vm_.Call("loop.lua", "spin", {}));
  EXPECT_THAT(vm_.last_error(), HasSubstr("instruction budget exceeded"));
  // The VM is still usable afterwards.
  ASSERT_TRUE(vm_.Load("ok.lua", "function hi(a) telos.send(a, 'still here') end\n"));
  EXPECT_TRUE(vm_.Call("ok.lua", "hi", {LuaActor{1}}));
  EXPECT_EQ(host_.sent.back(), "still here");
}

TEST_F(LuaSandbox, MemoryBombHitsTheCap) {
  ASSERT_TRUE(vm_.Load("bomb.lua",
                       "function boom() local s = string.rep('x', 64 * 1024 * 1024) return #s end\n"
                       "function grow() local t = {} for i = 1, 1e7 do t[i] = i end end\n"));
  EXPECT_FALSE(vm_.Call("bomb.lua", "boom", {}));
  EXPECT_THAT(vm_.last_error(), HasSubstr("not enough memory"));
  EXPECT_FALSE(vm_.Call("bomb.lua", "grow", {}));
  EXPECT_LE(vm_.memory_bytes(), size_t{4} << 20);
}

TEST_F(LuaSandbox, ErrorsCarryScriptAndLine) {
  ASSERT_TRUE(vm_.Load("err.lua", "function f()\n  local x = nil\n  return x.y\nend\n"));
  EXPECT_FALSE(vm_.Call("err.lua", "f", {}));
  EXPECT_THAT(vm_.last_error(), HasSubstr("scripts/err.lua:3:"));
  EXPECT_EQ(vm_.errors(), 1);
  // Bytecode is refused at load.
  EXPECT_FALSE(vm_.Load("bin.lua", std::string("\x1bLua", 4)));
  // Each script has its own globals.
  ASSERT_TRUE(vm_.Load("a.lua", "function who(x) telos.send(x, 'a') end"));
  ASSERT_TRUE(vm_.Load("b.lua", "function who(x) telos.send(x, 'b') end"));
  host_.sent.clear();
  EXPECT_TRUE(vm_.Call("a.lua", "who", {LuaActor{1}}));
  EXPECT_EQ(host_.sent.back(), "a");
}

void WriteScriptedPack(const TempDir& dir) {
  testing::WriteSmallPack(dir);
  dir.Write("zones/chapel.toml", R"([zone]
id = "chapel"
name = "The Chapel"
kind = "town"
reset_minutes = 5

[[rooms]]
id = "nave"
name = "Nave"
description = "Candles flicker."
script = "nave.lua"

[[mobs]]
id = "priest"
name = "the priest"
keywords = ["priest"]
ground = "A priest tends the candles."
level = 5
hp = 50
flags = ["sentinel"]
script = "priest.lua"

[[resets]]
mob = "priest"
room = "nave"

[[commands]]
name = "pray"
script = "nave.lua"
function = "pray"

[[commands]]
name = "boom"
script = "nave.lua"
function = "boom"

[[commands]]
name = "spin"
script = "nave.lua"
function = "spin"
)");
  dir.Write("scripts/nave.lua", R"(
function on_enter(actor)
  if actor.is_player then telos.send(actor, "{y}The candles brighten for " .. actor.name .. ".{x}") end
end
function pray(actor, args)
  local n = (telos.flag("prayers") or 0) + 1
  telos.set_flag("prayers", n)
  telos.heal(actor, 5)
  telos.affect(actor, "regeneration", 3)
  telos.send(actor, "You pray (" .. n .. "): " .. args)
end
function boom(actor, args)
  local t = nil
  return t.field
end
function spin(actor, args)
  while true do end
end
)");
  dir.Write("scripts/priest.lua", R"(
function on_speech(actor, text, self)
  if string.find(text, "bless") then telos.say(self, "Bless you, " .. actor.name .. ".") end
end
)");
}

TEST(LuaZone, HooksCommandsAndErrorsThatDoNotStopTheZone) {
  TempDir dir;
  WriteScriptedPack(dir);
  TestWorld world(dir.path());
  CharacterState state = NewCharacter("Alice", Ref{"chapel", "nave"});
  state.colour = false;
  state.hp = 10;
  auto sink = world.LoginState(state);
  EXPECT_THAT(sink->Take(), HasSubstr("The candles brighten for Alice."));
  EXPECT_THAT(world.Do("Alice", "say please bless me"),
              HasSubstr("The priest says, 'Bless you, Alice.'"));
  std::string text = world.Do("Alice", "pray for rain");
  EXPECT_THAT(text, HasSubstr("You pray (1): for rain"));
  EXPECT_THAT(text, HasSubstr("Warmth spreads through you"));
  EXPECT_THAT(world.Do("Alice", "pray again"), HasSubstr("You pray (2): again"));
  EXPECT_THAT(world.Do("Alice", "score"), HasSubstr("Hit points: 20/30"));
  // A failing script and a runaway one are logged with zone, script and line; the zone lives on.
  world.Do("Alice", "boom");
  world.Do("Alice", "spin");
  std::string log = world.LogText();
  EXPECT_THAT(log, HasSubstr("\"zone\":\"chapel\""));
  EXPECT_THAT(log, HasSubstr("\"script\":\"nave.lua\""));
  EXPECT_THAT(log, HasSubstr("\"line\":14"));
  EXPECT_THAT(log, HasSubstr("instruction budget exceeded"));
  EXPECT_THAT(world.Do("Alice", "look"), HasSubstr("A priest tends the candles."));
  world.Beat(8);
  EXPECT_THAT(world.Do("Alice", "score"), HasSubstr("Alice, level 1."));
}

}  // namespace
}  // namespace telos::world
