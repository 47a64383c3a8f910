#include "filters.h"

#include <gtest/gtest.h>

#include "test_candidates.h"

namespace telos::placement {
namespace {

using testing::BaseRequest;
using testing::MatchingCandidate;

TEST(FiltersTest, AMatchingReadyPublicInstancePassesEveryFilter) {
  EXPECT_EQ(FirstFailingFilter(BaseRequest(), MatchingCandidate("a")), Filter::kNone);
}

TEST(FiltersTest, MapAlone) {
  Candidate c = MatchingCandidate("a");
  c.map = "town";
  EXPECT_EQ(FirstFailingFilter(BaseRequest(), c), Filter::kMap);
  EXPECT_EQ(FilterDetail(Filter::kMap, BaseRequest(), c), "instance map 'town', player's 'arena'");
}

TEST(FiltersTest, RegionAlone) {
  Candidate c = MatchingCandidate("a");
  c.region = "us-east";
  EXPECT_EQ(FirstFailingFilter(BaseRequest(), c), Filter::kRegion);
}

TEST(FiltersTest, BuildAlone) {
  Candidate c = MatchingCandidate("a");
  c.build = "b099";
  EXPECT_EQ(FirstFailingFilter(BaseRequest(), c), Filter::kBuild);
}

TEST(FiltersTest, ContentAlone) {
  Candidate c = MatchingCandidate("a");
  c.content = "c8";
  EXPECT_EQ(FirstFailingFilter(BaseRequest(), c), Filter::kContent);
  EXPECT_EQ(FilterDetail(Filter::kContent, BaseRequest(), c),
            "instance content 'c8', player's 'c7'");
}

TEST(FiltersTest, NotReadyCoversStartingDrainingAndGone) {
  for (InstanceState state :
       {InstanceState::kStarting, InstanceState::kDraining, InstanceState::kGone}) {
    Candidate c = MatchingCandidate("a");
    c.state = state;
    EXPECT_EQ(FirstFailingFilter(BaseRequest(), c), Filter::kNotReady) << InstanceStateName(state);
  }
  Candidate draining = MatchingCandidate("a");
  draining.state = InstanceState::kDraining;
  EXPECT_EQ(FilterDetail(Filter::kNotReady, BaseRequest(), draining), "instance is draining");
}

TEST(FiltersTest, FullAtTheHardCapNotTheSoftCap) {
  Candidate c = MatchingCandidate("a", testing::kTestSoftCap);
  EXPECT_EQ(FirstFailingFilter(BaseRequest(), c), Filter::kNone);
  c.player_count = testing::kTestHardCap - 1;
  EXPECT_EQ(FirstFailingFilter(BaseRequest(), c), Filter::kNone);
  c.player_count = testing::kTestHardCap;
  EXPECT_EQ(FirstFailingFilter(BaseRequest(), c), Filter::kFull);
  EXPECT_EQ(FilterDetail(Filter::kFull, BaseRequest(), c), "120 players at hard cap 120");
}

TEST(FiltersTest, AccessListAdmitsOnlyThoseOnIt) {
  Candidate c = MatchingCandidate("a");
  c.access_list = {5, 9};
  EXPECT_EQ(FirstFailingFilter(BaseRequest(), c), Filter::kAccess);
  c.access_list = {testing::kAsker, 9};
  EXPECT_EQ(FirstFailingFilter(BaseRequest(), c), Filter::kNone);
}

TEST(FiltersTest, TheFirstFailingFilterIsTheVerdict) {
  Candidate c = MatchingCandidate("a", testing::kTestHardCap);
  c.content = "c8";
  c.state = InstanceState::kDraining;
  c.access_list = {99};
  EXPECT_EQ(FirstFailingFilter(BaseRequest(), c), Filter::kContent);
  c.content = "c7";
  EXPECT_EQ(FirstFailingFilter(BaseRequest(), c), Filter::kNotReady);
  c.state = InstanceState::kReady;
  EXPECT_EQ(FirstFailingFilter(BaseRequest(), c), Filter::kFull);
  c.player_count = 0;
  EXPECT_EQ(FirstFailingFilter(BaseRequest(), c), Filter::kAccess);
}

}  // namespace
}  // namespace telos::placement
