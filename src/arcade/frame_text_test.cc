// What players see of the frames: every phase change at once, a crash multiplier line at most
// every text tick, GMCP at most every GMCP interval.

#include "telos/arcade/frame_text.h"

#include <gtest/gtest.h>

namespace telos::arcade {
namespace {

TEST(FrameTextTest, PhaseChangesAlwaysSpeakAndTicksAreRateLimited) {
  FrameText text(GameKind::kCrash, /*text_tick_ms=*/1000, /*gmcp_frame_ms=*/250);
  Instant now{};
  Frame f{.game = "crash", .position = 7, .phase = Phase::kBetting, .betting_ms_left = 5000};
  FrameNews news = text.Next(f, now);
  EXPECT_NE(news.text.find("Bets are open for 5 s"), std::string::npos) << news.text;
  EXPECT_NE(news.gmcp.find("\"phase\":\"betting\""), std::string::npos) << news.gmcp;

  f.betting_ms_left = 4900;
  news = text.Next(f, now + Millis(100));
  EXPECT_TRUE(news.text.empty());
  EXPECT_TRUE(news.gmcp.empty()) << "within the GMCP interval";
  news = text.Next(f, now + Millis(300));
  EXPECT_FALSE(news.gmcp.empty());

  f.phase = Phase::kRunning;
  news = text.Next(f, now + Millis(5000));
  EXPECT_NE(news.text.find("1.00x and rising"), std::string::npos);
  int lines = 0;
  for (int64_t ms = 5100; ms <= 8000; ms += 100) {
    f.multiplier_x100 = 100 + (ms - 5000) / 100;
    if (!text.Next(f, now + Millis(ms)).text.empty()) ++lines;
  }
  EXPECT_EQ(lines, 3) << "one multiplier line a second";

  f.phase = Phase::kSettled;
  f.crash_x100 = 231;
  f.round_hash = std::string(64, 'a');
  news = text.Next(f, now + Millis(8050));
  EXPECT_NE(news.text.find("Crashed at 2.31x"), std::string::npos) << news.text;
  EXPECT_NE(news.gmcp.find("\"crash\":231"), std::string::npos) << news.gmcp;
  EXPECT_NE(news.gmcp.find("\"hash\":\"aaaa"), std::string::npos);
}

TEST(FrameTextTest, ADiceRoundSaysItsRoll) {
  FrameText text(GameKind::kDice);
  Frame f{.game = "dice", .position = 3, .phase = Phase::kRunning};
  EXPECT_NE(text.Next(f, Instant{}).text.find("rolling"), std::string::npos);
  f.phase = Phase::kSettled;
  f.roll = 4821;
  f.round_hash = std::string(64, 'b');
  FrameNews news = text.Next(f, Instant{} + Millis(1000));
  EXPECT_NE(news.text.find("The roll is 4821."), std::string::npos) << news.text;
  EXPECT_NE(news.gmcp.find("\"roll\":4821"), std::string::npos);
}

TEST(FrameTextTest, FormatsMultipliers) {
  EXPECT_EQ(FormatX100(100), "1.00x");
  EXPECT_EQ(FormatX100(105), "1.05x");
  EXPECT_EQ(FormatX100(1234), "12.34x");
}

}  // namespace
}  // namespace telos::arcade
