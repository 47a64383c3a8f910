#include "telos/placement/explain.h"

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "telos/placement/director.h"
#include "test_candidates.h"

namespace telos::placement {
namespace {

using testing::AddPlayers;
using testing::BaseRequest;
using testing::MatchingCandidate;

// The known case: a guild instance wins; the instance the player was just moved off is scored
// but penalised; one runs another content catalog and one is still starting.
struct KnownCase {
  PlacementRequest request;
  std::vector<Candidate> candidates;

  KnownCase() {
    request = BaseRequest();
    request.player = 7;
    request.guild = {30, 31, 32, 33, 34, 35};
    request.moved_off = "inst-b";

    Candidate a = MatchingCandidate("inst-a");
    a.endpoint = "10.0.0.4:7777";
    a.locale = "en";
    AddPlayers(a, {30, 31, 32, 33, 34, 35});
    a.player_count = 50;
    Candidate b = MatchingCandidate("inst-b", 10);
    Candidate c = MatchingCandidate("inst-c", 70);
    c.content = "c8";
    Candidate d = MatchingCandidate("inst-d");
    d.state = InstanceState::kStarting;
    // Offered out of order: the explanation orders them itself.
    candidates = {c, b, d, a};
  }
};

TEST(ExplainTest, TextForAKnownCase) {
  const KnownCase known;
  const PlacementDecision d = PlacementDirector().Place(known.request, known.candidates);
  const Explanation e = Explain(known.request, known.candidates, d);
  EXPECT_EQ(e.ToText(),
            "player 7 placed on inst-a at 10.0.0.4:7777, score 2550\n"
            "  inst-a scored 2550: guild +2000, locale +300, fill +250\n"
            "  inst-b scored -5000: antiflap -5000\n"
            "  inst-c excluded by content: instance content 'c8', player's 'c7'\n"
            "  inst-d excluded by not_ready: instance is starting\n");
}

TEST(ExplainTest, JsonForAKnownCase) {
  const KnownCase known;
  const PlacementDecision d = PlacementDirector().Place(known.request, known.candidates);
  const std::string json = Explain(known.request, known.candidates, d).ToJson();
  EXPECT_EQ(json,
            R"({"player":7,"map":"arena","outcome":"placed","instance":"inst-a",)"
            R"("endpoint":"10.0.0.4:7777","score":2550,"candidates":[)"
            R"({"instance":"inst-a","verdict":"scored","score":2550,)"
            R"("terms":{"guild":2000,"locale":300,"fill":250},)"
            R"("players":50,"soft_cap":100,"hard_cap":120},)"
            R"({"instance":"inst-b","verdict":"scored","score":-5000,"terms":{"antiflap":-5000},)"
            R"("players":10,"soft_cap":100,"hard_cap":120},)"
            R"({"instance":"inst-c","verdict":"excluded","filter":"content",)"
            R"("detail":"instance content 'c8', player's 'c7'",)"
            R"("players":70,"soft_cap":100,"hard_cap":120},)"
            R"({"instance":"inst-d","verdict":"excluded","filter":"not_ready",)"
            R"("detail":"instance is starting","players":0,"soft_cap":100,"hard_cap":120}]})");
  // And it is JSON a tool can read back.
  const boost::json::value parsed = boost::json::parse(json);
  EXPECT_EQ(parsed.at("candidates").as_array().size(), 4u);
}

TEST(ExplainTest, ARefusalSaysWhyEachCandidateWasExcluded) {
  PlacementRequest request = BaseRequest();
  request.player = 9;
  std::vector<Candidate> candidates = {MatchingCandidate("full", testing::kTestHardCap),
                                       MatchingCandidate("private")};
  candidates[1].access_list = {2, 3};
  const PlacementDecision d = PlacementDirector().Place(request, candidates);
  const Explanation e = Explain(request, candidates, d);
  EXPECT_EQ(e.ToText(),
            "player 9 refused on map arena: no instance passed the filters (2 candidates)\n"
            "  full excluded by full: 120 players at hard cap 120\n"
            "  private excluded by access: player 9 not on access list\n");
  const boost::json::value parsed = boost::json::parse(e.ToJson());
  EXPECT_EQ(parsed.at("outcome").as_string(), "refused");
  EXPECT_FALSE(parsed.as_object().contains("instance"));
}

TEST(ExplainTest, ScoredCandidatesAreListedBestFirst) {
  std::vector<Candidate> candidates = {MatchingCandidate("low", 10), MatchingCandidate("mid", 90),
                                       MatchingCandidate("top", 50)};
  const PlacementDecision d = PlacementDirector().Place(BaseRequest(), candidates);
  const Explanation e = Explain(BaseRequest(), candidates, d);
  ASSERT_EQ(e.candidates.size(), 3u);
  EXPECT_EQ(e.candidates[0].instance_id, "top");
  EXPECT_EQ(e.candidates[1].instance_id, "low");  // 0 beats mid's overfull -400
  EXPECT_EQ(e.candidates[2].instance_id, "mid");
  EXPECT_NE(e.ToText().find("  low scored 0: no terms\n"), std::string::npos) << e.ToText();
}

TEST(ExplainTest, JsonOfHostileIdsParsesBackRepaired) {
  const std::string fffd = "\xEF\xBF\xBD";
  Explanation e;
  e.player = 7;
  e.map = "arena\"\xFF";
  e.outcome = Outcome::kPlaced;
  e.instance_id = "i\\1\x01";
  e.endpoint = "host:1\xE2\x82";
  CandidateAccount excluded;
  excluded.instance_id = "x\xC0\xAF";
  excluded.excluded_by = Filter::kMap;
  excluded.detail = "why \"not\"\n";
  e.candidates.push_back(excluded);
  boost::system::error_code ec;
  const boost::json::value parsed = boost::json::parse(e.ToJson(), ec);
  ASSERT_FALSE(ec) << e.ToJson();
  EXPECT_EQ(parsed.at("map").as_string(), "arena\"" + fffd);
  EXPECT_EQ(parsed.at("instance").as_string(), "i\\1\x01");
  EXPECT_EQ(parsed.at("endpoint").as_string(), "host:1" + fffd);
  EXPECT_EQ(parsed.at("candidates").at(0).at("instance").as_string(), "x" + fffd + fffd);
  EXPECT_EQ(parsed.at("candidates").at(0).at("detail").as_string(), "why \"not\"\n");
}

}  // namespace
}  // namespace telos::placement
