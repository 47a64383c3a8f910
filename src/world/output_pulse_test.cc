// The output pulse: who gets their output at the end of a batch, and who waits for the pulse.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "telos/base/limits.h"
#include "world_test_util.h"

namespace telos::world {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::TempDir;
using testing::TestWorld;

constexpr int64_t kPulseMs = 100;
static_assert(kPulseMs < limits::kZoneHeartbeatMs, "a pulse must come before the heartbeat");

class OutputPulseTest : public ::testing::Test {
 protected:
  OutputPulseTest() {
    testing::WriteSmallPack(dir_);
    world_ = std::make_unique<TestWorld>(dir_.path(), 42, kPulseMs);
    alice_ = world_->Login("Alice");
    bob_ = world_->Login("Bob");
    Pulse();  // the arrivals' broadcasts
    alice_->Take();
    bob_->Take();
  }

  // Advances the clock to the next output pulse (not to the heartbeat) and runs what is due.
  void Pulse() {
    world_->clock.Advance(Millis(kPulseMs));
    world_->Run();
  }

  TempDir dir_;
  std::unique_ptr<TestWorld> world_;
  std::shared_ptr<testing::FakeSink> alice_;
  std::shared_ptr<testing::FakeSink> bob_;
};

TEST_F(OutputPulseTest, TheSpeakerHearsAtOnceTheRoomAtThePulse) {
  EXPECT_THAT(world_->Do("Alice", "say hello"), HasSubstr("You say, 'hello'"));
  EXPECT_THAT(bob_->Take(), IsEmpty());
  Pulse();
  EXPECT_THAT(bob_->Take(), HasSubstr("Alice says, 'hello'"));
}

TEST_F(OutputPulseTest, LinesWithinOnePulseReachAListenerInOneDelivery) {
  const int before = bob_->deliveries;
  world_->Do("Alice", "say one");
  world_->Do("Alice", "say two");
  world_->Do("Alice", "say three");
  EXPECT_EQ(bob_->deliveries, before);
  Pulse();
  EXPECT_EQ(bob_->deliveries, before + 1);
  const std::string heard = bob_->Take();
  EXPECT_THAT(heard, HasSubstr("'one'"));
  EXPECT_THAT(heard, HasSubstr("'two'"));
  EXPECT_THAT(heard, HasSubstr("'three'"));
  EXPECT_LT(heard.find("'one'"), heard.find("'three'"));
}

TEST_F(OutputPulseTest, AListenerWhoActsGetsWhatWaitedWithTheReply) {
  world_->Do("Alice", "say before you look");
  const std::string seen = world_->Do("Bob", "look");
  EXPECT_THAT(seen, HasSubstr("Alice says, 'before you look'"));
  EXPECT_THAT(seen, HasSubstr("Bright Atrium"));
  EXPECT_LT(seen.find("before you look"), seen.find("Bright Atrium"));  // in the order it happened
}

TEST_F(OutputPulseTest, ATellGoesOutAtOnceBothWays) {
  EXPECT_THAT(world_->Do("Alice", "tell bob psst"), HasSubstr("You tell Bob, 'psst'"));
  EXPECT_THAT(bob_->Take(), HasSubstr("Alice tells you, 'psst'"));
}

TEST_F(OutputPulseTest, AChannelSpeakerSeesTheirLineAtOnceListenersAtThePulse) {
  EXPECT_THAT(world_->Do("Alice", "ooc cards tonight?"), HasSubstr("[ooc] Alice: cards tonight?"));
  EXPECT_THAT(bob_->Take(), IsEmpty());
  Pulse();
  EXPECT_THAT(bob_->Take(), HasSubstr("[ooc] Alice: cards tonight?"));
}

TEST_F(OutputPulseTest, TheWalkerSeesTheNewRoomAtOnceItsOccupantsAtThePulse) {
  EXPECT_THAT(world_->Do("Bob", "north"), HasSubstr("Quiet Hall"));
  EXPECT_THAT(alice_->Take(), IsEmpty());
  Pulse();
  EXPECT_THAT(alice_->Take(), HasSubstr("Bob leaves north"));
}

TEST_F(OutputPulseTest, NoPulseIsScheduledWhenNothingWaits) {
  world_->Do("Alice", "look");  // only Alice's own output
  const size_t pending = world_->executor.pending();
  world_->Do("Alice", "say anyone?");  // Bob's output waits: one pulse is scheduled
  EXPECT_EQ(world_->executor.pending(), pending + 1);
  world_->Do("Alice", "say still there?");  // the same pulse carries it
  EXPECT_EQ(world_->executor.pending(), pending + 1);
  Pulse();
  EXPECT_THAT(bob_->Take(), HasSubstr("still there?"));
}

TEST_F(OutputPulseTest, NoPulseJustBeforeTheHeartbeatWhichFlushesInstead) {
  // The fixture has run one pulse (100 ms) of the lobby's first heartbeat period (250 ms).
  world_->clock.Advance(Millis(80));
  world_->Run();
  const size_t pending = world_->executor.pending();
  world_->Do("Alice", "say soon");  // a pulse would land after the heartbeat
  EXPECT_EQ(world_->executor.pending(), pending);
  EXPECT_THAT(bob_->Take(), IsEmpty());
  world_->clock.Advance(Millis(limits::kZoneHeartbeatMs - kPulseMs - 80));
  world_->Run();
  EXPECT_THAT(bob_->Take(), HasSubstr("Alice says, 'soon'"));
}

TEST_F(OutputPulseTest, ALineToTheRoomIsRenderedForEachListenersColourSetting) {
  CharacterState plain = NewCharacter("Carol", world_->pack->start_room);
  plain.colour = false;
  auto carol = world_->LoginState(plain);
  Pulse();
  bob_->Take();
  carol->Take();
  world_->Do("Alice", "say {r}red{x} alert");
  Pulse();
  EXPECT_THAT(bob_->Take(), HasSubstr("Alice says, '\x1b[31mred\x1b[0m alert'"));
  EXPECT_THAT(carol->Take(), HasSubstr("Alice says, 'red alert'"));
}

TEST_F(OutputPulseTest, AFloodBetweenPulsesIsCutAtTheCapWithOneNotice) {
  const auto cap = static_cast<int>(limits::kOutputLinesPerFlushMax);
  for (int i = 0; i < cap + 50; ++i) world_->Do("Alice", "say line " + std::to_string(i));
  Pulse();
  const std::string heard = bob_->Take();
  EXPECT_THAT(heard, HasSubstr("'line " + std::to_string(cap - 1) + "'"));
  EXPECT_THAT(heard, Not(HasSubstr("'line " + std::to_string(cap) + "'")));
  const size_t notice = heard.find("[output truncated]");
  ASSERT_NE(notice, std::string::npos);
  EXPECT_EQ(heard.find("[output truncated]", notice + 1), std::string::npos);
  EXPECT_EQ(std::count(heard.begin(), heard.end(), '\n'), cap + 1);
  // The next pulse starts afresh.
  world_->Do("Alice", "say after");
  Pulse();
  EXPECT_EQ(bob_->Take(), "Alice says, 'after'\n");
}

TEST_F(OutputPulseTest, AFloodOfChatterDoesNotCutTheListenersOwnReply) {
  const auto cap = static_cast<int>(limits::kOutputLinesPerFlushMax);
  for (int i = 0; i < cap + 50; ++i) world_->Do("Alice", "say line " + std::to_string(i));
  const std::string seen = world_->Do("Bob", "look");
  EXPECT_THAT(seen, HasSubstr("'line " + std::to_string(cap - 1) + "'"));
  EXPECT_THAT(seen, Not(HasSubstr("'line " + std::to_string(cap) + "'")));
  const size_t notice = seen.find("[output truncated]");
  ASSERT_NE(notice, std::string::npos);
  EXPECT_EQ(seen.find("[output truncated]", notice + 1), std::string::npos);
  // The reply follows the cut chatter, whole.
  EXPECT_LT(notice, seen.find("Bright Atrium"));
  EXPECT_THAT(seen, HasSubstr("[Exits: "));
}

TEST(OutputPulseCrowdTest, ACrowdHearsOncePerHeartbeatInSlicesUntilItThins) {
  TempDir dir;
  testing::WriteSmallPack(dir);
  // A crowd is two listeners in one flush.
  TestWorld world(dir.path(), 42, kPulseMs, 2);
  auto alice = world.Login("Alice");
  const std::vector<std::string> names = {"Bob", "Carol", "Dan", "Erin", "Finn", "Gail"};
  std::vector<std::shared_ptr<testing::FakeSink>> listeners;
  for (const std::string& name : names) listeners.push_back(world.Login(name));
  const auto advance = [&](int64_t ms) {
    world.clock.Advance(Millis(ms));
    world.Run();
  };
  // The arrivals reach everyone at a pulse: a crowd. The zone's first heartbeat starts a period
  // of slices, in which a say reaches everyone again, so the crowd remains for the next.
  advance(limits::kZoneHeartbeatMs);
  world.Do("Alice", "say one");
  advance(limits::kZoneHeartbeatMs);
  alice->Take();
  for (auto& listener : listeners) EXPECT_THAT(listener->Take(), HasSubstr("'one'"));

  // A say is heard by each listener once, at its slice: all within one heartbeat period, at
  // more than one instant, and not all at the pulse a small room would have had.
  world.Do("Alice", "say two");
  constexpr int64_t kStepMs = 10;
  std::vector<int64_t> heard_at(listeners.size(), -1);
  std::vector<int> deliveries_before;
  for (auto& listener : listeners) deliveries_before.push_back(listener->deliveries);
  for (int64_t waited = kStepMs; waited <= limits::kZoneHeartbeatMs; waited += kStepMs) {
    advance(kStepMs);
    for (size_t i = 0; i < listeners.size(); ++i) {
      if (heard_at[i] < 0 && listeners[i]->Take().find("'two'") != std::string::npos) {
        heard_at[i] = waited;
      }
    }
  }
  std::set<int64_t> instants;
  for (size_t i = 0; i < listeners.size(); ++i) {
    EXPECT_GE(heard_at[i], 0) << names[i] << " did not hear it within a heartbeat";
    EXPECT_EQ(listeners[i]->deliveries, deliveries_before[i] + 1) << names[i];
    instants.insert(heard_at[i]);
  }
  EXPECT_GE(instants.size(), 2u) << "the crowd was flushed all at once";

  // All but Bob walk away and fall quiet: once a whole heartbeat's slices reach fewer than the
  // crowd, the pulse comes back.
  for (size_t i = 1; i < names.size(); ++i) world.Do(names[i], "north");
  advance(3 * limits::kZoneHeartbeatMs);
  listeners[0]->Take();
  world.Do("Alice", "say four");
  advance(kPulseMs);
  EXPECT_THAT(listeners[0]->Take(), HasSubstr("'four'"));
}

TEST(OutputPulseOffTest, WithoutAPulseEveryoneHearsAtTheEndOfTheBatch) {
  TempDir dir;
  testing::WriteSmallPack(dir);
  TestWorld world(dir.path(), 42, 0);
  auto alice = world.Login("Alice");
  auto bob = world.Login("Bob");
  bob->Take();
  world.Do("Alice", "say now");
  EXPECT_THAT(bob->Take(), HasSubstr("Alice says, 'now'"));
  EXPECT_THAT(alice->Take(), Not(HasSubstr("Alice says")));
}

}  // namespace
}  // namespace telos::world
