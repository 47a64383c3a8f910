// Transcript tests: fake sessions drive commands into zones and check the text they get back.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "telos/base/limits.h"
#include "telos/world/world_host.h"
#include "world_test_util.h"
#include "zone_core.h"

namespace telos::world {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::TempDir;
using testing::TestWorld;

class ZoneTest : public ::testing::Test {
 protected:
  ZoneTest() {
    testing::WriteSmallPack(dir_);
    world_ = std::make_unique<TestWorld>(dir_.path());
  }
  TempDir dir_;
  std::unique_ptr<TestWorld> world_;
};

TEST_F(ZoneTest, LoginShowsTheStartRoom) {
  auto sink = world_->Login("Alice");
  std::string text = sink->Take();
  EXPECT_THAT(text, HasSubstr("Bright Atrium"));
  EXPECT_THAT(text, HasSubstr("Sunlight falls through a glass roof.\nA fountain murmurs here."));
  EXPECT_THAT(text, HasSubstr("[Exits: north east]"));
  // Colour codes become ANSI for a colour client.
  EXPECT_THAT(text, HasSubstr("\x1b[36mBright Atrium\x1b[0m"));
  bool room_info = false, vitals = false;
  for (const OutputEvent& e : sink->events) {
    room_info |= e.name == "Room.Info" && e.json.find("\"id\":\"atrium\"") != std::string::npos;
    vitals |= e.name == "Char.Vitals" && e.json.find("\"hp\":30") != std::string::npos;
  }
  EXPECT_TRUE(room_info);
  EXPECT_TRUE(vitals);
  EXPECT_EQ(world_->host->ZoneOf("alice"), "lobby");
}

TEST_F(ZoneTest, LookAbbreviationsExtrasAndDirections) {
  CharacterState state = NewCharacter("Bob", world_->pack->start_room);
  state.colour = false;
  world_->LoginState(state)->Take();
  EXPECT_THAT(world_->Do("Bob", "l"), HasSubstr("Bright Atrium\nSunlight"));
  EXPECT_THAT(world_->Do("Bob", "look north"), HasSubstr("A quiet hall lies north."));
  EXPECT_THAT(world_->Do("Bob", "look east"), HasSubstr("leads to Market Square"));
  EXPECT_THAT(world_->Do("Bob", "examine fountain"), HasSubstr("Coins glint"));
  EXPECT_THAT(world_->Do("Bob", "sco"), HasSubstr("Bob, level 1."));
  EXPECT_THAT(world_->Do("Bob", "lok"), HasSubstr("Unknown command 'lok'. Did you mean 'look'?"));
  EXPECT_THAT(world_->Do("Bob", "wi"), HasSubstr("could mean: wield, withdraw"));
  EXPECT_THAT(world_->Do("Bob", "help rules"), HasSubstr("Be kind."));
  EXPECT_THAT(world_->Do("Bob", "help get"), HasSubstr("Usage: get <item>|all [container]"));
}

TEST_F(ZoneTest, WalkAcrossTwoZonesAndBack) {
  world_->Login("Alice")->Take();
  std::string text = world_->Do("Alice", "north");
  EXPECT_THAT(text, HasSubstr("Quiet Hall"));
  world_->Do("Alice", "s");
  text = world_->Do("Alice", "e");  // lobby -> town: a message between two zone actors
  EXPECT_THAT(text, HasSubstr("Market Square"));
  EXPECT_THAT(text, HasSubstr("A leather cap lies here."));
  EXPECT_EQ(world_->host->ZoneOf("Alice"), "town");
  text = world_->Do("Alice", "w");
  EXPECT_THAT(text, HasSubstr("Bright Atrium"));
  EXPECT_EQ(world_->host->ZoneOf("Alice"), "lobby");
  // Named exits work as commands.
  world_->Do("Alice", "n");
  text = world_->Do("Alice", "portal");
  EXPECT_THAT(text, HasSubstr("Wolf Den"));
  EXPECT_THAT(world_->Do("Alice", "jump"), HasSubstr("Unknown command 'jump'"));
}

TEST_F(ZoneTest, EnterTakesAnExitNamedEnter) {
  world_->Login("Alice", "town:smithy")->Take();
  EXPECT_THAT(world_->Do("Alice", "go"), HasSubstr("Go where?"));
  EXPECT_THAT(world_->Do("Alice", "enter"), HasSubstr("The Store Room"));
  EXPECT_THAT(world_->Do("Alice", "enter"), HasSubstr("You cannot go that way."));
  EXPECT_THAT(world_->Do("Alice", "out"), HasSubstr("The Smithy"));
  EXPECT_THAT(world_->Do("Alice", "go enter"), HasSubstr("The Store Room"));
}

TEST_F(ZoneTest, SayEmoteAndArrivalsAreSeenByOthers) {
  auto alice = world_->Login("Alice");
  auto bob = world_->Login("Bob");
  bob->Take();
  EXPECT_THAT(alice->Take(), HasSubstr("Bob arrives."));
  EXPECT_EQ(world_->Do("Bob", "say hello there"), "You say, 'hello there'\n");
  EXPECT_THAT(alice->Take(), HasSubstr("Bob says, 'hello there'"));
  world_->Do("Bob", "'short form");
  EXPECT_THAT(alice->Take(), HasSubstr("Bob says, 'short form'"));
  world_->Do("Bob", "emote waves.");
  EXPECT_THAT(alice->Take(), HasSubstr("Bob waves."));
}

TEST_F(ZoneTest, TellReplyWhoAndOocAcrossZones) {
  auto alice = world_->Login("Alice");
  auto bob = world_->Login("Bob", "town:square");
  alice->Take();
  bob->Take();
  EXPECT_THAT(world_->Do("Alice", "tell bob meet me at the fountain"),
              HasSubstr("You tell Bob, 'meet me at the fountain'"));
  EXPECT_THAT(bob->Take(), HasSubstr("Alice tells you, 'meet me at the fountain'"));
  EXPECT_THAT(world_->Do("Bob", "reply on my way"), HasSubstr("You tell Alice, 'on my way'"));
  EXPECT_THAT(alice->Take(), HasSubstr("Bob tells you, 'on my way'"));
  EXPECT_THAT(world_->Do("Alice", "tell carol hi"), HasSubstr("Nobody called 'carol'"));
  std::string who = world_->Do("Alice", "who");
  EXPECT_THAT(who, HasSubstr("Alice - The Lobby"));
  EXPECT_THAT(who, HasSubstr("Bob - Harrowgate"));
  EXPECT_THAT(who, HasSubstr("2 players online."));
  EXPECT_THAT(world_->Do("Bob", "ooc anyone seen my hat?"), HasSubstr("[ooc] Bob: anyone"));
  EXPECT_THAT(alice->Take(), HasSubstr("[ooc] Bob: anyone seen my hat?"));
}

TEST_F(ZoneTest, GetWearRemoveDropAndGive) {
  world_->Login("Alice", "town:square")->Take();
  auto bob = world_->Login("Bob", "town:square");
  EXPECT_THAT(world_->Do("Alice", "get cap"), HasSubstr("You get a leather cap."));
  EXPECT_THAT(world_->Do("Alice", "i"), HasSubstr("  a leather cap"));
  EXPECT_THAT(world_->Do("Alice", "wear cap"), HasSubstr("You wear a leather cap on your head."));
  EXPECT_THAT(world_->Do("Alice", "eq"), HasSubstr("<head>    a leather cap"));
  EXPECT_THAT(world_->Do("Alice", "score"), HasSubstr("Armor: 2."));
  EXPECT_THAT(world_->Do("Alice", "remove cap"), HasSubstr("You stop using a leather cap."));
  EXPECT_THAT(world_->Do("Alice", "give cap bob"), HasSubstr("You give a leather cap to Bob."));
  EXPECT_THAT(bob->Take(), HasSubstr("Alice gives you a leather cap."));
  EXPECT_THAT(world_->Do("Bob", "drop cap"), HasSubstr("You drop a leather cap."));
  EXPECT_THAT(world_->Do("Alice", "get sword"), HasSubstr("You do not see that here."));
}

TEST_F(ZoneTest, ShopBuySellAndBank) {
  world_->Login("Alice", "town:smithy")->Take();
  std::string list = world_->Do("Alice", "list");
  EXPECT_THAT(list, HasSubstr("30 coins  a short sword"));
  EXPECT_THAT(list, HasSubstr("10 coins  a leather cap"));
  EXPECT_THAT(world_->Do("Alice", "buy sword"), HasSubstr("That costs 30 coins"));
  EXPECT_THAT(world_->Do("Alice", "buy cap"), HasSubstr("You buy a leather cap for 10 coins."));
  EXPECT_THAT(world_->Do("Alice", "sell cap"), HasSubstr("You sell a leather cap for 5 coins."));
  EXPECT_THAT(world_->Do("Alice", "i"), HasSubstr("You have 15 coins."));
  EXPECT_THAT(world_->Do("Alice", "deposit 5"), HasSubstr("You need to be at a bank."));
  world_->Do("Alice", "s");
  EXPECT_THAT(world_->Do("Alice", "deposit 5"), HasSubstr("You deposit 5 coins. Balance: 5."));
  EXPECT_THAT(world_->Do("Alice", "withdraw 50"), HasSubstr("not that rich"));
}

TEST_F(ZoneTest, AliasMailPasswordAndQuit) {
  auto alice = world_->Login("Alice");
  world_->Login("Bob");
  alice->Take();
  EXPECT_THAT(world_->Do("Alice", "alias hi say hello all"),
              HasSubstr("Alias 'hi' = say hello all"));
  EXPECT_THAT(world_->Do("Alice", "hi"), HasSubstr("You say, 'hello all'"));
  EXPECT_THAT(world_->Do("Alice", "mail send bob the cake is in the oven"),
              HasSubstr("Your letter to bob is on its way."));
  EXPECT_THAT(world_->Do("Alice", "mail send zed hi"), HasSubstr("Nobody called 'zed'"));
  EXPECT_THAT(world_->Do("Bob", "mail"), HasSubstr("* #1 from Alice: the cake is in the oven"));
  EXPECT_THAT(world_->Do("Bob", "mail read 1"), HasSubstr("From: Alice"));
  // The subject is the letter's first 40 bytes; "é" (2 bytes) straddles byte 40, so the cut
  // keeps 39 and the letter still goes (a cut inside it would be refused as invalid UTF-8).
  const std::string straddling = std::string(39, 'a') + "\xC3\xA9 and more";
  EXPECT_THAT(world_->Do("Alice", "mail send bob " + straddling),
              HasSubstr("Your letter to bob is on its way."));
  EXPECT_THAT(world_->Do("Bob", "mail"), HasSubstr("#2 from Alice: " + std::string(39, 'a')));
  world_->passwords.passwords["alice"] = "old";
  world_->Do("Alice", "password");
  world_->Do("Alice", "wrong");
  world_->Do("Alice", "new");
  EXPECT_THAT(world_->Do("Alice", "new"), HasSubstr("not your current password"));
  world_->Do("Alice", "password");
  world_->Do("Alice", "old");
  world_->Do("Alice", "new");
  EXPECT_THAT(world_->Do("Alice", "new"), HasSubstr("Password changed."));
  size_t saves = world_->persistence.saves.size();
  EXPECT_THAT(world_->Do("Alice", "quit"), HasSubstr("Farewell."));
  EXPECT_TRUE(alice->disconnected);
  ASSERT_EQ(world_->persistence.saves.size(), saves + 1);
  const CharacterSnapshot& snapshot = world_->persistence.saves.back();
  EXPECT_EQ(snapshot.reason, SaveReason::kQuit);
  Result<CharacterState> state = DecodeCharacter(snapshot.state_json);
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->aliases.at("hi"), "say hello all");
  EXPECT_FALSE(world_->host->ZoneOf("Alice"));
  EXPECT_EQ(world_->host->Submit("Alice", "look").code(), StatusCode::kNotFound);
}

// The password command asks each secret on its own prompt with echo off; the answers go to the
// account port and nowhere else: not to the screen, the room, the alias table or the log. The
// answers here look like commands on purpose.
TEST_F(ZoneTest, PasswordAsksOnHiddenPromptsAndTheAnswersGoNowhereElse) {
  auto alice = world_->Login("Alice");
  auto bob = world_->Login("Bob");  // same room: would hear a line that ran as `say`
  alice->Take();
  bob->Take();
  const std::string old_password = "say old lantern";
  const std::string new_password = "alias brass gate key";
  world_->passwords.passwords["alice"] = old_password;
  std::string seen;

  // The one-line form is refused, changes nothing and explains the prompts.
  std::string refused = world_->Do("Alice", "password " + old_password + " " + new_password);
  EXPECT_THAT(refused, HasSubstr("Type 'password' on its own"));
  EXPECT_THAT(refused, HasSubstr("Nothing was changed."));
  EXPECT_EQ(world_->passwords.passwords["alice"], old_password);
  EXPECT_EQ(alice->echo_changes, 0);

  std::string asked = world_->Do("Alice", "password");
  EXPECT_THAT(asked, HasSubstr("Old password:"));
  EXPECT_FALSE(alice->echo_on);
  std::string next = world_->Do("Alice", old_password);
  seen += next;
  EXPECT_THAT(next, HasSubstr("New password:"));
  EXPECT_FALSE(alice->echo_on);
  next = world_->Do("Alice", new_password);
  seen += next;
  EXPECT_THAT(next, HasSubstr("Again:"));
  EXPECT_FALSE(alice->echo_on);
  next = world_->Do("Alice", new_password);
  seen += next;
  EXPECT_THAT(next, HasSubstr("Password changed."));
  EXPECT_TRUE(alice->echo_on);
  EXPECT_EQ(world_->passwords.passwords["alice"], new_password);

  // None of the answers ran as a command, and none was shown to anyone or logged.
  EXPECT_THAT(world_->Do("Alice", "alias"), HasSubstr("You have no aliases."));
  seen += bob->Take();
  world_->logger->Flush();
  seen += world_->LogText();
  for (const std::string& secret : {std::string("lantern"), std::string("brass gate")}) {
    EXPECT_THAT(seen, Not(HasSubstr(secret)));
  }
  EXPECT_THAT(seen, Not(HasSubstr("You say")));
  // A line after the dialogue is a command again.
  EXPECT_THAT(world_->Do("Alice", "say done"), HasSubstr("You say, 'done'"));
}

TEST_F(ZoneTest, PasswordDialogueMismatchWrongOldAndCancelLeaveThePasswordAlone) {
  auto alice = world_->Login("Alice");
  alice->Take();
  world_->passwords.passwords["alice"] = "first secret";

  world_->Do("Alice", "password");
  world_->Do("Alice", "first secret");
  world_->Do("Alice", "second secret");
  std::string differ = world_->Do("Alice", "third secret");
  EXPECT_THAT(differ, HasSubstr("The passwords differ."));
  EXPECT_TRUE(alice->echo_on);
  EXPECT_EQ(world_->passwords.passwords["alice"], "first secret");

  world_->Do("Alice", "password");
  world_->Do("Alice", "not it");
  world_->Do("Alice", "second secret");
  EXPECT_THAT(world_->Do("Alice", "second secret"), HasSubstr("not your current password"));
  EXPECT_TRUE(alice->echo_on);
  EXPECT_EQ(world_->passwords.passwords["alice"], "first secret");

  world_->Do("Alice", "pass");  // an abbreviation asks too
  EXPECT_FALSE(alice->echo_on);
  world_->Do("Alice", "first secret");
  EXPECT_THAT(world_->Do("Alice", ""), HasSubstr("Your password is unchanged."));
  EXPECT_TRUE(alice->echo_on);
  EXPECT_EQ(world_->passwords.passwords["alice"], "first secret");
  EXPECT_THAT(world_->Do("Alice", "look"), HasSubstr("Bright Atrium"));
  std::string all = alice->Take();
  world_->logger->Flush();
  all += world_->LogText();
  EXPECT_THAT(all, Not(HasSubstr("secret")));
}

// A player moved out of the zone mid-dialogue (here: frozen, as a zone stop or a handoff does)
// gets echo back: the question does not follow them, so nothing may stay hidden.
TEST_F(ZoneTest, PasswordDialogueEndsWithEchoOnWhenThePlayerLeavesTheZone) {
  auto alice = world_->Login("Alice");
  alice->Take();
  world_->Do("Alice", "password");
  EXPECT_FALSE(alice->echo_on);
  std::optional<PlayerTransfer> frozen;
  ASSERT_TRUE(world_->host
                  ->FreezePlayer("Alice",
                                 [&](Result<PlayerTransfer> t) {
                                   ASSERT_TRUE(t.ok());
                                   frozen = std::move(t).value();
                                 })
                  .ok());
  world_->Run();
  ASSERT_TRUE(frozen);
  EXPECT_TRUE(alice->echo_on);
  EXPECT_THAT(alice->Take(), HasSubstr("nothing was changed"));
}

TEST_F(ZoneTest, FreezeSnapshotAndAdmitElsewhere) {
  world_->Login("Alice", "town:square")->Take();
  world_->Do("Alice", "get cap");
  std::optional<PlayerTransfer> frozen;
  ASSERT_TRUE(world_->host
                  ->FreezePlayer("Alice",
                                 [&](Result<PlayerTransfer> t) {
                                   ASSERT_TRUE(t.ok());
                                   frozen = std::move(t).value();
                                 })
                  .ok());
  world_->Run();
  ASSERT_TRUE(frozen);
  EXPECT_FALSE(world_->host->ZoneOf("Alice"));
  EXPECT_EQ(frozen->state.room, (Ref{"town", "square"}));
  ASSERT_EQ(frozen->state.inventory.size(), 1u);
  EXPECT_EQ(world_->persistence.saves.back().reason, SaveReason::kFreeze);
  frozen->state.room = Ref{"lobby", "hall"};
  auto sink = std::static_pointer_cast<testing::FakeSink>(frozen->sink);
  ASSERT_TRUE(world_->host->Admit(std::move(*frozen)).ok());
  world_->Run();
  EXPECT_THAT(sink->Take(), HasSubstr("Quiet Hall"));
  EXPECT_EQ(world_->host->ZoneOf("Alice"), "lobby");
  EXPECT_THAT(world_->Do("Alice", "i"), HasSubstr("a leather cap"));
}

TEST_F(ZoneTest, ZonesStartAndStopAtRuntime) {
  world_->Login("Alice", "town:square")->Take();
  std::vector<PlayerTransfer> evicted;
  ASSERT_TRUE(
      world_->host->StopZone("town", [&](std::vector<PlayerTransfer> p) { evicted = std::move(p); })
          .ok());
  world_->Run();
  ASSERT_EQ(evicted.size(), 1u);
  EXPECT_EQ(evicted[0].state.name, "Alice");
  EXPECT_EQ(world_->host->RunningZones(), std::vector<std::string>{"lobby"});
  // Admitting into a stopped zone is refused; the start room still works.
  PlayerTransfer again = std::move(evicted[0]);
  EXPECT_EQ(world_->host->Admit(again).code(), StatusCode::kUnavailable);
  again.state.room = Ref{};
  ASSERT_TRUE(world_->host->Admit(std::move(again)).ok());
  world_->Run();
  EXPECT_THAT(world_->Do("Alice", "east"), HasSubstr("The way east is closed for now."));
  ASSERT_TRUE(world_->host->StartZone("town").ok());
  world_->Run();
  EXPECT_THAT(world_->Do("Alice", "east"), HasSubstr("Market Square"));
  // The stopped town lived on until its pending heartbeat ran; letting it go leaves the new
  // town's gauge in place.
  world_->Beat();
  EXPECT_THAT(world_->metrics.RenderText(), HasSubstr("telos_zone_occupancy{zone=\"town\"} 1"));
  EXPECT_EQ(world_->host->StartZone("town").code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(world_->host->StartZone("atlantis").code(), StatusCode::kNotFound);
}

TEST_F(ZoneTest, HeartbeatMetricsAndOccupancy) {
  world_->Login("Alice", "town:square");
  world_->Beat(4);
  std::string text = world_->metrics.RenderText();
  EXPECT_THAT(text, HasSubstr("telos_zone_tick_lag_ms_count{zone=\"town\"} 4"));
  EXPECT_THAT(text, HasSubstr("telos_zone_occupancy{zone=\"town\"} 1"));
  EXPECT_THAT(text, HasSubstr("telos_zone_occupancy{zone=\"lobby\"} 0"));
}

TEST_F(ZoneTest, WandererStaysInItsZoneAndResetsRepopulate) {
  world_->Login("Alice", "town:alley")->Take();
  EXPECT_THAT(world_->Do("Alice", "look"), HasSubstr("A sewer rat sniffs"));
  // Kill the rat off-stage by inspecting zone state after a fight is too slow here; instead
  // check a reset keeps the count at max: the zone resets every minute.
  world_->Beat(4 * 60);
  int rats = 0;
  auto zone = world_->host->FindZone("town");
  ASSERT_TRUE(zone->Inspect([&](const ZoneCore& core) {
                    rats = static_cast<int>(core.ActorsIn("alley").size()) - 1;
                  })
                  .ok());
  world_->Run();
  EXPECT_EQ(rats, 1);
}

}  // namespace
}  // namespace telos::world

namespace telos::world {
namespace {

#ifdef TELOS_SOURCE_DIR
// The default world runs: every zone starts, a player walks in, and a few game minutes of
// heartbeats (combat, scripts, wandering, resets) pass without a script error.
TEST(DefaultWorld, RunsForAFewMinutes) {
  std::filesystem::path content = std::filesystem::path(TELOS_SOURCE_DIR) / "content";
  if (!std::filesystem::exists(content / "pack.toml")) GTEST_SKIP() << "no default content yet";
  TestWorld world(content);
  EXPECT_GE(world.host->RunningZones().size(), 6u);
  auto sink = world.Login("Alice");
  EXPECT_FALSE(sink->Take().empty());
  EXPECT_FALSE(world.Do("Alice", "look").empty());
  world.Beat(4 * 60 * 3);
  EXPECT_EQ(world.host->ZoneOf("Alice"), world.pack->start_room.zone);
  EXPECT_EQ(world.LogText().find("lua script error"), std::string::npos) << world.LogText();
}
#endif

}  // namespace
}  // namespace telos::world

namespace telos::world {
namespace {

// However many zones a world starts, no two beat within a few milliseconds of each other.
TEST(HeartbeatPhaseTest, ZonesBeatSpreadOverThePeriod) {
  for (int64_t zones : {2, 7, 20}) {
    std::vector<int64_t> phases_ms;
    for (int64_t k = 0; k < zones; ++k) {
      const Duration phase = WorldHost::HeartbeatPhase(k);
      ASSERT_GE(phase, Duration::zero());
      ASSERT_LT(phase, Millis(limits::kZoneHeartbeatMs));
      phases_ms.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(phase).count());
    }
    std::sort(phases_ms.begin(), phases_ms.end());
    int64_t closest = limits::kZoneHeartbeatMs - phases_ms.back() + phases_ms.front();
    for (size_t i = 1; i < phases_ms.size(); ++i) {
      closest = std::min(closest, phases_ms[i] - phases_ms[i - 1]);
    }
    // An even spread would give period / zones; the golden-ratio sequence keeps a third of it.
    EXPECT_GE(closest, limits::kZoneHeartbeatMs / zones / 3) << zones << " zones";
  }
}

}  // namespace
}  // namespace telos::world

namespace telos::world {
namespace {

TEST(CrowdedRoomTest, LookNamesACrowdsWorthOfPlayersAndCountsTheRest) {
  TempDir dir;
  testing::WriteSmallPack(dir);
  TestWorld world(dir.path());
  const size_t others = limits::kRoomPlayersListedMax + 4;
  for (size_t i = 0; i < others; ++i) world.Login("Guest" + std::string(1, char('a' + i)));
  world.Login("Alice")->Take();  // the room as shown at login
  const std::string seen = world.Do("Alice", "look");
  size_t named = 0;
  for (size_t pos = seen.find(" is here."); pos != std::string::npos;
       pos = seen.find(" is here.", pos + 1)) {
    ++named;
  }
  EXPECT_EQ(named, limits::kRoomPlayersListedMax);
  EXPECT_THAT(seen, HasSubstr("4 other people are here."));
  EXPECT_THAT(seen, HasSubstr("[Exits: north east]"));  // the room itself is all there
}

}  // namespace
}  // namespace telos::world
