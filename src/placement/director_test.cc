#include "telos/placement/director.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "test_candidates.h"

namespace telos::placement {
namespace {

using testing::AddPlayers;
using testing::BaseRequest;
using testing::MatchingCandidate;

TEST(DirectorTest, NoCandidatesIsARefusal) {
  const PlacementDecision d = PlacementDirector().Place(BaseRequest(), {});
  EXPECT_EQ(d.outcome, Outcome::kRefused);
  EXPECT_EQ(d.winner, kNoWinner);
  EXPECT_TRUE(d.instance_id.empty());
  EXPECT_TRUE(d.verdicts.empty());
}

TEST(DirectorTest, EveryCandidateGetsAVerdictAndFilteredOnesAreNotScored) {
  std::vector<Candidate> candidates = {MatchingCandidate("a", 50), MatchingCandidate("b"),
                                       MatchingCandidate("c")};
  candidates[0].content = "c6";  // would have scored the fill term
  candidates[2].state = InstanceState::kStarting;
  const PlacementDecision d = PlacementDirector().Place(BaseRequest(), candidates);
  ASSERT_EQ(d.verdicts.size(), 3u);
  EXPECT_EQ(d.verdicts[0].excluded_by, Filter::kContent);
  EXPECT_EQ(d.verdicts[0].score, 0);
  EXPECT_EQ(d.verdicts[0].terms, TermPoints{});
  EXPECT_TRUE(d.verdicts[1].scored());
  EXPECT_EQ(d.verdicts[2].excluded_by, Filter::kNotReady);
  EXPECT_TRUE(d.placed());
  EXPECT_EQ(d.winner, 1u);
  EXPECT_EQ(d.instance_id, "b");
  EXPECT_EQ(d.endpoint, candidates[1].endpoint);
}

TEST(DirectorTest, RefusedWhenEveryCandidateIsFiltered) {
  std::vector<Candidate> candidates = {MatchingCandidate("a", testing::kTestHardCap),
                                       MatchingCandidate("b")};
  candidates[1].region = "ap-south";
  const PlacementDecision d = PlacementDirector().Place(BaseRequest(), candidates);
  EXPECT_EQ(d.outcome, Outcome::kRefused);
  EXPECT_EQ(d.verdicts[0].excluded_by, Filter::kFull);
  EXPECT_EQ(d.verdicts[1].excluded_by, Filter::kRegion);
}

TEST(DirectorTest, HighestScoreWins) {
  std::vector<Candidate> candidates = {MatchingCandidate("a", 10), MatchingCandidate("b", 60),
                                       MatchingCandidate("c", 100)};
  const PlacementDecision d = PlacementDirector().Place(BaseRequest(), candidates);
  EXPECT_EQ(d.instance_id, "b");  // inside the fill band
  EXPECT_EQ(d.score, 250);
}

TEST(DirectorTest, TiesPreferTheFullerInstanceThenTheSmallerIdWhateverTheOrder) {
  std::vector<Candidate> candidates = {MatchingCandidate("d", 10), MatchingCandidate("c", 20),
                                       MatchingCandidate("b", 20), MatchingCandidate("a", 5)};
  const PlacementDirector director;
  for (int round = 0; round < 4; ++round) {
    std::rotate(candidates.begin(), candidates.begin() + 1, candidates.end());
    EXPECT_EQ(director.Place(BaseRequest(), candidates).instance_id, "b") << round;
  }
}

TEST(DirectorTest, PartyPullBeatsEverythingElsePutTogether) {
  PlacementRequest request = BaseRequest();
  request.party = {20};
  request.guild = {30, 31, 32, 33, 34};
  request.friends = {40, 41, 42, 43, 44};
  // Every other reward at its maximum.
  Candidate everything = MatchingCandidate("everything", 0);
  AddPlayers(everything, {30, 31, 32, 33, 34, 40, 41, 42, 43, 44});
  everything.player_count = 60;
  everything.locale = "en";
  // The party member's instance, past its age and overfull.
  Candidate party = MatchingCandidate("party", 95);
  AddPlayers(party, {20});
  party.age_ms = kDefaultAgeMaxMs + 1;
  const PlacementDirector director;
  const PlacementDecision d = director.Place(request, std::vector<Candidate>{everything, party});
  EXPECT_EQ(d.verdicts[0].score, 2'000 + 1'000 + 300 + 250);
  EXPECT_EQ(d.verdicts[1].score, 10'000 - 100 - 15 * 40);
  EXPECT_EQ(d.instance_id, "party");
  EXPECT_GT(director.weights().party_points, MaxNonPartyPoints(director.weights()));
}

TEST(DirectorTest, AntiflapSteersAwayFromTheInstanceJustLeft) {
  PlacementRequest request = BaseRequest();
  request.moved_off = "a";
  std::vector<Candidate> candidates = {MatchingCandidate("a", 60), MatchingCandidate("b", 10)};
  EXPECT_EQ(PlacementDirector().Place(request, candidates).instance_id, "b");
}

TEST(DirectorTest, PlaceIntoReusesTheDecision) {
  const PlacementDirector director;
  PlacementDecision d;
  std::vector<Candidate> three = {MatchingCandidate("a"), MatchingCandidate("b"),
                                  MatchingCandidate("c")};
  director.Place(BaseRequest(), three, d);
  EXPECT_TRUE(d.placed());
  std::vector<Candidate> full = {MatchingCandidate("z", testing::kTestHardCap)};
  director.Place(BaseRequest(), full, d);
  EXPECT_FALSE(d.placed());
  EXPECT_TRUE(d.instance_id.empty());
  ASSERT_EQ(d.verdicts.size(), 1u);
  EXPECT_EQ(d.verdicts[0].excluded_by, Filter::kFull);
}

TEST(DirectorTest, CustomWeightsChangeTheChoice) {
  Weights weights;
  weights.locale_points = 100;  // now worth less than the fill band
  std::vector<Candidate> candidates = {MatchingCandidate("a", 60), MatchingCandidate("b", 10)};
  candidates[1].locale = "en";
  EXPECT_EQ(PlacementDirector().Place(BaseRequest(), candidates).instance_id, "b");
  EXPECT_EQ(PlacementDirector(weights).Place(BaseRequest(), candidates).instance_id, "a");
}

}  // namespace
}  // namespace telos::placement
