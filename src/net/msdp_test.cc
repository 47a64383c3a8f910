#include "telos/net/msdp.h"

#include <gtest/gtest.h>

#include "telos/base/limits.h"

namespace telos::net {
namespace {

// MSDP bytes written readably: ^ = VAR, = = VAL, { } = table, [ ] = array.
std::string M(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '^': out.push_back(char(msdp::kVar)); break;
      case '=': out.push_back(char(msdp::kVal)); break;
      case '{': out.push_back(char(msdp::kTableOpen)); break;
      case '}': out.push_back(char(msdp::kTableClose)); break;
      case '[': out.push_back(char(msdp::kArrayOpen)); break;
      case ']': out.push_back(char(msdp::kArrayClose)); break;
      default: out.push_back(c); break;
    }
  }
  return out;
}

MsdpValue S(std::string text) {
  return MsdpValue::String(std::move(text));
}

TEST(MsdpCodecTest, DecodesStringsArraysAndTables) {
  const auto vars = DecodeMsdp(M("^hp=30^room={^name=hall^exits={^n=a:1}}^list=[=a=b]"));
  ASSERT_TRUE(vars);
  ASSERT_EQ(vars->size(), 3u);
  EXPECT_EQ((*vars)[0], (MsdpVariable{"hp", S("30")}));
  EXPECT_EQ((*vars)[1].value, MsdpValue::Table({{"name", S("hall")},
                                                {"exits", MsdpValue::Table({{"n", S("a:1")}})}}));
  EXPECT_EQ((*vars)[2].value, MsdpValue::Array({S("a"), S("b")}));
}

TEST(MsdpCodecTest, SeveralValuesAreAnArrayAndNoValueIsEmpty) {
  const auto vars = DecodeMsdp(M("^REPORT=HEALTH=MANA^x"));
  ASSERT_TRUE(vars);
  EXPECT_EQ((*vars)[0].value, MsdpValue::Array({S("HEALTH"), S("MANA")}));
  EXPECT_EQ((*vars)[1], (MsdpVariable{"x", S("")}));
}

TEST(MsdpCodecTest, RejectsWhatDoesNotParse) {
  EXPECT_FALSE(DecodeMsdp("junk"));
  EXPECT_FALSE(DecodeMsdp(M("^a={^b=c")));  // table never closed
  EXPECT_FALSE(DecodeMsdp(M("^a=[=b=c")));  // array never closed
  EXPECT_FALSE(DecodeMsdp(M("^a=[^b]")));   // a name inside an array
  EXPECT_FALSE(DecodeMsdp(M("^a=b}")));     // a close with nothing open
  EXPECT_FALSE(DecodeMsdp(M("^a={=b}")));   // a value without a name in a table
  EXPECT_TRUE(DecodeMsdp(""));
}

TEST(MsdpCodecTest, DepthAndSizeAreBounded) {
  std::string deep = "^a=";
  for (size_t i = 0; i <= limits::kMsdpDepthMax; ++i) deep += "[=";
  EXPECT_FALSE(DecodeMsdp(M(deep)));
  std::string ok = "^a=";
  for (size_t i = 0; i < limits::kMsdpDepthMax; ++i) ok += "[=";
  for (size_t i = 0; i < limits::kMsdpDepthMax; ++i) ok += "]";
  EXPECT_TRUE(DecodeMsdp(M(ok)));
  std::string wide = "^a=[";
  for (size_t i = 0; i < limits::kMsdpItemsMax; ++i) wide += "=x";
  EXPECT_FALSE(DecodeMsdp(M(wide + "]")));
}

TEST(MsdpCodecTest, EncodeRoundTripsAndDropsMarkersFromStrings) {
  const std::vector<MsdpVariable> vars{
      {"ROOM", MsdpValue::Table({{"NAME", S("hall")}, {"EXITS", MsdpValue::Table({})}})},
      {"LIST", MsdpValue::Array({S("a"), S("b")})}};
  EXPECT_EQ(EncodeMsdp(vars), M("^ROOM={^NAME=hall^EXITS={}}^LIST=[=a=b]"));
  EXPECT_EQ(DecodeMsdp(EncodeMsdp(vars)), vars);
  EXPECT_EQ(EncodeMsdp({{"x", S(M("a{b"))}}), M("^x=ab"));
}

class MsdpAgentTest : public ::testing::Test {
 protected:
  std::string Ask(std::string_view readable) {
    const auto message = DecodeMsdp(M(readable));
    EXPECT_TRUE(message);
    return agent_.OnMessage(*message);
  }
  MsdpAgent agent_;
};

TEST_F(MsdpAgentTest, Lists) {
  EXPECT_EQ(Ask("^LIST=COMMANDS"), M("^COMMANDS=[=LIST=REPORT=RESET=SEND=UNREPORT]"));
  EXPECT_EQ(Ask("^LIST=CONFIGURABLE_VARIABLES"),
            M("^CONFIGURABLE_VARIABLES=[=CLIENT_NAME=CLIENT_VERSION]"));
  EXPECT_NE(Ask("^LIST=REPORTABLE_VARIABLES").find(M("=HEALTH_MAX=")), std::string::npos);
  EXPECT_NE(Ask("^LIST=LISTS").find(M("=REPORTED_VARIABLES")), std::string::npos);
  EXPECT_EQ(Ask("^LIST=REPORTED_VARIABLES"), M("^REPORTED_VARIABLES=[]"));
  EXPECT_EQ(Ask("^LIST=NOSUCHLIST"), "");
}

TEST_F(MsdpAgentTest, ReportSendsNowAndOnEveryChange) {
  agent_.UpdateFromGmcp("Char.Vitals", R"({"hp":30,"maxhp":40,"mana":5,"maxmana":9})");
  EXPECT_EQ(Ask("^REPORT=HEALTH=NOSUCHVAR"), M("^HEALTH=30"));
  EXPECT_EQ(agent_.TakeReports(), "");
  agent_.UpdateFromGmcp("Char.Vitals", R"({"hp":30,"maxhp":40,"mana":6,"maxmana":9})");
  EXPECT_EQ(agent_.TakeReports(), "");  // MANA changed, but it is not reported
  agent_.UpdateFromGmcp("Char.Vitals", R"({"hp":25,"maxhp":40,"mana":6,"maxmana":9})");
  EXPECT_EQ(agent_.TakeReports(), M("^HEALTH=25"));
  EXPECT_EQ(Ask("^LIST=REPORTED_VARIABLES"), M("^REPORTED_VARIABLES=[=HEALTH]"));
  EXPECT_EQ(Ask("^UNREPORT=HEALTH"), "");
  agent_.UpdateFromGmcp("Char.Vitals", R"({"hp":1})");
  EXPECT_EQ(agent_.TakeReports(), "");
  EXPECT_EQ(Ask("^SEND=HEALTH"), M("^HEALTH=1"));
}

TEST_F(MsdpAgentTest, RoomInfoFillsTheRoomVariables) {
  agent_.UpdateFromGmcp(
      "Room.Info", R"({"zone":"midgaard","id":"atrium","name":"The Atrium","exits":{"n":"m:1"}})");
  EXPECT_EQ(Ask("^SEND=[=ROOM_NAME=ROOM_VNUM=AREA_NAME=ROOM_EXITS]"),
            M("^ROOM_NAME=The Atrium^ROOM_VNUM=atrium^AREA_NAME=midgaard^ROOM_EXITS={^n=m:1}"));
  EXPECT_EQ(Ask("^SEND=ROOM"),
            M("^ROOM={^VNUM=atrium^NAME=The Atrium^AREA=midgaard^EXITS={^n=m:1}}"));
  // The mapper fields, when the world sends them, win over its own.
  agent_.UpdateFromGmcp("Room.Info", R"({"num":12,"area":"Midgaard","id":"x","name":"N"})");
  EXPECT_EQ(Ask("^SEND=ROOM_VNUM=AREA_NAME"), M("^ROOM_VNUM=12^AREA_NAME=Midgaard"));
}

// Found by msdp_fuzz: a client naming one variable many times in one message got one answer
// per name, more items than a message may hold, so the answer itself no longer decoded.
TEST_F(MsdpAgentTest, AVariableNamedManyTimesIsAnsweredOnce) {
  agent_.UpdateFromGmcp(
      "Room.Info", R"({"zone":"midgaard","id":"atrium","name":"The Atrium","exits":{"n":"m:1"}})");
  std::string ask = "^REPORT";
  for (int i = 0; i < 100; ++i) ask += "=ROOM";
  const std::string answer = Ask(ask);
  ASSERT_TRUE(DecodeMsdp(answer).has_value());
  EXPECT_EQ(answer, M("^ROOM={^VNUM=atrium^NAME=The Atrium^AREA=midgaard^EXITS={^n=m:1}}"));
  EXPECT_EQ(Ask("^SEND=HEALTH=ROOM_NAME=HEALTH"), M("^ROOM_NAME=The Atrium"));
}

TEST_F(MsdpAgentTest, StatusAndClientVariables) {
  agent_.UpdateFromGmcp("Char.Status", R"({"name":"Ann","level":3,"exp":10,"gold":7})");
  EXPECT_EQ(Ask("^SEND=CHARACTER_NAME=LEVEL"), M("^CHARACTER_NAME=Ann^LEVEL=3"));
  agent_.UpdateFromGmcp("Char.Status", "not json");  // ignored
  EXPECT_EQ(Ask("^CLIENT_NAME=Mudlet^CLIENT_VERSION=4.17"), "");
  EXPECT_EQ(agent_.client_name(), "Mudlet");
  EXPECT_EQ(agent_.client_version(), "4.17");
}

TEST_F(MsdpAgentTest, ResetAndTheReportedBound) {
  EXPECT_EQ(Ask("^REPORT=[=HEALTH=MANA]"), "");  // no values yet
  EXPECT_EQ(agent_.reported().size(), 2u);
  Ask("^RESET=REPORTED_VARIABLES");
  EXPECT_TRUE(agent_.reported().empty());
  // Only reportable names are kept, so the set cannot grow past the list.
  std::string many = "^REPORT=[";
  for (int i = 0; i < 200; ++i) many += "=X" + std::to_string(i);
  Ask(many + "]");
  EXPECT_TRUE(agent_.reported().empty());
}

}  // namespace
}  // namespace telos::net
