#include "telos/placement/roster_index.h"

#include <vector>

#include <gtest/gtest.h>

#include "test_candidates.h"

namespace telos::placement {
namespace {

using testing::AddPlayers;
using testing::MatchingCandidate;

std::vector<uint32_t> Positions(const RosterIndex& roster, PlayerId player) {
  const std::span<const uint32_t> positions = roster.PositionsOf(player);
  return {positions.begin(), positions.end()};
}

TEST(RosterIndexTest, EmptyIndexKnowsNobodyAndMatchesOnlyNoCandidates) {
  const RosterIndex roster;
  EXPECT_TRUE(roster.PositionsOf(7).empty());
  EXPECT_EQ(roster.candidate_count(), 0u);
  EXPECT_EQ(roster.player_count(), 0u);
  EXPECT_TRUE(roster.Matches({}));
  const std::vector<Candidate> one = {MatchingCandidate("a")};
  EXPECT_FALSE(roster.Matches(one));
}

TEST(RosterIndexTest, CandidatesWithoutPlayersIndexNobody) {
  const std::vector<Candidate> candidates = {MatchingCandidate("a", 50), MatchingCandidate("b")};
  const RosterIndex roster(candidates);
  EXPECT_EQ(roster.candidate_count(), 2u);
  EXPECT_EQ(roster.player_count(), 0u);
  EXPECT_TRUE(roster.PositionsOf(0).empty());
  EXPECT_TRUE(roster.Matches(candidates));
}

TEST(RosterIndexTest, FindsEachPlayersCandidate) {
  std::vector<Candidate> candidates = {MatchingCandidate("a"), MatchingCandidate("b"),
                                       MatchingCandidate("c")};
  AddPlayers(candidates[0], {10, 11, 12});
  AddPlayers(candidates[2], {20, 0});  // zero is an id like any other
  const RosterIndex roster(candidates);
  EXPECT_EQ(roster.player_count(), 5u);
  EXPECT_EQ(Positions(roster, 11), std::vector<uint32_t>{0});
  EXPECT_EQ(Positions(roster, 20), std::vector<uint32_t>{2});
  EXPECT_EQ(Positions(roster, 0), std::vector<uint32_t>{2});
  EXPECT_TRUE(roster.PositionsOf(13).empty());
}

TEST(RosterIndexTest, PlayerListedOnSeveralCandidatesHasEveryPositionAscending) {
  // An instance report can lag a handoff, so one player may be listed twice for a moment; the
  // plain path counts them on both and so must the index.
  std::vector<Candidate> candidates = {MatchingCandidate("a"), MatchingCandidate("b"),
                                       MatchingCandidate("c"), MatchingCandidate("d")};
  AddPlayers(candidates[0], {5, 6});
  AddPlayers(candidates[1], {6});
  AddPlayers(candidates[3], {5, 6, 7});
  const RosterIndex roster(candidates);
  EXPECT_EQ(roster.player_count(), 3u);
  EXPECT_EQ(Positions(roster, 5), (std::vector<uint32_t>{0, 3}));
  EXPECT_EQ(Positions(roster, 6), (std::vector<uint32_t>{0, 1, 3}));
  EXPECT_EQ(Positions(roster, 7), std::vector<uint32_t>{3});
}

TEST(RosterIndexTest, APlayerListedTwiceInOneCandidateCountsOnce) {
  std::vector<Candidate> candidates = {MatchingCandidate("a")};
  candidates[0].players = {4, 4, 9};  // against the REQUIRES, but adjacent when sorted
  const RosterIndex roster(candidates);
  EXPECT_EQ(Positions(roster, 4), std::vector<uint32_t>{0});
  EXPECT_EQ(roster.player_count(), 2u);
}

TEST(RosterIndexTest, ManyPlayersWithCollidingIdsAreAllFound) {
  // Ids that differ only in high bits, and runs of sequential ids, probe past each other.
  std::vector<Candidate> candidates = {MatchingCandidate("a"), MatchingCandidate("b")};
  std::vector<PlayerId> high;
  std::vector<PlayerId> sequential;
  for (PlayerId k = 0; k < 500; ++k) {
    high.push_back(k << 40);
    sequential.push_back(1'000'000 + k);
  }
  candidates[0].players = high;
  candidates[1].players = sequential;
  const RosterIndex roster(candidates);
  EXPECT_EQ(roster.player_count(), 1'000u);
  for (PlayerId k = 0; k < 500; ++k) {
    EXPECT_EQ(Positions(roster, k << 40), std::vector<uint32_t>{0}) << k;
    EXPECT_EQ(Positions(roster, 1'000'000 + k), std::vector<uint32_t>{1}) << k;
  }
  EXPECT_TRUE(roster.PositionsOf(1'000'500).empty());
  EXPECT_TRUE(roster.PositionsOf(PlayerId{500} << 40).empty());
}

TEST(RosterIndexTest, MatchesNoticesAJoinALeaveAndACandidateMore) {
  std::vector<Candidate> candidates = {MatchingCandidate("a"), MatchingCandidate("b")};
  AddPlayers(candidates[0], {1, 2});
  const RosterIndex roster(candidates);
  EXPECT_TRUE(roster.Matches(candidates));

  std::vector<Candidate> joined = candidates;
  AddPlayers(joined[1], {3});
  EXPECT_FALSE(roster.Matches(joined));

  std::vector<Candidate> left = candidates;
  left[0].players.pop_back();
  EXPECT_FALSE(roster.Matches(left));

  std::vector<Candidate> more = candidates;
  more.push_back(MatchingCandidate("c"));
  EXPECT_FALSE(roster.Matches(more));

  // Fields the director reads on every call need no rebuild.
  std::vector<Candidate> counted = candidates;
  counted[1].player_count = 90;
  counted[1].state = InstanceState::kDraining;
  EXPECT_TRUE(roster.Matches(counted));
}

}  // namespace
}  // namespace telos::placement
