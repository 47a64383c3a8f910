#include "score.h"

#include <gtest/gtest.h>

#include "test_candidates.h"

namespace telos::placement {
namespace {

using testing::AddPlayers;
using testing::BaseRequest;
using testing::MatchingCandidate;

int64_t Points(const TermPoints& terms, Term term) {
  return terms[static_cast<size_t>(term)];
}

TermPoints Score(const PlacementRequest& request, const Candidate& candidate,
                 const Weights& weights = {}) {
  const SocialSets social(request);
  return ScoreTerms(weights, request, social, candidate);
}

TEST(ScoreTest, NoTermAppliesToAnEmptyYoungForeignInstance) {
  const TermPoints terms = Score(BaseRequest(), MatchingCandidate("a"));
  EXPECT_EQ(SumPoints(terms), 0);
}

TEST(ScoreTest, PartyAloneCountsOnceHoweverManyMembersArePresent) {
  PlacementRequest request = BaseRequest();
  request.party = {20, 21, 22};
  Candidate c = MatchingCandidate("a");
  AddPlayers(c, {21});
  EXPECT_EQ(Points(Score(request, c), Term::kParty), 10'000);
  AddPlayers(c, {20, 22});
  const TermPoints terms = Score(request, c);
  EXPECT_EQ(Points(terms, Term::kParty), 10'000);
  EXPECT_EQ(SumPoints(terms), 10'000);
}

TEST(ScoreTest, GuildAlonePerMemberCappedAtFive) {
  PlacementRequest request = BaseRequest();
  request.guild = {30, 31, 32, 33, 34, 35, 36, 37};
  Candidate c = MatchingCandidate("a");
  AddPlayers(c, {30, 31});
  EXPECT_EQ(Points(Score(request, c), Term::kGuild), 800);
  AddPlayers(c, {32, 33, 34, 35, 36, 37});
  EXPECT_EQ(Points(Score(request, c), Term::kGuild), 2'000);
  EXPECT_EQ(SumPoints(Score(request, c)), 2'000);
}

TEST(ScoreTest, FriendsAlonePerFriendCappedAtFive) {
  PlacementRequest request = BaseRequest();
  request.friends = {40, 41, 42, 43, 44, 45, 46};
  Candidate c = MatchingCandidate("a");
  AddPlayers(c, {46});
  EXPECT_EQ(Points(Score(request, c), Term::kFriends), 200);
  AddPlayers(c, {40, 41, 42, 43, 44, 45});
  EXPECT_EQ(Points(Score(request, c), Term::kFriends), 1'000);
}

TEST(ScoreTest, TheRequesterIsNotTheirOwnFriend) {
  PlacementRequest request = BaseRequest();
  request.friends = {testing::kAsker};
  request.party = {testing::kAsker};
  Candidate c = MatchingCandidate("a");
  AddPlayers(c, {testing::kAsker});
  EXPECT_EQ(SumPoints(Score(request, c)), 0);
}

TEST(ScoreTest, LocaleAlone) {
  Candidate c = MatchingCandidate("a");
  c.locale = "en";
  const TermPoints terms = Score(BaseRequest(), c);
  EXPECT_EQ(Points(terms, Term::kLocale), 300);
  EXPECT_EQ(SumPoints(terms), 300);
  PlacementRequest no_locale = BaseRequest();
  no_locale.locale.clear();
  c.locale.clear();
  EXPECT_EQ(Points(Score(no_locale, c), Term::kLocale), 0);
}

TEST(ScoreTest, FillAloneInsideTheBandEdgesIncluded) {
  for (int32_t players : {40, 60, 80}) {
    const TermPoints terms = Score(BaseRequest(), MatchingCandidate("a", players));
    EXPECT_EQ(Points(terms, Term::kFill), 250) << players;
    EXPECT_EQ(SumPoints(terms), 250) << players;
  }
  for (int32_t players : {0, 39}) {
    EXPECT_EQ(SumPoints(Score(BaseRequest(), MatchingCandidate("a", players))), 0) << players;
  }
}

TEST(ScoreTest, FillBandIsRelativeToTheSoftCap) {
  Candidate c = MatchingCandidate("a", 20);
  c.soft_cap = 50;
  c.hard_cap = 60;
  EXPECT_EQ(Points(Score(BaseRequest(), c), Term::kFill), 250);  // 40 %
  c.player_count = 19;                                           // 38 %
  EXPECT_EQ(Points(Score(BaseRequest(), c), Term::kFill), 0);
}

TEST(ScoreTest, OverfullAloneFortyPerWholePointAboveEighty) {
  EXPECT_EQ(SumPoints(Score(BaseRequest(), MatchingCandidate("a", 81))), -40);
  EXPECT_EQ(SumPoints(Score(BaseRequest(), MatchingCandidate("a", 100))), -800);
  EXPECT_EQ(SumPoints(Score(BaseRequest(), MatchingCandidate("a", 119))), -1'560);
  Candidate c = MatchingCandidate("a", 41);  // 82 % of 50, and 1.x points do not round up
  c.soft_cap = 50;
  c.hard_cap = 60;
  EXPECT_EQ(Points(Score(BaseRequest(), c), Term::kOverfull), -80);
}

TEST(ScoreTest, AgeAlonePastTheMaximum) {
  Candidate c = MatchingCandidate("a");
  c.age_ms = kDefaultAgeMaxMs;
  EXPECT_EQ(Points(Score(BaseRequest(), c), Term::kAge), 0);
  c.age_ms = kDefaultAgeMaxMs + 1;
  const TermPoints terms = Score(BaseRequest(), c);
  EXPECT_EQ(Points(terms, Term::kAge), -100);
  EXPECT_EQ(SumPoints(terms), -100);
}

TEST(ScoreTest, AntiflapAloneForTheInstanceJustLeft) {
  PlacementRequest request = BaseRequest();
  request.moved_off = "a";
  EXPECT_EQ(SumPoints(Score(request, MatchingCandidate("a"))), -5'000);
  EXPECT_EQ(SumPoints(Score(request, MatchingCandidate("b"))), 0);
}

TEST(ScoreTest, TermsCombineAsASum) {
  PlacementRequest request = BaseRequest();
  request.guild = {30, 31};
  request.friends = {40};
  request.moved_off = "a";
  Candidate c = MatchingCandidate("a", 50);
  c.locale = "en";
  c.age_ms = kDefaultAgeMaxMs + 1;
  AddPlayers(c, {30, 31, 40});
  const TermPoints terms = Score(request, c);
  EXPECT_EQ(Points(terms, Term::kGuild), 800);
  EXPECT_EQ(Points(terms, Term::kFriends), 200);
  EXPECT_EQ(Points(terms, Term::kLocale), 300);
  EXPECT_EQ(Points(terms, Term::kFill), 250);
  EXPECT_EQ(Points(terms, Term::kAge), -100);
  EXPECT_EQ(Points(terms, Term::kAntiflap), -5'000);
  EXPECT_EQ(SumPoints(terms), 800 + 200 + 300 + 250 - 100 - 5'000);
}

TEST(ScoreTest, CustomWeightsApply) {
  Weights weights;
  weights.locale_points = 50;
  Candidate c = MatchingCandidate("a");
  c.locale = "en";
  EXPECT_EQ(SumPoints(Score(BaseRequest(), c, weights)), 50);
}

TEST(SortedContainsTest, FindsEveryMemberAndNothingElse) {
  std::vector<PlayerId> present;
  for (PlayerId id = 2; id < 200; id += 2) present.push_back(id);
  for (size_t size = 0; size <= present.size(); ++size) {
    const std::span<const PlayerId> prefix(present.data(), size);
    for (PlayerId id = 0; id < 202; ++id) {
      const bool expected = id % 2 == 0 && id >= 2 && id < 2 + 2 * size;
      ASSERT_EQ(SortedContains(prefix, id), expected) << "size " << size << " id " << id;
    }
  }
}

TEST(SocialSetsTest, OnePerPlayerTaggedWithEveryListAndWithoutTheRequester) {
  PlacementRequest request = BaseRequest();
  request.party = {9, 3};
  request.guild = {3, testing::kAsker, 7, 7};
  request.friends = {9};
  const SocialSets social(request);
  ASSERT_EQ(social.members().size(), 3u);
  EXPECT_EQ(social.members()[0].id, 3u);
  EXPECT_EQ(social.members()[0].lists, SocialSets::kParty | SocialSets::kGuild);
  EXPECT_EQ(social.members()[1].id, 7u);
  EXPECT_EQ(social.members()[1].lists, SocialSets::kGuild);
  EXPECT_EQ(social.members()[2].id, 9u);
  EXPECT_EQ(social.members()[2].lists, SocialSets::kParty | SocialSets::kFriend);
}

TEST(ScoreTest, APlayerOnSeveralListsCountsForEach) {
  PlacementRequest request = BaseRequest();
  request.party = {20};
  request.guild = {20};
  request.friends = {20};
  Candidate c = MatchingCandidate("a");
  AddPlayers(c, {20});
  EXPECT_EQ(SumPoints(Score(request, c)), 10'000 + 400 + 200);
}

}  // namespace
}  // namespace telos::placement
