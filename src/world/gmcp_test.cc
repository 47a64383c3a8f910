// The JSON the world writes (the GMCP events Room.Info, Char.Vitals, Char.Status, Comm.Channel
// and the /api/who document) parses back to what was meant, whatever names and text hold.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "telos/world/who_json.h"
#include "telos/world/world_host.h"
#include "world_test_util.h"

namespace telos::world {
namespace {

using testing::FakeSink;
using testing::TempDir;
using testing::TestWorld;

const std::string kFffd = "\xEF\xBF\xBD";
// Quotes, a backslash, C0 controls, an escape sequence and a character cut short.
const std::string kHostile = "say \"hi\" \\ \x01\x1b[31m cut\xE2\x82 end";
const std::string kRepaired = "say \"hi\" \\ \x01\x1b[31m cut" + kFffd + " end";

boost::json::value Parse(const OutputEvent& event) {
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(event.json, ec);
  EXPECT_FALSE(ec) << event.name << " " << event.json;
  return v;
}

class GmcpTest : public ::testing::Test {
 protected:
  GmcpTest() {
    testing::WriteSmallPack(dir_);
    world_ = std::make_unique<TestWorld>(dir_.path());
  }
  // The bodies of `name` events delivered to `sink` since the last call, parsed.
  static std::vector<boost::json::value> Bodies(FakeSink& sink, std::string_view name) {
    std::vector<boost::json::value> out;
    for (const OutputEvent& e : sink.events) {
      if (e.name == name) out.push_back(Parse(e));
    }
    sink.events.clear();
    return out;
  }
  TempDir dir_;
  std::unique_ptr<TestWorld> world_;
};

TEST_F(GmcpTest, LoginEventsHaveTheirDocumentedMembersInOrder) {
  auto sink = world_->Login("Alice");
  for (const OutputEvent& e : sink->events) Parse(e);
  std::vector<boost::json::value> vitals, status, room;
  for (const OutputEvent& e : sink->events) {
    if (e.name == "Char.Vitals") vitals.push_back(Parse(e));
    if (e.name == "Char.Status") status.push_back(Parse(e));
    if (e.name == "Room.Info") room.push_back(Parse(e));
  }
  ASSERT_EQ(vitals.size(), 1u);
  std::vector<std::string> keys;
  for (const auto& kv : vitals[0].as_object()) keys.emplace_back(kv.key());
  EXPECT_EQ(keys,
            (std::vector<std::string>{"hp", "maxhp", "mana", "maxmana", "moves", "maxmoves"}));
  EXPECT_EQ(vitals[0].at("hp").as_int64(), 30);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_EQ(status[0].at("name").as_string(), "Alice");
  EXPECT_EQ(status[0].at("level").as_int64(), 1);
  ASSERT_FALSE(room.empty());
  EXPECT_EQ(room[0].at("zone").as_string(), "lobby");
  EXPECT_EQ(room[0].at("id").as_string(), "atrium");
  EXPECT_TRUE(room[0].at("exits").as_object().contains("north"));
}

TEST_F(GmcpTest, ChannelTextAndNamesFromAnywhereComeBackRepaired) {
  auto alice = world_->Login("Alice");
  alice->Take();
  alice->events.clear();
  world_->host->DeliverChannel("ooc\"\xFF", "Zed\\\"", kHostile);
  world_->Run();
  auto channel = Bodies(*alice, "Comm.Channel");
  ASSERT_EQ(channel.size(), 1u);
  EXPECT_EQ(
      channel[0],
      (boost::json::value{{"channel", "ooc\"" + kFffd}, {"from", "Zed\\\""}, {"text", kRepaired}}));

  std::string name;
  ASSERT_TRUE(world_->host->DeliverTell("Zed\x01\xC0", "alice", kHostile, &name).ok());
  world_->Run();
  auto tell = Bodies(*alice, "Comm.Channel");
  ASSERT_EQ(tell.size(), 1u);
  EXPECT_EQ(tell[0], (boost::json::value{
                         {"channel", "tell"}, {"from", "Zed\x01" + kFffd}, {"text", kRepaired}}));
}

TEST(WhoJsonTest, NamesAndZonesFromAnywhereComeBackRepaired) {
  const std::string json = WhoJson({{kHostile, 7, "zone\"\xFF"}, {"Bob", 1, "lobby"}});
  EXPECT_EQ(json.rfind("{\"count\":2,\"players\":[{\"name\":", 0), 0u) << json;
  boost::system::error_code ec;
  const boost::json::value parsed = boost::json::parse(json, ec);
  ASSERT_FALSE(ec) << json;
  const boost::json::value expected = {
      {"count", 2},
      {"players",
       boost::json::array{{{"name", kRepaired}, {"level", 7}, {"zone", "zone\"" + kFffd}},
                          {{"name", "Bob"}, {"level", 1}, {"zone", "lobby"}}}}};
  EXPECT_EQ(parsed, expected);
  EXPECT_EQ(WhoJson({}), "{\"count\":0,\"players\":[]}");
}

}  // namespace
}  // namespace telos::world
