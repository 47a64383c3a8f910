#include "telos/net/mssp.h"

#include <gtest/gtest.h>

namespace telos::net {
namespace {

std::string Find(const MsspVariables& vars, const std::string& name) {
  std::string found;
  size_t count = 0;
  for (const auto& [k, v] : vars) {
    if (k == name) {
      found = v;
      ++count;
    }
  }
  EXPECT_LE(count, 1u) << name << " is repeated";
  return found;
}

TEST(MsspTest, StandardVariablesAreAddedAfterTheGames) {
  MsspSettings settings;
  settings.hostname = "mud.example.org";
  settings.contact = "admin@example.org";
  settings.crawl_delay_hours = 2;
  const MsspVariables vars =
      CompleteMssp({{"NAME", "TelosMUD"}, {"PLAYERS", "3"}}, settings, 1'700'000'000, 4000);
  ASSERT_GE(vars.size(), 2u);
  EXPECT_EQ(vars[0], (std::pair<std::string, std::string>{"NAME", "TelosMUD"}));
  EXPECT_EQ(Find(vars, "UPTIME"), "1700000000");
  EXPECT_EQ(Find(vars, "PORT"), "4000");
  EXPECT_EQ(Find(vars, "HOSTNAME"), "mud.example.org");
  EXPECT_EQ(Find(vars, "CONTACT"), "admin@example.org");
  EXPECT_EQ(Find(vars, "CRAWL DELAY"), "2");
  EXPECT_EQ(Find(vars, "MSDP"), "1");
  EXPECT_EQ(Find(vars, "MXP"), "0");
  EXPECT_EQ(Find(vars, "WEBSITE"), "");  // not configured: not sent
}

TEST(MsspTest, TheGameWins) {
  const MsspVariables vars =
      CompleteMssp({{"CODEBASE", "TelosMUD 9"}, {"UTF-8", "1"}}, MsspSettings{}, 1, 0);
  EXPECT_EQ(Find(vars, "CODEBASE"), "TelosMUD 9");
  EXPECT_EQ(Find(vars, "UTF-8"), "1");
  EXPECT_EQ(Find(vars, "PORT"), "");  // unknown port: left out
  EXPECT_EQ(Find(vars, "CRAWL DELAY"), "-1");
}

}  // namespace
}  // namespace telos::net
