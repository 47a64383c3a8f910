// ReadClusterView against the in-memory directory on a manual clock, and the two renderings.
#include "telos/directory/cluster_view.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "telos/base/clock.h"
#include "telos/directory/memory_directory.h"

namespace telos::directory {
namespace {

class ClusterViewTest : public ::testing::Test {
 protected:
  void Ok(const Status& s) { ASSERT_TRUE(s.ok()) << s.ToString(); }
  uint64_t Claim(std::string_view zone, std::string_view shard, int64_t ttl_ms = 15'000) {
    auto grant = dir_.ClaimZone(zone, shard, ttl_ms);
    EXPECT_TRUE(grant.ok()) << grant.status().ToString();
    return grant.ok() ? grant->epoch : 0;
  }
  ClusterView Read(const std::vector<std::string>& zones) {
    auto view = ReadClusterView(dir_, zones, "ctl", "host-1");
    EXPECT_TRUE(view.ok()) << view.status().ToString();
    return view.ok() ? std::move(*view) : ClusterView{};
  }

  ManualClock clock_;
  MemoryDirectory dir_{clock_};
};

TEST_F(ClusterViewTest, EmptyDirectoryListsEveryZoneUnowned) {
  const ClusterView view = Read({"town", "lobby"});
  EXPECT_EQ(view.answered_by_role, "ctl");
  EXPECT_EQ(view.answered_by_id, "host-1");
  EXPECT_TRUE(view.shards.empty());
  EXPECT_TRUE(view.standbys.empty());
  ASSERT_EQ(view.zones.size(), 2u);
  EXPECT_EQ(view.zones[0].zone, "lobby");
  EXPECT_EQ(view.zones[1].zone, "town");
  EXPECT_FALSE(view.zones[0].owner.has_value());
  EXPECT_FALSE(view.zones[1].owner.has_value());
}

TEST_F(ClusterViewTest, JoinsShardsOwnersAndOccupancy) {
  Ok(dir_.RegisterShard("world-1", "10.0.0.2:7000", 15'000));
  Ok(dir_.RegisterShard("world-0", "10.0.0.1:7000", 15'000));
  Ok(dir_.RegisterShard("world-2", "10.0.0.3:7000", 15'000));
  EXPECT_EQ(Claim("town", "world-0"), 1u);
  EXPECT_EQ(Claim("forest", "world-0"), 1u);
  EXPECT_EQ(Claim("moor", "world-1"), 1u);
  Ok(dir_.ReportOccupancy("world-0", {{"forest", 2}, {"town", 5}}));
  Ok(dir_.ReportOccupancy("world-1", {{"moor", 0}}));
  clock_.Advance(std::chrono::milliseconds(1'000));

  // Unsorted, with a duplicate and a zone nobody owns.
  const ClusterView view = Read({"town", "moor", "forest", "lobby", "town"});

  ASSERT_EQ(view.shards.size(), 3u);
  EXPECT_EQ(view.shards[0].info.id, "world-0");
  EXPECT_EQ(view.shards[0].info.endpoint, "10.0.0.1:7000");
  EXPECT_EQ(view.shards[0].info.ttl_ms, 14'000);
  EXPECT_EQ(view.shards[0].zones, (std::vector<std::string>{"forest", "town"}));
  EXPECT_FALSE(view.shards[0].standby);
  EXPECT_EQ(view.shards[0].players, 7);

  EXPECT_EQ(view.shards[1].info.id, "world-1");
  EXPECT_EQ(view.shards[1].zones, (std::vector<std::string>{"moor"}));
  EXPECT_FALSE(view.shards[1].standby);
  EXPECT_EQ(view.shards[1].players, 0);

  EXPECT_EQ(view.shards[2].info.id, "world-2");
  EXPECT_TRUE(view.shards[2].zones.empty());
  EXPECT_TRUE(view.shards[2].standby);
  EXPECT_EQ(view.shards[2].players, 0);  // no report at all

  EXPECT_EQ(view.standbys, (std::vector<std::string>{"world-2"}));

  ASSERT_EQ(view.zones.size(), 4u);
  EXPECT_EQ(view.zones[0].zone, "forest");
  EXPECT_EQ(view.zones[1].zone, "lobby");
  EXPECT_EQ(view.zones[2].zone, "moor");
  EXPECT_EQ(view.zones[3].zone, "town");
  EXPECT_FALSE(view.zones[1].owner.has_value());
  ASSERT_TRUE(view.zones[3].owner.has_value());
  EXPECT_EQ(view.zones[3].owner->shard_id, "world-0");
  EXPECT_EQ(view.zones[3].owner->endpoint, "10.0.0.1:7000");
  EXPECT_EQ(view.zones[3].owner->epoch, 1u);
  EXPECT_EQ(view.zones[3].owner->ttl_ms, 14'000);
}

TEST_F(ClusterViewTest, ZonesOutsideTheQuestionDoNotCount) {
  Ok(dir_.RegisterShard("world-0", "a:1", 15'000));
  Claim("secret", "world-0");
  const ClusterView view = Read({"town"});
  ASSERT_EQ(view.shards.size(), 1u);
  EXPECT_TRUE(view.shards[0].zones.empty());
  EXPECT_TRUE(view.shards[0].standby);
  EXPECT_EQ(view.standbys, (std::vector<std::string>{"world-0"}));
}

TEST_F(ClusterViewTest, LapsedRegistrationLeavesTheShardOutButItsLeaseShows) {
  Ok(dir_.RegisterShard("world-0", "a:1", 1'000));
  Ok(dir_.RegisterShard("world-1", "b:1", 60'000));
  Claim("town", "world-0", 60'000);
  clock_.Advance(std::chrono::milliseconds(2'000));

  const ClusterView view = Read({"town"});
  ASSERT_EQ(view.shards.size(), 1u);
  EXPECT_EQ(view.shards[0].info.id, "world-1");
  EXPECT_EQ(view.standbys, (std::vector<std::string>{"world-1"}));
  ASSERT_EQ(view.zones.size(), 1u);
  ASSERT_TRUE(view.zones[0].owner.has_value());
  EXPECT_EQ(view.zones[0].owner->shard_id, "world-0");
  EXPECT_EQ(view.zones[0].owner->endpoint, "");

  const std::string text = ClusterViewText(view);
  EXPECT_NE(text.find("(registration lapsed)"), std::string::npos) << text;
}

TEST_F(ClusterViewTest, ExpiredLeaseShowsUnownedAndItsShardStandsBy) {
  Ok(dir_.RegisterShard("world-0", "a:1", 60'000));
  Claim("town", "world-0", 1'000);
  clock_.Advance(std::chrono::milliseconds(1'000));
  const ClusterView view = Read({"town"});
  ASSERT_EQ(view.zones.size(), 1u);
  EXPECT_FALSE(view.zones[0].owner.has_value());
  EXPECT_EQ(view.standbys, (std::vector<std::string>{"world-0"}));
}

TEST_F(ClusterViewTest, DirectoryErrorsPassThrough) {
  auto view = ReadClusterView(dir_, {"town", ""}, "ctl", "host-1");
  ASSERT_FALSE(view.ok());
  EXPECT_EQ(view.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(ClusterViewTest, JsonHasTheDocumentedShape) {
  Ok(dir_.RegisterShard("world-0", "127.0.0.1:20100", 15'000));
  Ok(dir_.RegisterShard("world-1", "127.0.0.1:20101", 15'000));
  Claim("town", "world-0");
  Claim("town", "world-0");  // same tenure: epoch stays 1
  Ok(dir_.ReportOccupancy("world-0", {{"town", 3}}));

  const std::string json = ClusterViewJson(Read({"town", "lobby"}));
  EXPECT_EQ(json,
            "{\"answered_by\":{\"role\":\"ctl\",\"id\":\"host-1\"},"
            "\"shards\":["
            "{\"id\":\"world-0\",\"endpoint\":\"127.0.0.1:20100\",\"ttl_ms\":15000,"
            "\"zones\":[\"town\"],\"standby\":false,\"players\":3},"
            "{\"id\":\"world-1\",\"endpoint\":\"127.0.0.1:20101\",\"ttl_ms\":15000,"
            "\"zones\":[],\"standby\":true,\"players\":0}],"
            "\"zones\":["
            "{\"zone\":\"lobby\",\"owner\":null},"
            "{\"zone\":\"town\",\"owner\":{\"shard\":\"world-0\",\"endpoint\":\"127.0.0.1:20100\","
            "\"epoch\":1,\"ttl_ms\":15000}}],"
            "\"standbys\":[\"world-1\"]}");
}

TEST_F(ClusterViewTest, JsonEscapesEveryString) {
  ClusterView view;
  view.answered_by_role = "ctl";
  view.answered_by_id = "h\"o\\st\n";
  ClusterShard shard;
  shard.info = ShardInfo{"w\"0", "ep\\1", 5};
  shard.zones = {"z\""};
  view.shards.push_back(shard);
  view.zones.push_back(ClusterZone{"z\"", ZoneOwner{"w\"0", "ep\\1", 2, 5}});
  view.standbys = {"s\t"};

  const std::string json = ClusterViewJson(view);
  EXPECT_NE(json.find("\"id\":\"h\\\"o\\\\st\\n\""), std::string::npos) << json;
  EXPECT_NE(json.find("{\"id\":\"w\\\"0\",\"endpoint\":\"ep\\\\1\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"zones\":[\"z\\\"\"]"), std::string::npos) << json;
  EXPECT_NE(json.find("\"owner\":{\"shard\":\"w\\\"0\",\"endpoint\":\"ep\\\\1\""),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"standbys\":[\"s\\t\"]"), std::string::npos) << json;
  EXPECT_EQ(json.find('\n'), std::string::npos) << json;
}

TEST_F(ClusterViewTest, JsonOfHostileIdsParsesBackRepaired) {
  const std::string fffd = "\xEF\xBF\xBD";
  const std::string hostile = "w\"0\\ \x01\x1b cut\xE2\x82";
  const std::string repaired = "w\"0\\ \x01\x1b cut" + fffd;
  ClusterView view;
  view.answered_by_role = "gate";
  view.answered_by_id = hostile + "\xFF";
  ClusterShard shard;
  shard.info = ShardInfo{hostile, "ep\xC0\xAF", 5};
  shard.zones = {hostile};
  shard.players = 2;
  view.shards.push_back(shard);
  view.zones.push_back(ClusterZone{hostile, ZoneOwner{hostile, "ep", 2, 5}});
  view.zones.push_back(ClusterZone{"lobby", std::nullopt});
  view.standbys = {hostile};

  const std::string json = ClusterViewJson(view);
  boost::system::error_code ec;
  const boost::json::value parsed = boost::json::parse(json, ec);
  ASSERT_FALSE(ec) << json;
  const boost::json::value expected = {
      {"answered_by", {{"role", "gate"}, {"id", repaired + fffd}}},
      {"shards", boost::json::array{{{"id", repaired},
                                     {"endpoint", "ep" + fffd + fffd},
                                     {"ttl_ms", 5},
                                     {"zones", boost::json::array{repaired}},
                                     {"standby", false},
                                     {"players", 2}}}},
      {"zones",
       boost::json::array{
           {{"zone", repaired},
            {"owner", {{"shard", repaired}, {"endpoint", "ep"}, {"epoch", 2}, {"ttl_ms", 5}}}},
           {{"zone", "lobby"}, {"owner", nullptr}}}},
      {"standbys", boost::json::array{repaired}}};
  EXPECT_EQ(parsed, expected) << json;
}

TEST_F(ClusterViewTest, TextIsAnAlignedTable) {
  Ok(dir_.RegisterShard("world-0", "127.0.0.1:20100", 15'000));
  Ok(dir_.RegisterShard("world-10", "127.0.0.1:20110", 15'000));
  Claim("town", "world-0");
  Claim("arena", "world-0");
  Ok(dir_.ReportOccupancy("world-0", {{"town", 12}}));

  const std::string text = ClusterViewText(Read({"town", "arena", "lobby"}));
  EXPECT_EQ(text,
            "cluster as seen by ctl host-1: 2 live shard(s), 1 standby, 2/3 zone(s) owned\n"
            "\n"
            "SHARD     ENDPOINT         TTL_MS  PLAYERS  ZONES\n"
            "world-0   127.0.0.1:20100  15000   12       arena,town\n"
            "world-10  127.0.0.1:20110  15000   0        (standby)\n"
            "\n"
            "ZONE   OWNER      EPOCH  TTL_MS  ENDPOINT\n"
            "arena  world-0    1      15000   127.0.0.1:20100\n"
            "lobby  (unowned)  -      -       -\n"
            "town   world-0    1      15000   127.0.0.1:20100\n"
            "\n"
            "standbys: world-10\n");
}

TEST_F(ClusterViewTest, TextOfAnEmptyView) {
  const std::string text = ClusterViewText(Read({}));
  EXPECT_NE(text.find("0 live shard(s)"), std::string::npos) << text;
  EXPECT_NE(text.find("standbys: (none)"), std::string::npos) << text;
}

}  // namespace
}  // namespace telos::directory
