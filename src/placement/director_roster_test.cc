// The indexed path (Place with a RosterIndex) against the plain path: every decision, verdict
// and term must be identical. The randomized test runs many seeds; a failure prints its seed,
// and setting TELOS_PLACEMENT_SEED=<seed> replays exactly that case.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "telos/base/limits.h"
#include "telos/base/random.h"
#include "telos/placement/director.h"
#include "telos/placement/roster_index.h"
#include "test_candidates.h"

namespace telos::placement {
namespace {

using testing::AddPlayers;
using testing::BaseRequest;
using testing::MatchingCandidate;

constexpr uint64_t kRandomCases = 400;

// Compares every field, so that a difference names the candidate and the field.
void ExpectSameDecision(const PlacementDecision& plain, const PlacementDecision& indexed) {
  EXPECT_EQ(plain.outcome, indexed.outcome);
  EXPECT_EQ(plain.winner, indexed.winner);
  EXPECT_EQ(plain.instance_id, indexed.instance_id);
  EXPECT_EQ(plain.endpoint, indexed.endpoint);
  EXPECT_EQ(plain.score, indexed.score);
  ASSERT_EQ(plain.verdicts.size(), indexed.verdicts.size());
  for (size_t i = 0; i < plain.verdicts.size(); ++i) {
    EXPECT_EQ(plain.verdicts[i].excluded_by, indexed.verdicts[i].excluded_by) << "candidate " << i;
    EXPECT_EQ(plain.verdicts[i].score, indexed.verdicts[i].score) << "candidate " << i;
    EXPECT_EQ(plain.verdicts[i].terms, indexed.verdicts[i].terms) << "candidate " << i;
  }
}

// Places through both paths, checks they agree and returns the decision.
PlacementDecision PlaceBoth(const PlacementDirector& director, const PlacementRequest& request,
                            const std::vector<Candidate>& candidates) {
  const RosterIndex roster(candidates);
  const PlacementDecision plain = director.Place(request, candidates);
  const PlacementDecision indexed = director.Place(request, candidates, roster);
  ExpectSameDecision(plain, indexed);
  return indexed;
}

TEST(DirectorRosterTest, PartyPullIsTheSameThroughTheIndex) {
  PlacementRequest request = BaseRequest();
  request.party = {20};
  request.guild = {30, 31, 32, 33, 34};
  request.friends = {40, 41, 42, 43, 44};
  Candidate everything = MatchingCandidate("everything", 0);
  AddPlayers(everything, {30, 31, 32, 33, 34, 40, 41, 42, 43, 44});
  everything.player_count = 60;
  everything.locale = "en";
  Candidate party = MatchingCandidate("party", 95);
  AddPlayers(party, {20});
  party.age_ms = kDefaultAgeMaxMs + 1;
  const PlacementDecision d =
      PlaceBoth(PlacementDirector(), request, std::vector<Candidate>{everything, party});
  EXPECT_EQ(d.verdicts[0].score, 2'000 + 1'000 + 300 + 250);
  EXPECT_EQ(d.verdicts[1].score, 10'000 - 100 - 15 * 40);
  EXPECT_EQ(d.instance_id, "party");
}

TEST(DirectorRosterTest, SocialPlayersOnFilteredCandidatesScoreNothing) {
  PlacementRequest request = BaseRequest();
  request.party = {20};
  request.guild = {30, 31};
  std::vector<Candidate> candidates = {MatchingCandidate("a"), MatchingCandidate("b"),
                                       MatchingCandidate("c")};
  AddPlayers(candidates[0], {20, 30});
  candidates[0].content = "c6";
  AddPlayers(candidates[1], {31});
  AddPlayers(candidates[2], {20});
  candidates[2].state = InstanceState::kDraining;
  const PlacementDecision d = PlaceBoth(PlacementDirector(), request, candidates);
  EXPECT_EQ(d.verdicts[0].excluded_by, Filter::kContent);
  EXPECT_EQ(d.verdicts[0].terms, TermPoints{});
  EXPECT_EQ(d.verdicts[2].excluded_by, Filter::kNotReady);
  EXPECT_EQ(d.instance_id, "b");
  EXPECT_EQ(d.score, 400);
}

TEST(DirectorRosterTest, APlayerOnSeveralListsAndSeveralInstancesCountsEverywhere) {
  PlacementRequest request = BaseRequest();
  request.party = {20, testing::kAsker};  // the requester never counts
  request.guild = {20, 20, 21};           // duplicates count once
  request.friends = {21};
  std::vector<Candidate> candidates = {MatchingCandidate("a"), MatchingCandidate("b")};
  AddPlayers(candidates[0], {20, 21, testing::kAsker});
  AddPlayers(candidates[1], {21});  // listed on both during a handoff
  const PlacementDecision d = PlaceBoth(PlacementDirector(), request, candidates);
  EXPECT_EQ(d.verdicts[0].score, 10'000 + 2 * 400 + 200);
  EXPECT_EQ(d.verdicts[1].score, 400 + 200);
}

TEST(DirectorRosterTest, AStaleIndexOfAnotherShapeIsIgnored) {
  PlacementRequest request = BaseRequest();
  request.party = {20};
  std::vector<Candidate> candidates = {MatchingCandidate("a", 10), MatchingCandidate("b", 10)};
  AddPlayers(candidates[0], {20, 21});
  const RosterIndex roster(candidates);
  // The party member moves from a to b, and the owner forgets to rebuild the index.
  candidates[0].players = {21};
  AddPlayers(candidates[1], {20});
  ASSERT_FALSE(roster.Matches(candidates));
  const PlacementDirector director;
  const PlacementDecision d = director.Place(request, candidates, roster);
  ExpectSameDecision(director.Place(request, candidates), d);
  EXPECT_EQ(d.instance_id, "b");
  // A candidate more or fewer is caught the same way.
  candidates.push_back(MatchingCandidate("c"));
  ExpectSameDecision(director.Place(request, candidates),
                     director.Place(request, candidates, roster));
}

// A stale index that keeps the shape cannot be noticed cheaply; debug builds check every
// indexed count against the plain path and stop.
TEST(DirectorRosterDeathTest, AStaleIndexOfTheSameShapeStopsADebugBuild) {
  PlacementRequest request = BaseRequest();
  request.party = {20};
  std::vector<Candidate> candidates = {MatchingCandidate("a"), MatchingCandidate("b")};
  AddPlayers(candidates[0], {20});
  AddPlayers(candidates[1], {21});
  const RosterIndex roster(candidates);
  std::swap(candidates[0].players, candidates[1].players);  // 20 and 21 swapped instances
  ASSERT_TRUE(roster.Matches(candidates));
  EXPECT_DEBUG_DEATH((void)PlacementDirector().Place(request, candidates, roster),
                     "roster index is stale");
}

TEST(DirectorRosterTest, ReusingTheDecisionThroughTheIndex) {
  const PlacementDirector director;
  PlacementRequest request = BaseRequest();
  request.friends = {40};
  std::vector<Candidate> three = {MatchingCandidate("a"), MatchingCandidate("b"),
                                  MatchingCandidate("c")};
  AddPlayers(three[2], {40});
  PlacementDecision d;
  director.Place(request, three, RosterIndex(three), d);
  EXPECT_EQ(d.instance_id, "c");
  std::vector<Candidate> full = {MatchingCandidate("z", testing::kTestHardCap)};
  director.Place(request, full, RosterIndex(full), d);
  EXPECT_FALSE(d.placed());
  ASSERT_EQ(d.verdicts.size(), 1u);
  EXPECT_EQ(d.verdicts[0].excluded_by, Filter::kFull);
}

// ---- Randomized equivalence.

std::vector<uint64_t> Seeds() {
  if (const char* env = std::getenv("TELOS_PLACEMENT_SEED"); env != nullptr && *env != '\0') {
    return {std::strtoull(env, nullptr, 10)};
  }
  std::vector<uint64_t> seeds;
  for (uint64_t seed = 1; seed <= kRandomCases; ++seed) seeds.push_back(seed);
  return seeds;
}

template <typename T>
const T& PickOne(Random& random, const std::vector<T>& from) {
  return from[static_cast<size_t>(random.Uniform(0, static_cast<int64_t>(from.size()) - 1))];
}

struct RandomMap {
  Weights weights;
  PlacementRequest request;
  std::vector<Candidate> candidates;
};

// Weights with random caps and points, the party term kept above the rest as validation needs.
Weights RandomWeights(Random& random) {
  if (random.Chance(0.5)) return Weights{};
  Weights w;
  w.guild_points_per_member = random.Uniform(0, 1'000);
  w.guild_members_max = random.Uniform(1, 10);
  w.friend_points_per_friend = random.Uniform(0, 1'000);
  w.friends_max = random.Uniform(1, 10);
  w.locale_points = random.Uniform(0, 1'000);
  w.fill_points = random.Uniform(0, 1'000);
  w.overfull_points_per_pct = -random.Uniform(0, 100);
  w.antiflap_points = -random.Uniform(0, 10'000);
  w.party_points = MaxNonPartyPoints(w) + random.Uniform(1, 5'000);
  return ValidateWeights(w).ok() ? w : Weights{};
}

// A map built to make the social terms collide: a small pool of players, dealt to instances
// with overlaps (some players listed on two instances), named on several social lists at once,
// the requester among them, and candidates failing every kind of filter.
RandomMap MakeRandomMap(uint64_t seed) {
  Random random(seed);
  RandomMap map;
  map.weights = RandomWeights(random);

  std::vector<PlayerId> pool = {testing::kAsker, 0};
  const int64_t pool_size = random.Uniform(1, 300);
  for (int64_t k = 0; k < pool_size; ++k) {
    pool.push_back(random.Chance(0.5) ? static_cast<PlayerId>(random.Uniform(2, 500))
                                      : random.Next());
  }

  const std::vector<std::string> locales = {"en", "de", "fr", ""};
  const int64_t count = random.Chance(0.05) ? static_cast<int64_t>(limits::kInstancesPerMapMax)
                                            : random.Uniform(0, 40);
  for (int64_t i = 0; i < count; ++i) {
    // A few ids repeat, so that ties reach the last rule.
    Candidate c = MatchingCandidate("i" + std::to_string(random.Uniform(0, count + 3)));
    if (random.Chance(0.05)) c.map = "town";
    if (random.Chance(0.05)) c.region = "ap-south";
    if (random.Chance(0.05)) c.build = "b99";
    if (random.Chance(0.05)) c.content = "c6";
    if (random.Chance(0.1)) {
      c.state = static_cast<InstanceState>(random.Uniform(0, 3));
    }
    c.locale = PickOne(random, locales);
    c.soft_cap = static_cast<int32_t>(random.Uniform(1, 150));
    c.hard_cap = c.soft_cap + static_cast<int32_t>(random.Uniform(0, 50));
    c.player_count = static_cast<int32_t>(random.Uniform(0, c.hard_cap));
    c.age_ms = random.Uniform(0, 2 * kDefaultAgeMaxMs);
    if (random.Chance(0.1)) {
      for (int64_t k = random.Uniform(0, 5); k > 0; --k)
        c.access_list.push_back(PickOne(random, pool));
      if (random.Chance(0.5)) c.access_list.push_back(testing::kAsker);
      std::sort(c.access_list.begin(), c.access_list.end());
      c.access_list.erase(std::unique(c.access_list.begin(), c.access_list.end()),
                          c.access_list.end());
    }
    const int64_t listed = random.Uniform(0, 60);
    for (int64_t k = 0; k < listed; ++k) c.players.push_back(PickOne(random, pool));
    std::sort(c.players.begin(), c.players.end());
    c.players.erase(std::unique(c.players.begin(), c.players.end()), c.players.end());
    map.candidates.push_back(std::move(c));
  }

  map.request = BaseRequest();
  map.request.locale = PickOne(random, locales);
  auto names = [&](int64_t most) {
    std::vector<PlayerId> ids;
    for (int64_t k = random.Uniform(0, most); k > 0; --k) ids.push_back(PickOne(random, pool));
    return ids;
  };
  map.request.party = names(5);
  map.request.guild = names(20);
  map.request.friends = names(15);
  if (!map.candidates.empty() && random.Chance(0.3)) {
    map.request.moved_off = PickOne(random, map.candidates).instance_id;
  }
  return map;
}

TEST(DirectorRosterTest, IndexedAndPlainPathsDecideAlikeOverManySeeds) {
  int64_t social_points_seen = 0;
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(::testing::Message()
                 << "seed " << seed << " (replay with TELOS_PLACEMENT_SEED=" << seed << ")");
    const RandomMap map = MakeRandomMap(seed);
    const PlacementDirector director(map.weights);
    const RosterIndex roster(map.candidates);
    ASSERT_TRUE(roster.Matches(map.candidates));
    const PlacementDecision plain = director.Place(map.request, map.candidates);
    const PlacementDecision indexed = director.Place(map.request, map.candidates, roster);
    ExpectSameDecision(plain, indexed);
    // The storage-reusing overload, over a decision left from another map.
    PlacementDecision reused =
        director.Place(BaseRequest(), std::vector<Candidate>{MatchingCandidate("old")});
    director.Place(map.request, map.candidates, roster, reused);
    ExpectSameDecision(plain, reused);
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "first failing seed " << seed;
      return;
    }
    for (const Verdict& v : plain.verdicts) {
      social_points_seen += (v.terms[static_cast<size_t>(Term::kParty)] != 0) +
                            (v.terms[static_cast<size_t>(Term::kGuild)] != 0) +
                            (v.terms[static_cast<size_t>(Term::kFriends)] != 0);
    }
  }
  // The generator must actually exercise the social terms, or the comparison proves little.
  if (Seeds().size() == kRandomCases) {
    EXPECT_GT(social_points_seen, 500);
  }
}

}  // namespace
}  // namespace telos::placement
