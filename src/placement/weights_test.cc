#include "telos/placement/weights.h"

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "telos/base/limits.h"

namespace telos::placement {
namespace {

TEST(WeightsTest, DefaultsAreTheHouseTuningAndValid) {
  const Weights w;
  EXPECT_EQ(w.party_points, 10'000);
  EXPECT_EQ(w.guild_points_per_member, 400);
  EXPECT_EQ(w.guild_members_max, 5);
  EXPECT_EQ(w.friend_points_per_friend, 200);
  EXPECT_EQ(w.friends_max, 5);
  EXPECT_EQ(w.locale_points, 300);
  EXPECT_EQ(w.fill_points, 250);
  EXPECT_EQ(w.overfull_points_per_pct, -40);
  EXPECT_EQ(w.age_points, -100);
  EXPECT_EQ(w.antiflap_points, -5'000);
  EXPECT_TRUE(ValidateWeights(w).ok());
  EXPECT_EQ(MaxNonPartyPoints(w), 3'550);
}

TEST(WeightsTest, EmptyTextGivesTheDefaults) {
  Result<Weights> w = ParseWeights("", "<string>");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(*w, Weights{});
}

TEST(WeightsTest, KeysOverrideTheirFieldsOnly) {
  Result<Weights> w = ParseWeights(
      "# tuned for the arena\n"
      "party_points = 12000\n"
      "guild_members_max = 3\n"
      "age_max_ms = 3600000\n",
      "arena.toml");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->party_points, 12'000);
  EXPECT_EQ(w->guild_members_max, 3);
  EXPECT_EQ(w->age_max_ms, 3'600'000);
  EXPECT_EQ(w->locale_points, kDefaultLocalePoints);
}

TEST(WeightsTest, UnknownTermIsNamedWithItsLine) {
  Result<Weights> w = ParseWeights("party_points = 10000\nfriendship = 5\n", "arena.toml");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), StatusCode::kInvalidArgument);
  const std::string& message = w.status().message();
  EXPECT_NE(message.find("arena.toml:2: unknown term 'friendship'"), std::string::npos) << message;
  EXPECT_NE(message.find("friend_points_per_friend"), std::string::npos) << message;
}

TEST(WeightsTest, AValueOfTheWrongTypeIsRefused) {
  Result<Weights> w = ParseWeights("locale_points = \"lots\"\n", "arena.toml");
  ASSERT_FALSE(w.ok());
  EXPECT_NE(
      w.status().message().find("arena.toml:1: locale_points must be an integer, not a string"),
      std::string::npos)
      << w.status().message();
  Result<Weights> real = ParseWeights("fill_points = 2.5\n", "arena.toml");
  ASSERT_FALSE(real.ok());
  EXPECT_NE(real.status().message().find("not a floating-point number"), std::string::npos);
}

TEST(WeightsTest, OutOfRangeValuesAreRefusedWithTheRule) {
  Result<Weights> positive_penalty = ParseWeights("antiflap_points = 5000\n", "x.toml");
  ASSERT_FALSE(positive_penalty.ok());
  EXPECT_NE(positive_penalty.status().message().find("antiflap_points = 5000 is out of range"),
            std::string::npos)
      << positive_penalty.status().message();

  Result<Weights> negative_reward = ParseWeights("guild_points_per_member = -1\n", "x.toml");
  EXPECT_FALSE(negative_reward.ok());

  Result<Weights> band = ParseWeights("fill_band_low_pct = 90\n", "x.toml");
  ASSERT_FALSE(band.ok());
  EXPECT_NE(band.status().message().find("below fill_band_high_pct (80)"), std::string::npos);

  Result<Weights> huge = ParseWeights("locale_points = 99999999\n", "x.toml");
  EXPECT_FALSE(huge.ok());
}

TEST(WeightsTest, ThePartyTermMustOutweighEverythingElseTogether) {
  Result<Weights> weak = ParseWeights("party_points = 3550\n", "x.toml");
  ASSERT_FALSE(weak.ok());
  EXPECT_NE(weak.status().message().find("must exceed every other reward"), std::string::npos)
      << weak.status().message();
  EXPECT_TRUE(ParseWeights("party_points = 3551\n", "x.toml").ok());
  Result<Weights> big_guild = ParseWeights("guild_points_per_member = 2000\n", "x.toml");
  EXPECT_FALSE(big_guild.ok());
}

TEST(WeightsTest, SyntaxErrorsBecomeStatusNotExceptions) {
  Result<Weights> w = ParseWeights("party_points = = 3\n", "broken.toml");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(w.status().message().find("broken.toml:1"), std::string::npos) << w.status().message();
}

TEST(WeightsTest, LoadsAFileAndReportsAMissingOrOversizedOne) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir());
  const std::filesystem::path good = dir / "placement_weights_good.toml";
  {
    std::ofstream out(good);
    out << "fill_points = 300\n";
  }
  Result<Weights> w = LoadWeightsFile(good);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->fill_points, 300);

  EXPECT_EQ(LoadWeightsFile(dir / "placement_weights_absent.toml").status().code(),
            StatusCode::kNotFound);

  const std::filesystem::path big = dir / "placement_weights_big.toml";
  {
    std::ofstream out(big);
    out << std::string(limits::kPlacementWeightsFileBytesMax + 1, '#');
  }
  Result<Weights> too_big = LoadWeightsFile(big);
  ASSERT_FALSE(too_big.ok());
  EXPECT_NE(too_big.status().message().find("larger than"), std::string::npos);
  std::filesystem::remove(good);
  std::filesystem::remove(big);
}

}  // namespace
}  // namespace telos::placement
