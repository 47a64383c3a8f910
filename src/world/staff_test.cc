// Staff commands in the world (issue 30): the dispatcher's role check, goto, transfer, kick,
// mute and stat on players in this host, the hand-off of orders for players elsewhere to
// RemoteComms, and the audit record every action leaves (log line and AuditPort row).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "telos/world/character_state.h"
#include "telos/world/staff.h"
#include "telos/world/world_host.h"
#include "world_test_util.h"

namespace telos::world {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::TempDir;
using testing::TestWorld;

class RecordingAudit final : public AuditPort {
 public:
  void Record(AuditRecord record) override { records.push_back(std::move(record)); }
  std::vector<AuditRecord> records;
};

// Orders for players not in this host, kept so the test answers them.
class RecordingStaffComms final : public RemoteComms {
 public:
  void Tell(const std::string&, const std::string&, const std::string&,
            std::function<void(std::string)> answer) override {
    answer("no tells here");
  }
  bool Channel(const std::string&, const std::string&, const std::string&) override { return true; }
  void Staff(const StaffOrder& order, std::function<void(StaffOutcome)> done) override {
    orders.push_back(order);
    answers.push_back(std::move(done));
  }
  std::vector<StaffOrder> orders;
  std::vector<std::function<void(StaffOutcome)>> answers;
};

class StaffTest : public ::testing::Test {
 protected:
  StaffTest() {
    testing::WriteSmallPack(dir_);
    world_ = std::make_unique<TestWorld>(dir_.path());
    world_->host->SetAuditPort(&audit_, "world-a");
  }
  // Logs in `name` with `roles`, standing in `room` (the start room if empty).
  std::shared_ptr<testing::FakeSink> LoginAs(const std::string& name, Roles roles,
                                             const std::string& room = "") {
    CharacterState state = NewCharacter(name, world_->pack->start_room);
    if (!room.empty()) state.room = *ParseRef(room, "");
    state.roles = roles;
    auto sink = world_->LoginState(std::move(state));
    sink->Take();
    return sink;
  }
  std::string Do(const std::string& name, const std::string& line) {
    return world_->Do(name, line);
  }

  TempDir dir_;
  RecordingAudit audit_;
  std::unique_ptr<TestWorld> world_;
};

TEST_F(StaffTest, EveryStaffCommandIsRefusedToAPlayerBeforeItRuns) {
  LoginAs("Mallory", kRolePlayer);
  auto bob = LoginAs("Bob", kRolePlayer, "town:square");
  for (const std::string line : {"goto bob", "goto town:square", "transfer bob", "boot bob",
                                 "mute bob 10", "unmute bob", "stat bob"}) {
    SCOPED_TRACE(line);
    const std::string out = Do("Mallory", line);
    EXPECT_THAT(out, HasSubstr("is a staff command (admin only)"));
  }
  // Nothing happened to Bob, and nothing was audited.
  EXPECT_FALSE(bob->disconnected);
  EXPECT_EQ(world_->host->ZoneOf("Bob"), "town");
  EXPECT_THAT(Do("Bob", "say still here"), HasSubstr("You say, 'still here'"));
  EXPECT_THAT(audit_.records, IsEmpty());
  // A builder is not an admin.
  LoginAs("Bea", kRoleBuilder);
  EXPECT_THAT(Do("Bea", "boot bob"), HasSubstr("is a staff command (admin only)"));
  EXPECT_FALSE(bob->disconnected);
}

TEST_F(StaffTest, AnAbbreviationNeverResolvesToAStaffCommandForAPlayer) {
  LoginAs("Mallory", kRolePlayer);
  LoginAs("Bob", kRolePlayer, "town:square");
  // "boo" would be boot for an admin; for a player it is no command at all.
  EXPECT_THAT(Do("Mallory", "boo bob"), HasSubstr("Unknown command 'boo'"));
  EXPECT_THAT(Do("Mallory", "commands"), Not(HasSubstr("boot")));
  LoginAs("Ada", kRoleAdmin);
  EXPECT_THAT(Do("Ada", "commands"), HasSubstr("boot"));
}

TEST_F(StaffTest, AnAdminKicksAPlayerWhoIsSavedAndDisconnected) {
  LoginAs("Ada", kRoleAdmin);
  auto bob = LoginAs("Bob", kRolePlayer, "town:square");
  EXPECT_THAT(Do("Ada", "boot bob spamming"), HasSubstr("You remove Bob from the game."));
  EXPECT_TRUE(bob->disconnected);
  EXPECT_THAT(bob->Take(), HasSubstr("Ada has removed you from the game: spamming"));
  EXPECT_FALSE(world_->host->ZoneOf("Bob").has_value());
  ASSERT_FALSE(world_->persistence.saves.empty());
  EXPECT_EQ(world_->persistence.saves.back().name_key, "bob");
  EXPECT_EQ(world_->persistence.saves.back().reason, SaveReason::kQuit);

  ASSERT_EQ(audit_.records.size(), 1u);
  EXPECT_EQ(audit_.records[0].actor, "Ada");
  EXPECT_EQ(audit_.records[0].action, "kick");
  EXPECT_EQ(audit_.records[0].target, "Bob");
  EXPECT_THAT(audit_.records[0].detail, HasSubstr("spamming"));
  EXPECT_EQ(audit_.records[0].world, "world-a");
  EXPECT_GT(audit_.records[0].at_unix_ms, 0);
  EXPECT_THAT(world_->LogText(), HasSubstr("audit: staff action"));
}

TEST_F(StaffTest, AMuteSilencesUntilItExpiresAndIsSaved) {
  LoginAs("Ada", kRoleAdmin);
  auto bob = LoginAs("Bob", kRolePlayer);
  EXPECT_THAT(Do("Ada", "mute bob 10 flooding"), HasSubstr("You mute Bob for 10 minutes."));
  EXPECT_THAT(bob->Take(), HasSubstr("Ada has muted you for 10 minutes: flooding"));
  for (const std::string line : {"say hi", "emote waves", "tell ada hi", "ooc hi"}) {
    SCOPED_TRACE(line);
    EXPECT_THAT(Do("Bob", line), HasSubstr("You are muted for 10 more minutes."));
  }
  auto state = DecodeCharacter(world_->persistence.saves.back().state_json);
  ASSERT_TRUE(state.ok());
  EXPECT_GT(state->muted_until_unix_ms, 0);

  world_->clock.Advance(std::chrono::minutes(10));
  EXPECT_THAT(Do("Bob", "say free"), HasSubstr("You say, 'free'"));

  EXPECT_THAT(Do("Ada", "mute bob 5"), HasSubstr("You mute Bob"));
  EXPECT_THAT(Do("Ada", "unmute bob"), HasSubstr("You unmute Bob."));
  EXPECT_THAT(Do("Bob", "say again"), HasSubstr("You say, 'again'"));
  EXPECT_THAT(Do("Ada", "mute bob forever"), HasSubstr("Usage: mute"));
  ASSERT_EQ(audit_.records.size(), 3u);
  EXPECT_EQ(audit_.records[0].action, "mute");
  EXPECT_EQ(audit_.records[2].action, "unmute");
}

TEST_F(StaffTest, GotoAndTransferMoveAcrossZones) {
  LoginAs("Ada", kRoleAdmin);  // lobby:atrium
  auto bob = LoginAs("Bob", kRolePlayer, "town:smithy");
  EXPECT_THAT(Do("Ada", "goto bob"), HasSubstr("The Smithy"));
  EXPECT_EQ(world_->host->ZoneOf("Ada"), "town");
  EXPECT_THAT(Do("Ada", "goto lobby:hall"), HasSubstr("Quiet Hall"));
  EXPECT_EQ(world_->host->ZoneOf("Ada"), "lobby");

  EXPECT_THAT(Do("Ada", "transfer bob"), HasSubstr("You bring Bob to you."));
  world_->Run();
  EXPECT_EQ(world_->host->ZoneOf("Bob"), "lobby");
  EXPECT_THAT(bob->Take(), HasSubstr("Ada summons you."));
  EXPECT_THAT(Do("Bob", "look"), HasSubstr("Quiet Hall"));

  ASSERT_EQ(audit_.records.size(), 3u);
  EXPECT_EQ(audit_.records[0].action, "goto");
  EXPECT_EQ(audit_.records[0].target, "Bob");
  EXPECT_EQ(audit_.records[1].target, "lobby:hall");
  EXPECT_EQ(audit_.records[2].action, "transfer");
}

TEST_F(StaffTest, StatShowsAPlayerAnywhereAndAMobInTheRoom) {
  LoginAs("Ada", kRoleAdmin, "town:smithy");
  LoginAs("Bob", kRoleBuilder, "lobby:hall");
  const std::string player = Do("Ada", "stat bob");
  EXPECT_THAT(player, HasSubstr("Bob (player)"));
  EXPECT_THAT(player, HasSubstr("room lobby:hall"));
  EXPECT_THAT(player, HasSubstr("roles builder"));
  const std::string mob = Do("Ada", "stat smith");
  EXPECT_THAT(mob, HasSubstr("The smith (mob town:smith)"));
  EXPECT_THAT(mob, HasSubstr("level 10"));
  EXPECT_THAT(Do("Ada", "stat nobody"), HasSubstr("Nobody called 'nobody' is online."));
  ASSERT_EQ(audit_.records.size(), 3u);
  EXPECT_EQ(audit_.records[1].target, "the smith");
  EXPECT_THAT(audit_.records[2].detail, HasSubstr("failed"));
}

TEST_F(StaffTest, AnOrderForAPlayerOnAnotherWorldGoesToTheCommsAndItsOutcomeComesBack) {
  RecordingStaffComms comms;
  // A host of its own, wired to the comms before its zones start.
  world_.reset();
  world_ = std::make_unique<TestWorld>(dir_.path());
  world_->host->SetAuditPort(&audit_, "world-a");
  world_->host->SetRemoteComms(&comms);
  LoginAs("Ada", kRoleAdmin);
  EXPECT_THAT(Do("Ada", "boot carol"), Not(HasSubstr("Nobody called")));
  ASSERT_EQ(comms.orders.size(), 1u);
  EXPECT_EQ(comms.orders[0].kind, StaffKind::kKick);
  EXPECT_EQ(comms.orders[0].issuer, "Ada");
  EXPECT_EQ(comms.orders[0].issuer_roles, kRoleAdmin);
  EXPECT_EQ(comms.orders[0].target, "carol");

  comms.answers[0]({Status::Ok(), "You remove Carol from the game.", {}, "Carol"});
  world_->Run();
  EXPECT_THAT(world_->sink("Ada")->Take(), HasSubstr("You remove Carol from the game."));
  ASSERT_EQ(audit_.records.size(), 1u);
  EXPECT_EQ(audit_.records[0].target, "Carol");

  // goto a player elsewhere: the answer names their room, and the issuer is moved there.
  Do("Ada", "goto carol");
  ASSERT_EQ(comms.orders.size(), 2u);
  comms.answers[1]({Status::Ok(), "You go to Carol.", Ref{"town", "alley"}, "Carol"});
  world_->Run();
  EXPECT_EQ(world_->host->ZoneOf("Ada"), "town");
}

TEST(StaffOrderWireTest, RolesAreNeverReadFromTheCharactersJson) {
  CharacterState state = NewCharacter("Ada", Ref{"lobby", "atrium"});
  state.roles = kRoleAdmin;
  state.muted_until_unix_ms = 1234;
  auto decoded = DecodeCharacter(EncodeCharacter(state));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->roles, kRolePlayer);
  EXPECT_EQ(decoded->muted_until_unix_ms, 1234);
  // A row someone edited to say "roles": 2 still loads as a player.
  std::string json = EncodeCharacter(NewCharacter("Eve", Ref{"lobby", "atrium"}));
  json.insert(1, "\"roles\":2,");
  auto forged = DecodeCharacter(json);
  ASSERT_TRUE(forged.ok()) << forged.status().ToString();
  EXPECT_EQ(forged->roles, kRolePlayer);
}

}  // namespace
}  // namespace telos::world
