// Parties inside one WorldHost (members in different zones reach each other through the host's
// router, as they would through the bus): invite and accept, the errors for bad input, party
// chat, kick, leave and the leader's hand-over, the full party, an expired invitation, the copy
// carried in CharacterState, and following through exits. The cross-shard path (the same
// messages over a bus) is tested in src/shard/fleet_comms_test.cc. Manual clock and executor.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "telos/world/character_state.h"
#include "telos/world/party.h"
#include "world_test_util.h"
#include "zone_core.h"

namespace telos::world {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::TempDir;
using testing::TestWorld;

class PartyTest : public ::testing::Test {
 protected:
  PartyTest() {
    testing::WriteSmallPack(dir_);
    world_ = std::make_unique<TestWorld>(dir_.path());
  }

  // The player's state as their zone would save it now.
  CharacterState StateOf(const std::string& name) {
    CharacterState out;
    const std::string zone = *world_->host->ZoneOf(name);
    EXPECT_TRUE(world_->host->FindZone(zone)
                    ->Inspect([&](const ZoneCore& core) { out = *core.PlayerState(NameKey(name)); })
                    .ok());
    world_->Run();
    return out;
  }

  // Alice leads, Bob (in another zone) joins.
  void FormParty() {
    world_->Login("Alice");
    world_->Login("Bob", "town:square");
    EXPECT_THAT(world_->Do("Alice", "group invite bob"), HasSubstr("You invite bob"));
    EXPECT_THAT(world_->sink("Bob")->Take(), HasSubstr("Alice invites you to join their party"));
    EXPECT_THAT(world_->Do("Bob", "group accept"), HasSubstr("You join Alice's party."));
    EXPECT_THAT(world_->sink("Alice")->Take(), HasSubstr("Bob joins your party."));
  }

  TempDir dir_;
  std::unique_ptr<TestWorld> world_;
};

TEST_F(PartyTest, InviteAcceptAndListAcrossZones) {
  FormParty();
  const std::string list = world_->Do("Bob", "group");
  EXPECT_THAT(list, HasSubstr("Alice's party (2 of 6):"));
  EXPECT_THAT(list, HasSubstr("Alice (leader)"));
  EXPECT_THAT(list, HasSubstr("Bob (you)"));
  // Both copies agree.
  EXPECT_EQ(StateOf("Alice").party.members, StateOf("Bob").party.members);
  EXPECT_THAT(StateOf("Bob").party.members, ElementsAre("Alice", "Bob"));
}

TEST_F(PartyTest, PartyChatReachesEveryMemberAndNobodyElse) {
  FormParty();
  world_->Login("Carol", "town:square");
  EXPECT_THAT(world_->Do("Alice", "gtell meet at the well"),
              HasSubstr("You tell the party, 'meet at the well'"));
  EXPECT_THAT(world_->sink("Bob")->Take(), HasSubstr("[party] Alice: meet at the well"));
  EXPECT_THAT(world_->sink("Carol")->Take(), Not(HasSubstr("meet at the well")));
  EXPECT_THAT(world_->Do("Bob", "group say coming"), HasSubstr("You tell the party"));
  EXPECT_THAT(world_->sink("Alice")->Take(), HasSubstr("[party] Bob: coming"));
}

TEST_F(PartyTest, BadInputGetsClearErrors) {
  world_->Login("Alice");
  world_->Login("Bob");
  EXPECT_THAT(world_->Do("Alice", "gtell hello"), HasSubstr("You are not in a party."));
  EXPECT_THAT(world_->Do("Alice", "group invite"), HasSubstr("Invite whom?"));
  EXPECT_THAT(world_->Do("Alice", "group invite alice"), HasSubstr("your own company"));
  EXPECT_THAT(world_->Do("Alice", "group invite no;body"), HasSubstr("no player called"));
  EXPECT_THAT(world_->Do("Alice", "group invite zed"), HasSubstr("Nobody called 'zed' is online."));
  EXPECT_THAT(world_->Do("Alice", "group accept"), HasSubstr("Nobody has invited you"));
  EXPECT_THAT(world_->Do("Alice", "group leave"), HasSubstr("You are not in a party."));
  EXPECT_THAT(world_->Do("Alice", "group kick bob"), HasSubstr("You are not in a party."));
  EXPECT_THAT(world_->Do("Alice", "group frobnicate"), HasSubstr("Unknown group command"));
  // Not the leader.
  EXPECT_THAT(world_->Do("Alice", "group invite bob"), HasSubstr("You invite bob"));
  EXPECT_THAT(world_->Do("Bob", "group accept"), HasSubstr("You join Alice's party."));
  world_->Login("Carol");
  EXPECT_THAT(world_->Do("Bob", "group invite carol"),
              HasSubstr("Only the party leader (Alice) can invite."));
  EXPECT_THAT(world_->Do("Bob", "group kick alice"), HasSubstr("Only the party leader"));
  EXPECT_THAT(world_->Do("Alice", "group kick carol"), HasSubstr("carol is not in your party."));
  EXPECT_THAT(world_->Do("Alice", "group invite bob"), HasSubstr("Bob is already in your party."));
  EXPECT_THAT(world_->Do("Bob", "group follow carol"), HasSubstr("carol is not in your party."));
}

TEST_F(PartyTest, AFullPartyRefusesMoreMembers) {
  world_->Login("Leader");
  for (size_t i = 1; i < limits::kPartyMembersMax; ++i) {
    const std::string name = "Member" + std::string(1, static_cast<char>('a' + i));
    world_->Login(name);
    world_->Do("Leader", "group invite " + name);
    EXPECT_THAT(world_->Do(name, "group accept"), HasSubstr("You join Leader's party."));
  }
  world_->Login("Late");
  EXPECT_THAT(world_->Do("Leader", "group invite late"), HasSubstr("Your party is full (6"));
  EXPECT_EQ(StateOf("Leader").party.members.size(), limits::kPartyMembersMax);
}

TEST_F(PartyTest, AnInvitationAcceptedAfterTheLastSeatWentIsRefused) {
  world_->Login("Leader");
  world_->Login("Late");
  world_->Do("Leader", "group invite late");
  for (size_t i = 1; i < limits::kPartyMembersMax; ++i) {
    const std::string name = "Member" + std::string(1, static_cast<char>('a' + i));
    world_->Login(name);
    world_->Do("Leader", "group invite " + name);
    world_->Do(name, "group accept");
  }
  EXPECT_THAT(world_->Do("Late", "group accept"), HasSubstr("Leader's party is full."));
  EXPECT_TRUE(StateOf("Late").party.empty());
}

TEST_F(PartyTest, AnInvitationExpires) {
  world_->Login("Alice");
  world_->Login("Bob");
  world_->Do("Alice", "group invite bob");
  world_->clock.Advance(Millis(limits::kPartyInviteTtlMs + 1));
  EXPECT_THAT(world_->Do("Bob", "group accept"),
              HasSubstr("The invitation from Alice has expired."));
  EXPECT_TRUE(StateOf("Bob").party.empty());
}

TEST_F(PartyTest, DeclineTellsTheLeader) {
  world_->Login("Alice");
  world_->Login("Bob");
  world_->Do("Alice", "group invite bob");
  EXPECT_THAT(world_->Do("Bob", "group decline"), HasSubstr("You decline Alice's invitation."));
  EXPECT_THAT(world_->sink("Alice")->Take(), HasSubstr("Bob declines your invitation."));
  EXPECT_TRUE(StateOf("Alice").party.invited.empty());
}

TEST_F(PartyTest, KickRemovesAMemberFromEveryCopy) {
  FormParty();
  world_->Login("Carol");
  world_->Do("Alice", "group invite carol");
  world_->Do("Carol", "group accept");
  EXPECT_THAT(world_->Do("Alice", "group kick bob"), HasSubstr("You remove Bob from the party."));
  EXPECT_THAT(world_->sink("Bob")->Take(), HasSubstr("Alice has removed you from the party."));
  EXPECT_THAT(world_->sink("Carol")->Take(), HasSubstr("Alice removes Bob from the party."));
  EXPECT_TRUE(StateOf("Bob").party.empty());
  EXPECT_THAT(StateOf("Carol").party.members, ElementsAre("Alice", "Carol"));
  // Bob hears party chat no more.
  world_->Do("Alice", "gtell secret");
  EXPECT_THAT(world_->sink("Bob")->Take(), Not(HasSubstr("secret")));
}

TEST_F(PartyTest, TheLeaderLeavingHandsThePartyOn) {
  FormParty();
  world_->Login("Carol");
  world_->Do("Alice", "group invite carol");
  world_->Do("Carol", "group accept");
  EXPECT_THAT(world_->Do("Alice", "group leave"), HasSubstr("You leave Alice's party."));
  EXPECT_THAT(world_->sink("Carol")->Take(), HasSubstr("Bob leads the party now."));
  EXPECT_EQ(StateOf("Carol").party.leader, "Bob");
  EXPECT_THAT(StateOf("Bob").party.members, ElementsAre("Bob", "Carol"));
  // Bob leads now: he may invite.
  EXPECT_THAT(world_->Do("Bob", "group invite alice"), HasSubstr("You invite alice"));
}

TEST_F(PartyTest, AMemberQuittingLeavesTheParty) {
  FormParty();
  world_->Do("Bob", "quit");
  const std::string told = world_->sink("Alice")->Take();
  EXPECT_THAT(told, HasSubstr("Bob leaves your party."));
  EXPECT_THAT(told, HasSubstr("With nobody else left, your party disbands."));
  EXPECT_TRUE(StateOf("Alice").party.empty());
  // What Bob's quit saved has no party.
  ASSERT_FALSE(world_->persistence.saves.empty());
  auto saved = DecodeCharacter(world_->persistence.saves.back().state_json);
  ASSERT_TRUE(saved.ok());
  EXPECT_TRUE(saved->party.empty());
}

TEST_F(PartyTest, TheCopyTravelsInTheSavedStateAndALoginChecksItWithTheLeader) {
  FormParty();
  const CharacterState bob = StateOf("Bob");
  auto decoded = DecodeCharacter(EncodeCharacter(bob));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->party, bob.party);
  // Bob's world "crashes" (frozen and dropped without a quit); meanwhile Alice kicks him.
  bool removed = false;
  world_->host->RemovePlayer("Bob", [&] { removed = true; });
  world_->Run();
  ASSERT_TRUE(removed);
  world_->Do("Alice", "group kick bob");
  // Back from the checkpoint with his old copy: the leader says he is gone.
  world_->LoginState(bob);
  world_->Run();
  EXPECT_THAT(world_->sink("Bob")->Take(), HasSubstr("You are no longer in Alice's party."));
  EXPECT_TRUE(StateOf("Bob").party.empty());
}

TEST_F(PartyTest, ALoginWhoseLeaderIsGoneDropsTheCopy) {
  FormParty();
  const CharacterState bob = StateOf("Bob");
  bool removed = false;
  world_->host->RemovePlayer("Bob", [&] { removed = true; });
  world_->Run();
  world_->Do("Alice", "quit");
  world_->LoginState(bob);
  world_->Run();
  EXPECT_THAT(world_->sink("Bob")->Take(), HasSubstr("Your party is gone"));
  EXPECT_TRUE(StateOf("Bob").party.empty());
  EXPECT_TRUE(removed);
}

TEST_F(PartyTest, FollowersWalkAfterTheMemberTheyFollowIntoAnotherZone) {
  world_->Login("Alice");
  world_->Login("Bob");
  world_->Do("Alice", "group invite bob");
  world_->Do("Bob", "group accept");
  EXPECT_THAT(world_->Do("Bob", "group follow alice"), HasSubstr("You now follow Alice"));
  world_->Do("Alice", "north");
  EXPECT_EQ(StateOf("Bob").room.id, "hall");
  world_->Do("Alice", "south");
  world_->Do("Alice", "east");
  EXPECT_EQ(*world_->host->ZoneOf("Bob"), "town");
  EXPECT_EQ(StateOf("Bob").following, "Alice");
  EXPECT_THAT(world_->Do("Bob", "group follow off"), HasSubstr("You stop following Alice."));
  world_->Do("Alice", "west");
  EXPECT_EQ(*world_->host->ZoneOf("Bob"), "town");
}

TEST(PartyMessageTest, RoundTripsAndStrayBytesReadAsUnknown) {
  PartyMessage message{
      .op = PartyMessage::Op::kRoster,
      .party_id = "alice.1",
      .from = "Alice",
      .text = "Bob joins the party.",
      .roster = PartyState{
          .id = "alice.1", .leader = "Alice", .members = {"Alice", "Bob"}, .version = 3}};
  const PartyMessage back = DecodePartyMessage(EncodePartyMessage(message));
  EXPECT_EQ(back.op, PartyMessage::Op::kRoster);
  EXPECT_EQ(back.roster, message.roster);
  EXPECT_EQ(back.text, message.text);
  EXPECT_EQ(DecodePartyMessage("").op, PartyMessage::Op::kUnknown);
  EXPECT_EQ(DecodePartyMessage("[1]").op, PartyMessage::Op::kUnknown);
  EXPECT_EQ(DecodePartyMessage(R"({"op":"explode","from":"A"})").op, PartyMessage::Op::kUnknown);
  EXPECT_EQ(DecodePartyMessage(R"({"op":"chat"})").op, PartyMessage::Op::kUnknown);  // no sender
  // A roster whose leader is not a member, or one with too many members, is refused.
  EXPECT_EQ(
      DecodePartyMessage(
          R"({"op":"roster","party":"p","from":"A","roster":{"id":"p","leader":"Z","members":["A"]}})")
          .op,
      PartyMessage::Op::kUnknown);
  std::string crowd =
      R"({"op":"roster","party":"p","from":"A","roster":{"id":"p","leader":"A","members":["A")";
  for (size_t i = 0; i < limits::kPartyMembersMax; ++i) crowd += ",\"M" + std::to_string(i) + "\"";
  crowd += "]}}";
  EXPECT_EQ(DecodePartyMessage(crowd).op, PartyMessage::Op::kUnknown);
}

}  // namespace
}  // namespace telos::world
