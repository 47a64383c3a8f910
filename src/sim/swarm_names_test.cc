// Names the bots log in with, the target checks and the option bounds.
#include <gtest/gtest.h>

#include "telos/account/names.h"
#include "telos/sim/swarm.h"

namespace telos::sim {
namespace {

TEST(BotNames, AreValidAccountAndCharacterNames) {
  for (int64_t i :
       {int64_t{0}, int64_t{1}, int64_t{25}, int64_t{26}, int64_t{9999}, kSwarmBotsMax - 1}) {
    for (const char* prefix : {"bot", "load_test_99", "x"}) {
      EXPECT_TRUE(account::ValidateAccountName(BotAccountName(prefix, i)).ok())
          << BotAccountName(prefix, i);
      EXPECT_TRUE(account::ValidateCharacterName(BotCharacterName(prefix, i)).ok())
          << BotCharacterName(prefix, i);
    }
  }
  EXPECT_EQ(BotCharacterName("bot", 0), "Botaaaa");
  EXPECT_EQ(BotCharacterName("bot", 27), "Botaabb");
  EXPECT_NE(BotCharacterName("bot", 1), BotCharacterName("bot", 2));
  EXPECT_GE(BotPassword("b").size(), 8u);
}

TEST(Targets, ParseAndRefuseAnythingButLoopback) {
  auto t = ParseTarget("127.0.0.1:4000");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->host, "127.0.0.1");
  EXPECT_EQ(t->port, 4000);
  auto v6 = ParseTarget("[::1]:81");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->ToString(), "[::1]:81");
  for (const char* bad :
       {"", "127.0.0.1", "127.0.0.1:", ":80", "h:0", "h:70000", "h:8x", "::1:80"}) {
    EXPECT_FALSE(ParseTarget(bad).ok()) << bad;
  }
  EXPECT_TRUE(CheckTargetAllowed(*ParseTarget("127.0.0.9:1"), false).ok());
  EXPECT_TRUE(CheckTargetAllowed(*ParseTarget("localhost:1"), false).ok());
  EXPECT_TRUE(CheckTargetAllowed(*v6, false).ok());
  const auto remote = *ParseTarget("10.1.2.3:4000");
  EXPECT_EQ(CheckTargetAllowed(remote, false).code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(CheckTargetAllowed(remote, true).ok());
  EXPECT_FALSE(CheckTargetAllowed(*ParseTarget("example.com:80"), true).ok());
}

TEST(Options, AreBounded) {
  SwarmOptions o;
  o.targets = {*ParseTarget("127.0.0.1:4000")};
  EXPECT_TRUE(ValidateSwarmOptions(o).ok());
  auto with = [&](auto change) {
    SwarmOptions copy = o;
    change(copy);
    return ValidateSwarmOptions(copy);
  };
  EXPECT_FALSE(with([](SwarmOptions& c) { c.bots = 0; }).ok());
  EXPECT_FALSE(with([](SwarmOptions& c) { c.bots = kSwarmBotsMax + 1; }).ok());
  EXPECT_FALSE(with([](SwarmOptions& c) { c.duration_s = 0; }).ok());
  EXPECT_FALSE(with([](SwarmOptions& c) { c.duration_s = 4000; }).ok());
  EXPECT_FALSE(with([](SwarmOptions& c) { c.ramp_per_second = 0; }).ok());
  EXPECT_FALSE(with([](SwarmOptions& c) { c.targets.clear(); }).ok());
  EXPECT_FALSE(with([](SwarmOptions& c) { c.accounts_prefix = "no spaces"; }).ok());
  EXPECT_FALSE(with([](SwarmOptions& c) { c.metrics_url = "http://10.0.0.1:80/metrics"; }).ok());
  EXPECT_TRUE(with([](SwarmOptions& c) { c.metrics_url = "http://127.0.0.1:80/metrics"; }).ok());
}

}  // namespace
}  // namespace telos::sim
