// The JSON the world writes (the GMCP events Char.Name, Char.Vitals, Char.Status, Char.Items.*,
// Room.Info, Room.Players, Comm.Channel.Text and the /api/who document) parses back to what was
// meant, whatever names and text hold, with the members IRE clients and mapper scripts read.
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
  // The mapper's fields: a number from the room's id, the area's name, exits to numbers keyed
  // the short way ("north" is "n"; a direction of the pack's own keeps its name).
  const boost::json::value expected = {
      {"num", RoomNumber({"lobby", "atrium"})},
      {"name", "Bright Atrium"},
      {"area", "The Lobby"},
      {"environment", "outdoors"},
      {"exits", {{"n", RoomNumber({"lobby", "hall"})}, {"e", RoomNumber({"town", "square"})}}},
      {"zone", "lobby"},
      {"id", "atrium"}};
  EXPECT_EQ(room[0], expected);
  std::vector<std::string> room_keys;
  for (const auto& kv : room[0].as_object()) room_keys.emplace_back(kv.key());
  EXPECT_EQ(room_keys, (std::vector<std::string>{"num", "name", "area", "environment", "exits",
                                                 "zone", "id"}));
}

TEST(RoomNumberTest, IsFnv1aOfTheIdAndNeverChanges) {
  // Pinned: a client's saved map holds these numbers, so they must survive every release.
  EXPECT_EQ(RoomNumber({"lobby", "atrium"}), 448301937);
  EXPECT_EQ(RoomNumber({"lobby", "hall"}), 1316328032);
  EXPECT_EQ(RoomNumber({"town", "square"}), 474974286);
  EXPECT_GT(RoomNumber({"", ""}), 0);
}

TEST_F(GmcpTest, NameAndPlayersOfTheRoom) {
  auto alice = world_->Login("Alice");
  auto name = Bodies(*alice, "Char.Name");
  ASSERT_EQ(name.size(), 1u);
  EXPECT_EQ(name[0], (boost::json::value{{"name", "Alice"}, {"fullname", "Alice"}}));
  auto bob = world_->Login("Bob");
  // Bob is told who is here; Alice is told Bob came.
  auto players = Bodies(*bob, "Room.Players");
  ASSERT_EQ(players.size(), 1u);
  EXPECT_EQ(players[0], (boost::json::array{{{"name", "Alice"}, {"fullname", "Alice"}}}));
  auto added = Bodies(*alice, "Room.AddPlayer");
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0], (boost::json::value{{"name", "Bob"}, {"fullname", "Bob"}}));
  world_->Do("Bob", "north");
  auto removed = Bodies(*alice, "Room.RemovePlayer");
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(removed[0], boost::json::value("Bob"));
  auto alone = Bodies(*bob, "Room.Players");
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_EQ(alone[0], boost::json::array{});
}

TEST_F(GmcpTest, ItemsAreListedThenChangedOneByOne) {
  auto alice = world_->Login("Alice", "town:square");  // a leather cap lies here (a reset)
  auto lists = Bodies(*alice, "Char.Items.List");
  ASSERT_EQ(lists.size(), 2u);
  EXPECT_EQ(lists[0], (boost::json::value{{"location", "inv"}, {"items", boost::json::array{}}}));
  EXPECT_EQ(lists[1].at("location"), "room");
  const auto& here = lists[1].at("items").as_array();
  ASSERT_EQ(here.size(), 1u);
  EXPECT_EQ(here[0].at("name"), "a leather cap");
  EXPECT_EQ(here[0].at("attrib"), "t");
  const boost::json::value cap_id = here[0].at("id");

  const auto changes = [&] {
    std::vector<std::string> out;
    for (const OutputEvent& e : alice->events) {
      if (e.name.starts_with("Char.Items.")) out.push_back(e.name + " " + e.json);
    }
    alice->events.clear();
    return out;
  };
  const std::string id = boost::json::serialize(cap_id);
  world_->Do("Alice", "get cap");
  EXPECT_EQ(changes(),
            (std::vector<std::string>{R"(Char.Items.Add {"location":"inv","item":{"id":)" + id +
                                          R"(,"name":"a leather cap","attrib":"W"}})",
                                      R"(Char.Items.Remove {"location":"room","item":{"id":)" + id +
                                          R"(,"name":"a leather cap","attrib":"t"}})"}));
  world_->Do("Alice", "wear cap");
  EXPECT_EQ(changes(),
            (std::vector<std::string>{R"(Char.Items.Update {"location":"inv","item":{"id":)" + id +
                                      R"(,"name":"a leather cap","attrib":"w"}})"}));
  world_->Do("Alice", "say nothing moves");
  EXPECT_TRUE(changes().empty());
  // A new room is listed whole, mobs among its items.
  world_->Do("Alice", "south");
  auto alley = Bodies(*alice, "Char.Items.List");
  ASSERT_EQ(alley.size(), 1u);
  EXPECT_EQ(alley[0].at("location"), "room");
  const auto& mobs = alley[0].at("items").as_array();
  ASSERT_EQ(mobs.size(), 1u);
  EXPECT_EQ(mobs[0].at("name"), "a sewer rat");
  EXPECT_EQ(mobs[0].at("attrib"), "m");
  EXPECT_TRUE(mobs[0].at("id").as_string().starts_with("m"));
}

TEST_F(GmcpTest, ChannelTextAndNamesFromAnywhereComeBackRepaired) {
  auto alice = world_->Login("Alice");
  alice->Take();
  alice->events.clear();
  world_->host->DeliverChannel("ooc\"\xFF", "Zed\\\"", kHostile);
  world_->Run();
  EXPECT_TRUE(Bodies(*alice, "Comm.Channel").empty());  // the old name is gone
  world_->host->DeliverChannel("ooc\"\xFF", "Zed\\\"", kHostile);
  world_->Run();
  auto channel = Bodies(*alice, "Comm.Channel.Text");
  ASSERT_EQ(channel.size(), 1u);
  EXPECT_EQ(channel[0], (boost::json::value{{"channel", "ooc\"" + kFffd},
                                            {"talker", "Zed\\\""},
                                            {"text", "[ooc\"" + kFffd + "] Zed\\\": " + kRepaired},
                                            {"message", kRepaired}}));

  std::string name;
  ASSERT_TRUE(world_->host->DeliverTell("Zed\x01\xC0", "alice", kHostile, &name).ok());
  world_->Run();
  auto tell = Bodies(*alice, "Comm.Channel.Text");
  ASSERT_EQ(tell.size(), 1u);
  EXPECT_EQ(tell[0],
            (boost::json::value{{"channel", "tell"},
                                {"talker", "Zed\x01" + kFffd},
                                {"text", "Zed\x01" + kFffd + " tells you, '" + kRepaired + "'"},
                                {"message", kRepaired}}));
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
