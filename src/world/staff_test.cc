// Staff commands in the world (issue 30): the dispatcher's role check, goto, transfer, kick,
// mute and stat on players in this host, the hand-off of orders for players elsewhere to
// RemoteComms, and the audit record every action leaves (log line and AuditPort row).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "telos/base/limits.h"
#include "telos/base/utf8.h"
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

TEST_F(StaffTest, AMutedPlayerCannotSendMailEither) {
  LoginAs("Ada", kRoleAdmin);
  LoginAs("Bob", kRolePlayer);
  world_->mail.boxes["ada"];  // a mailbox the letter could land in
  EXPECT_THAT(Do("Ada", "mute bob 10"), HasSubstr("You mute Bob"));
  EXPECT_THAT(Do("Bob", "mail send ada let me talk"), HasSubstr("You are muted for 10 more"));
  EXPECT_TRUE(world_->mail.boxes["ada"].empty());
}

TEST_F(StaffTest, AMuteHoldsAfterTheCharacterQuitsAndLogsInAgain) {
  LoginAs("Ada", kRoleAdmin);
  LoginAs("Bob", kRolePlayer);
  EXPECT_THAT(Do("Ada", "mute bob 10"), HasSubstr("You mute Bob"));
  Do("Bob", "quit");
  ASSERT_FALSE(world_->host->ZoneOf("Bob").has_value());
  auto saved = DecodeCharacter(world_->persistence.saves.back().state_json);
  ASSERT_TRUE(saved.ok());
  world_->LoginState(std::move(*saved))->Take();
  EXPECT_THAT(Do("Bob", "say I am back"), HasSubstr("You are muted for 10 more minutes."));
}

TEST_F(StaffTest, MinutesLeftOnAMuteNearTheEndOfTimeDoNotOverflow) {
  EXPECT_EQ(MinutesLeft(0, 1), 0);
  EXPECT_EQ(MinutesLeft(60'000, 0), 1);
  EXPECT_EQ(MinutesLeft(60'001, 0), 2);
  EXPECT_EQ(MinutesLeft(INT64_MAX, 0), INT64_MAX / 60'000 + 1);
  LoginAs("Ada", kRoleAdmin);
  CharacterState bob = NewCharacter("Bob", world_->pack->start_room);
  bob.muted_until_unix_ms = INT64_MAX;  // as a row might say
  world_->LoginState(std::move(bob))->Take();
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          world_->clock.WallNow().time_since_epoch())
                          .count();
  const std::string left = std::to_string(MinutesLeft(INT64_MAX, now));
  EXPECT_THAT(Do("Bob", "say hi"), HasSubstr("You are muted for " + left + " more minutes."));
  EXPECT_THAT(Do("Ada", "stat bob"), HasSubstr("muted for " + left + " more minutes"));
}

TEST_F(StaffTest, AReattachGivesThePlayerTheRolesOfTheNewerAssertion) {
  LoginAs("Bob", kRolePlayer);
  LoginAs("Carol", kRolePlayer);
  EXPECT_THAT(Do("Bob", "stat carol"), HasSubstr("staff command"));
  world_->host->SetRoles("bob", kRoleAdmin);  // granted since, on the re-attach's assertion
  world_->Run();
  EXPECT_THAT(Do("Bob", "stat carol"), HasSubstr("Carol (player)"));
  world_->host->SetRoles("bob", kRolePlayer);  // and revoked
  world_->Run();
  EXPECT_THAT(Do("Bob", "stat carol"), HasSubstr("staff command"));
}

TEST_F(StaffTest, AnOrderFromAnotherWorldIsBoundedByThisWorldsOwnLimits) {
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          world_->clock.WallNow().time_since_epoch())
                          .count();
  StaffOrder mute;
  mute.kind = StaffKind::kMute;
  mute.issuer = "Ada";
  mute.target = "bob";
  mute.mute_until_unix_ms = now + limits::kStaffMuteMinutesMax * 60'000;
  EXPECT_TRUE(world_->host->CheckReceivedStaff(&mute).ok());
  mute.mute_until_unix_ms = now + (limits::kStaffMuteMinutesMax + 60) * 60'000;
  EXPECT_EQ(world_->host->CheckReceivedStaff(&mute).code(), StatusCode::kInvalidArgument);
  mute.mute_until_unix_ms = INT64_MAX;
  EXPECT_EQ(world_->host->CheckReceivedStaff(&mute).code(), StatusCode::kInvalidArgument);

  // A reason past the bound is cut, and never inside a character.
  StaffOrder kick;
  kick.kind = StaffKind::kKick;
  kick.issuer = "Ada";
  kick.target = "bob";
  kick.reason = "x";
  for (int i = 0; i < 300; ++i) kick.reason += "\xc3\xa9";  // e-acute, two bytes each
  ASSERT_TRUE(world_->host->CheckReceivedStaff(&kick).ok());
  EXPECT_LE(kick.reason.size(), limits::kStaffReasonBytesMax);
  EXPECT_GE(kick.reason.size(), limits::kStaffReasonBytesMax - 1);
  EXPECT_TRUE(IsValidUtf8(kick.reason));

  StaffOrder transfer;
  transfer.kind = StaffKind::kTransfer;
  transfer.issuer = "Ada";
  transfer.target = "bob";
  transfer.room = Ref{"nowhere", "void"};
  EXPECT_EQ(world_->host->CheckReceivedStaff(&transfer).code(), StatusCode::kInvalidArgument);
  transfer.room = Ref{};
  EXPECT_EQ(world_->host->CheckReceivedStaff(&transfer).code(), StatusCode::kInvalidArgument);
  transfer.room = world_->pack->start_room;
  EXPECT_TRUE(world_->host->CheckReceivedStaff(&transfer).ok());
}

TEST_F(StaffTest, TheTargetWorldAuditsWhatItAppliedAndWhatItRefused) {
  StaffOrder order;
  order.kind = StaffKind::kKick;
  order.issuer = "Ada";
  order.origin_world = "world-b";
  order.reason = "spam";
  world_->host->AuditReceivedStaff(order, "Bob", Status::Ok());
  world_->host->AuditReceivedStaff(order, "Bob", Status::PermissionDenied("bad signature"));
  ASSERT_EQ(audit_.records.size(), 2u);
  EXPECT_EQ(audit_.records[0].actor, "Ada");
  EXPECT_EQ(audit_.records[0].action, "kick");
  EXPECT_EQ(audit_.records[0].target, "Bob");
  EXPECT_EQ(audit_.records[0].world, "world-a");
  EXPECT_THAT(audit_.records[0].detail, HasSubstr("applied; from world world-b"));
  EXPECT_THAT(audit_.records[1].detail, HasSubstr("refused: "));
  EXPECT_THAT(audit_.records[1].detail, HasSubstr("bad signature"));
}

TEST_F(StaffTest, AnAuditDetailIsCutBetweenCharactersAndALongForgedNameToo) {
  StaffOrder order;
  order.kind = StaffKind::kKick;
  order.issuer = std::string(limits::kAuditDetailBytesMax + 7, 'M');
  // Whatever the offset, a cut at the bound must not land inside a two-byte character.
  for (int offset = 0; offset < 2; ++offset) {
    std::string why(static_cast<size_t>(offset), 'x');
    for (int i = 0; i < 400; ++i) why += "\xc3\xa9";
    world_->host->AuditReceivedStaff(order, "Bob", Status::PermissionDenied(why));
  }
  ASSERT_EQ(audit_.records.size(), 2u);
  for (const AuditRecord& record : audit_.records) {
    EXPECT_LE(record.detail.size(), limits::kAuditDetailBytesMax);
    EXPECT_TRUE(IsValidUtf8(record.detail));
    EXPECT_EQ(record.actor.size(), limits::kAuditDetailBytesMax);
  }
}

TEST_F(StaffTest, AnOrderElsewhereThatGetsNoAnswerInTimeIsAuditedAsUnknownNotFailed) {
  RecordingStaffComms comms;
  world_.reset();
  world_ = std::make_unique<TestWorld>(dir_.path());
  world_->host->SetAuditPort(&audit_, "world-a");
  world_->host->SetRemoteComms(&comms);
  LoginAs("Ada", kRoleAdmin);
  Do("Ada", "boot carol");
  ASSERT_EQ(comms.answers.size(), 1u);
  comms.answers[0](
      {Status::DeadlineExceeded("no answer"), "No answer about carol in time.", {}, ""});
  world_->Run();
  ASSERT_EQ(audit_.records.size(), 1u);
  EXPECT_THAT(audit_.records[0].detail, HasSubstr("unknown outcome"));
  EXPECT_THAT(audit_.records[0].detail, Not(HasSubstr("failed")));
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
