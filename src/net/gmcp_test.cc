// GmcpSupports: Core.Supports.Set/Add/Remove decide which modules a client is sent, Core.Ping
// and Core.Hello are answered, and state is replayed for a module turned on late.
#include "telos/net/gmcp.h"

#include <gtest/gtest.h>

#include "telos/base/limits.h"

namespace telos::net {
namespace {

std::vector<std::string> Packages(const std::vector<GmcpMessage>& messages) {
  std::vector<std::string> out;
  for (const GmcpMessage& m : messages) out.push_back(m.package);
  return out;
}

TEST(GmcpModuleTest, ModuleIsAllButTheLastPart) {
  EXPECT_EQ(GmcpModuleOf("Char.Items.List"), "Char.Items");
  EXPECT_EQ(GmcpModuleOf("Char.Vitals"), "Char");
  EXPECT_EQ(GmcpModuleOf("Comm.Channel.Text"), "Comm.Channel");
  EXPECT_EQ(GmcpModuleOf("Room"), "Room");
}

TEST(GmcpSupportsTest, AClientThatNeverSaysGetsEverything) {
  GmcpSupports s;
  for (const char* p :
       {"Char.Vitals", "Char.Items.List", "Room.Info", "Comm.Channel.Text", "Anything.Else"}) {
    EXPECT_TRUE(s.Wants(p)) << p;
  }
  EXPECT_FALSE(s.chosen());
}

TEST(GmcpSupportsTest, SetSendsOnlyTheModulesNamed) {
  GmcpSupports s;
  // Mudlet's own list at connect.
  EXPECT_TRUE(s.OnClientMessage("Core.Supports.Set",
                                R"(["Char 1", "Char.Skills 1", "Room 1", "IRE.Rift 1"])")
                  .empty());
  EXPECT_TRUE(s.chosen());
  EXPECT_TRUE(s.Wants("Char.Vitals"));
  EXPECT_TRUE(s.Wants("char.STATUS"));  // package names are case-insensitive
  EXPECT_TRUE(s.Wants("Room.Info"));
  EXPECT_TRUE(s.Wants("Room.Players"));
  EXPECT_FALSE(s.Wants("Char.Items.List"));  // Char.Items is a module of its own
  EXPECT_FALSE(s.Wants("Comm.Channel.Text"));
  EXPECT_TRUE(s.Wants("Core.Ping"));  // Core is always on
  // A second Set replaces the first.
  s.OnClientMessage("Core.Supports.Set", R"(["comm.channel 1"])");
  EXPECT_FALSE(s.Wants("Char.Vitals"));
  EXPECT_TRUE(s.Wants("Comm.Channel.Text"));
}

TEST(GmcpSupportsTest, AddAndRemoveChangeTheSet) {
  GmcpSupports s;
  s.OnClientMessage("Core.Supports.Set", R"(["Char 1"])");
  s.OnClientMessage("Core.Supports.Add", R"(["Char.Items 1", "Comm.Channel 1"])");
  EXPECT_TRUE(s.Wants("Char.Items.Add"));
  EXPECT_TRUE(s.Wants("Comm.Channel.Text"));
  s.OnClientMessage("Core.Supports.Remove", R"(["Char", "Comm.Channel 1"])");
  EXPECT_FALSE(s.Wants("Char.Vitals"));
  EXPECT_FALSE(s.Wants("Comm.Channel.Text"));
  EXPECT_TRUE(s.Wants("Char.Items.Remove"));
}

TEST(GmcpSupportsTest, RemoveBeforeAnySetKeepsTheRest) {
  GmcpSupports s;
  s.OnClientMessage("Core.Supports.Remove", R"(["Room 1"])");
  EXPECT_FALSE(s.chosen());
  EXPECT_FALSE(s.Wants("Room.Info"));
  EXPECT_TRUE(s.Wants("Char.Vitals"));
  s.OnClientMessage("Core.Supports.Add", R"(["Room 1"])");
  EXPECT_TRUE(s.Wants("Room.Info"));
}

TEST(GmcpSupportsTest, MalformedSupportsChangeNothing) {
  GmcpSupports s;
  s.OnClientMessage("Core.Supports.Set", R"(["Room 1"])");
  for (const char* bad : {"", "Room 1", R"({"Char":1})", "[\"Char 1\"", "null"}) {
    EXPECT_TRUE(s.OnClientMessage("Core.Supports.Set", bad).empty()) << bad;
    EXPECT_TRUE(s.Wants("Room.Info")) << bad;
    EXPECT_FALSE(s.Wants("Char.Vitals")) << bad;
  }
  // Entries that are not module names are skipped; the rest count.
  s.OnClientMessage("Core.Supports.Set", R"([7, "Char 1", "bad name!", null])");
  EXPECT_TRUE(s.Wants("Char.Vitals"));
  EXPECT_FALSE(s.Wants("Room.Info"));
}

TEST(GmcpSupportsTest, AClientHoldsAtMostTheBoundOfModules) {
  GmcpSupports s;
  std::string many = "[";
  for (size_t i = 0; i < limits::kGmcpModulesMax * 2; ++i) {
    many += (i ? ",\"M" : "\"M") + std::to_string(i) + " 1\"";
  }
  many += "]";
  s.OnClientMessage("Core.Supports.Set", many);
  s.OnClientMessage("Core.Supports.Add", many);
  EXPECT_TRUE(s.Wants("M0.X"));
  EXPECT_TRUE(s.Wants("M" + std::to_string(limits::kGmcpModulesMax - 1) + ".X"));
  EXPECT_FALSE(s.Wants("M" + std::to_string(limits::kGmcpModulesMax) + ".X"));
}

TEST(GmcpSupportsTest, PingAndHelloAreAnswered) {
  GmcpSupports s;
  const auto ping = s.OnClientMessage("core.ping", "120");
  ASSERT_EQ(ping.size(), 1u);
  EXPECT_EQ(ping[0].package, "Core.Ping");
  EXPECT_EQ(ping[0].json, "");
  const auto hello = s.OnClientMessage("Core.Hello", R"({"client":"Mudlet","version":"4.17.2"})");
  ASSERT_EQ(hello.size(), 1u);
  EXPECT_EQ(hello[0].package, "Core.Hello");
  EXPECT_EQ(hello[0].json, R"({"name":"TelosMUD"})");
  EXPECT_EQ(s.client_name(), "Mudlet");
  EXPECT_EQ(s.client_version(), "4.17.2");
  // A hostile Hello is cleaned and cut, never refused.
  s.OnClientMessage("Core.Hello", "{\"client\":\"x\\u001b[31m" + std::string(200, 'y') + "\"}");
  EXPECT_LE(s.client_name().size(), limits::kTerminalTypeBytesMax);
  EXPECT_EQ(s.client_name().find('\x1b'), std::string::npos);
  EXPECT_TRUE(s.OnClientMessage("Char.Items.Inv", "").empty());  // not the transport's
}

TEST(GmcpSupportsTest, StateIsReplayedForAModuleTurnedOnLate) {
  GmcpSupports s;
  s.OnClientMessage("Core.Supports.Set", R"(["Char 1"])");
  s.Remember("Room.Info", R"({"num":7})");
  s.Remember("Char.Vitals", R"({"hp":3})");
  s.Remember("Char.Items.List", R"({"location":"inv","items":[]})");  // a list: never replayed
  s.Remember("Comm.Channel.Text", R"({"text":"hi"})");                // an event: never replayed
  // Char was on already: nothing of it is sent again.
  EXPECT_TRUE(s.OnClientMessage("Core.Supports.Add", R"(["Char 1"])").empty());
  const auto replay =
      s.OnClientMessage("Core.Supports.Add", R"(["Room 1", "Char.Items 1", "Comm.Channel 1"])");
  ASSERT_EQ(Packages(replay), (std::vector<std::string>{"Room.Info"}));
  EXPECT_EQ(replay[0].json, R"({"num":7})");
  s.Remember("Room.Info", R"({"num":8})");
  s.OnClientMessage("Core.Supports.Remove", R"(["Room"])");
  const auto again = s.OnClientMessage("Core.Supports.Set", R"(["Room 1", "Char 1"])");
  ASSERT_EQ(Packages(again), (std::vector<std::string>{"Room.Info"}));
  EXPECT_EQ(again[0].json, R"({"num":8})");
  // A body past the bound is forgotten rather than replayed stale.
  s.OnClientMessage("Core.Supports.Set", R"([])");
  s.Remember("Room.Info", std::string(limits::kGmcpRememberedBodyBytesMax + 1, ' '));
  EXPECT_TRUE(s.OnClientMessage("Core.Supports.Set", R"(["Room 1"])").empty());
}

}  // namespace
}  // namespace telos::net
