#include "telos/sim/mix.h"

#include <gtest/gtest.h>

namespace telos::sim {
namespace {

TEST(Mix, ParsesTheIssueExample) {
  auto mix = BehaviourMix::Parse("walk=3,look=2,say=2,tell=1,fight=1,idle=1");
  ASSERT_TRUE(mix.ok()) << mix.status().ToString();
  EXPECT_EQ(mix->weight(Behaviour::kWalk), 3);
  EXPECT_EQ(mix->weight(Behaviour::kLook), 2);
  EXPECT_EQ(mix->weight(Behaviour::kIdle), 1);
  EXPECT_EQ(mix->total(), 10);
  EXPECT_EQ(mix->ToString(), "walk=3,look=2,say=2,tell=1,fight=1,idle=1,pose=0");
  EXPECT_EQ(BehaviourMix::Default().ToString(), mix->ToString());
}

TEST(Mix, MissingNamesWeighNothingAndSpacesAreAllowed) {
  auto mix = BehaviourMix::Parse(" look = 5 , say=0 ");
  ASSERT_TRUE(mix.ok()) << mix.status().ToString();
  EXPECT_EQ(mix->weight(Behaviour::kLook), 5);
  EXPECT_EQ(mix->weight(Behaviour::kWalk), 0);
  EXPECT_EQ(mix->total(), 5);
}

TEST(Mix, RejectsBadSpecs) {
  for (const char* bad :
       {"", " ", "walk", "walk=", "=3", "run=1", "walk=1,walk=2", "walk=-1", "walk=1.5", "walk=3x",
        "walk=1001", "walk=0,look=0", "walk=1,", ",walk=1", "walk=1,,look=1"}) {
    auto mix = BehaviourMix::Parse(bad);
    EXPECT_FALSE(mix.ok()) << "'" << bad << "' parsed";
    if (!mix.ok()) {
      EXPECT_EQ(mix.status().code(), StatusCode::kInvalidArgument);
    }
  }
}

TEST(Mix, PickFollowsTheWeights) {
  auto mix = BehaviourMix::Parse("walk=3,look=1");
  ASSERT_TRUE(mix.ok());
  Random random(7);
  int walks = 0;
  constexpr int kDraws = 40'000;
  for (int i = 0; i < kDraws; ++i) {
    const Behaviour b = mix->Pick(random);
    ASSERT_TRUE(b == Behaviour::kWalk || b == Behaviour::kLook);
    if (b == Behaviour::kWalk) ++walks;
  }
  EXPECT_NEAR(static_cast<double>(walks) / kDraws, 0.75, 0.01);
}

TEST(Mix, PoseIsABehaviourToo) {
  auto mix = BehaviourMix::Parse("look=2,say=2,tell=1,pose=1,idle=1");
  ASSERT_TRUE(mix.ok()) << mix.status().ToString();
  EXPECT_EQ(mix->weight(Behaviour::kPose), 1);
  EXPECT_EQ(BehaviourName(Behaviour::kPose), "pose");
}

TEST(Mix, ZeroWeightIsNeverPicked) {
  auto mix = BehaviourMix::Parse("idle=1,fight=0");
  ASSERT_TRUE(mix.ok());
  Random random(1);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(mix->Pick(random), Behaviour::kIdle);
}

}  // namespace
}  // namespace telos::sim
