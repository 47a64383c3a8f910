// The guild, friend and config commands against a fake SocialPort that answers on the test's
// thread: what each command asks, what the player is shown (answers and refusals), and guild
// chat reaching the members the port names — in other zones too — and nobody else.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "telos/world/ports.h"
#include "world_test_util.h"

namespace telos::world {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::TempDir;
using testing::TestWorld;

class FakeSocial final : public SocialPort {
 public:
  void Ask(SocialRequest request, std::function<void(SocialAnswer)> done) override {
    asked.push_back(request);
    SocialAnswer answer = next;
    if (request.op == SocialRequest::Op::kGuildInfo) answer = guild;
    done(std::move(answer));
  }
  std::vector<SocialRequest> asked;
  SocialAnswer next;   // the answer to anything but kGuildInfo
  SocialAnswer guild;  // the answer to kGuildInfo
};

class SocialTest : public ::testing::Test {
 protected:
  SocialTest() {
    testing::WriteSmallPack(dir_);
    world_ = std::make_unique<TestWorld>(dir_.path(), 42, 0,
                                         limits::kOutputPulseCrowdPlayersDefault, &social_);
    world_->Login("Alice");
    world_->Login("Bob", "town:square");
    world_->Login("Carol");
    social_.guild.guild = "Iron Wolves";
    social_.guild.rank = "founder";
    social_.guild.people = {{"Alice", "founder", true}, {"Bob", "member", true}};
  }

  TempDir dir_;
  FakeSocial social_;
  std::unique_ptr<TestWorld> world_;
};

TEST_F(SocialTest, GuildChatReachesTheMembersTheStoreNamesInEveryZone) {
  EXPECT_THAT(world_->Do("Alice", "gchat to the hall"),
              HasSubstr("[Iron Wolves] Alice: to the hall"));
  EXPECT_THAT(world_->sink("Bob")->Take(), HasSubstr("[Iron Wolves] Alice: to the hall"));
  EXPECT_THAT(world_->sink("Carol")->Take(), Not(HasSubstr("to the hall")));
  ASSERT_FALSE(social_.asked.empty());
  EXPECT_EQ(social_.asked.back().op, SocialRequest::Op::kGuildInfo);
  EXPECT_EQ(social_.asked.back().character, "Alice");
  // Not in a guild: told so, nobody hears it.
  social_.guild = SocialAnswer{};
  EXPECT_THAT(world_->Do("Carol", "gchat hello?"), HasSubstr("You are not in a guild."));
  EXPECT_THAT(world_->Do("Carol", "gchat"), HasSubstr("Say what to your guild?"));
}

TEST_F(SocialTest, GuildCommandsShowAnswersAndTheStoresRefusals) {
  const std::string info = world_->Do("Alice", "guild");
  EXPECT_THAT(info, HasSubstr("The guild Iron Wolves (you are its founder; 2 members, 2 online)"));
  EXPECT_THAT(info, HasSubstr("Bob (member) - online"));
  social_.next.status = Status::PermissionDenied(
      "Only the founder and officers of 'Iron Wolves' "
      "can invite.");
  EXPECT_THAT(world_->Do("Bob", "guild invite carol"),
              HasSubstr("Only the founder and officers of 'Iron Wolves' can invite."));
  EXPECT_EQ(social_.asked.back().op, SocialRequest::Op::kGuildInvite);
  EXPECT_EQ(social_.asked.back().arg, "carol");
  social_.next = SocialAnswer{};
  social_.next.guild = "Iron Wolves";
  EXPECT_THAT(world_->Do("Alice", "guild invite carol"), HasSubstr("You invite carol into"));
  EXPECT_THAT(world_->sink("Carol")->Take(), HasSubstr("type 'guild join Iron Wolves'"));
  EXPECT_THAT(world_->Do("Alice", "guild create"), HasSubstr("Usage: guild create <name>"));
  EXPECT_THAT(world_->Do("Alice", "guild frob"), HasSubstr("Unknown guild command"));
  social_.next.status = Status::Unavailable("down");
  EXPECT_THAT(world_->Do("Alice", "guild leave"), HasSubstr("cannot be reached right now"));
}

TEST_F(SocialTest, FriendsListShowsWhoIsOnline) {
  social_.next.people = {{"Bob", "", true}, {"Dave", "", false}};
  const std::string list = world_->Do("Alice", "friend");
  EXPECT_THAT(list, HasSubstr("Bob - online"));
  EXPECT_THAT(list, HasSubstr("Dave - offline"));
  social_.next = SocialAnswer{};
  social_.next.status = Status::NotFound("There is no character called 'zed'");
  EXPECT_THAT(world_->Do("Alice", "friend add zed"), HasSubstr("no character called 'zed'"));
  EXPECT_THAT(world_->Do("Alice", "friend add"), HasSubstr("Usage: friend add <player>"));
}

TEST_F(SocialTest, ConfigLocaleSetsAndShows) {
  social_.next.locale = "de-DE";
  EXPECT_THAT(world_->Do("Alice", "config locale de-de"), HasSubstr("Your locale is now de-DE."));
  EXPECT_EQ(social_.asked.back().op, SocialRequest::Op::kLocaleSet);
  EXPECT_EQ(social_.asked.back().arg, "de-de");
  EXPECT_THAT(world_->Do("Alice", "config locale"), HasSubstr("Your locale is de-DE."));
  social_.next.status =
      Status::InvalidArgument("locale 'xx' is not a language and a region such as en-US or de-DE");
  EXPECT_THAT(world_->Do("Alice", "config locale xx"), HasSubstr("is not a language and a region"));
  EXPECT_THAT(world_->Do("Alice", "config colours"), HasSubstr("Unknown setting"));
}

TEST(SocialWithoutAPortTest, CommandsSayTheyAreNotKeptHere) {
  TempDir dir;
  testing::WriteSmallPack(dir);
  TestWorld world(dir.path());
  world.Login("Alice");
  EXPECT_THAT(world.Do("Alice", "guild"), HasSubstr("not kept on this world"));
  EXPECT_THAT(world.Do("Alice", "friend"), HasSubstr("not kept on this world"));
}

}  // namespace
}  // namespace telos::world
