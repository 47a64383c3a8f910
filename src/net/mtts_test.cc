#include "telos/net/mtts.h"

#include <gtest/gtest.h>

#include <string>

#include "telos/base/limits.h"

namespace telos::net {
namespace {

TEST(MttsTest, ParsesTheBits) {
  uint32_t bits = 0;
  EXPECT_TRUE(ParseMtts("MTTS 2829", bits));
  EXPECT_EQ(bits, 2829u);
  EXPECT_TRUE(ParseMtts("mtts 0", bits));
  EXPECT_EQ(bits, 0u);
  EXPECT_FALSE(ParseMtts("MTTS", bits));
  EXPECT_FALSE(ParseMtts("MTTS x1", bits));
  EXPECT_FALSE(ParseMtts("MTTS 99999999999", bits));
  EXPECT_FALSE(ParseMtts("XTERM", bits));
}

TEST(MttsTest, TheStandardCycleEndsAfterTheBits) {
  TerminalTypeCycle cycle;
  cycle.OnSend();
  EXPECT_TRUE(cycle.OnAnswer("MUDLET"));
  cycle.OnSend();
  EXPECT_TRUE(cycle.OnAnswer("ANSI-TRUECOLOR"));
  cycle.OnSend();
  EXPECT_FALSE(cycle.OnAnswer("MTTS 2829"));
  EXPECT_FALSE(cycle.may_send());
  const TerminalCapabilities& caps = cycle.capabilities();
  EXPECT_EQ(caps.client_name, "MUDLET");
  EXPECT_EQ(caps.terminal_type, "ANSI-TRUECOLOR");
  EXPECT_TRUE(caps.Has(mtts::kUtf8));
  EXPECT_TRUE(caps.Has(mtts::kTruecolor));
  EXPECT_FALSE(caps.Has(mtts::kScreenReader));
  EXPECT_EQ(ColourDepthFor(caps), ColourDepth::kTruecolor);
}

TEST(MttsTest, APlainClientStopsAtItsFirstRepeat) {
  TerminalTypeCycle cycle;
  cycle.OnSend();
  EXPECT_TRUE(cycle.OnAnswer("XTERM-256COLOR"));
  cycle.OnSend();
  EXPECT_FALSE(cycle.OnAnswer("XTERM-256COLOR"));
  EXPECT_EQ(cycle.capabilities().terminal_type, "XTERM-256COLOR");
  EXPECT_FALSE(cycle.capabilities().mtts);
  EXPECT_EQ(ColourDepthFor(cycle.capabilities()), ColourDepth::k256);
}

TEST(MttsTest, AClientThatNeverRepeatsIsAskedABoundedNumberOfTimes) {
  TerminalTypeCycle cycle;
  size_t sends = 1;
  cycle.OnSend();
  for (int i = 0; i < 100 && cycle.OnAnswer("TYPE" + std::to_string(i)); ++i) {
    cycle.OnSend();
    ++sends;
  }
  EXPECT_EQ(sends, limits::kTerminalTypeRoundsMax);
}

TEST(MttsTest, AnswersPastTheBoundAreIgnored) {
  // A client may send TTYPE IS without being asked: once it has given as many answers as we
  // would ever ask for, the rest change nothing (and are not kept).
  TerminalTypeCycle cycle;
  for (size_t i = 0; i < limits::kTerminalTypeRoundsMax; ++i) {
    (void)cycle.OnAnswer("TYPE" + std::to_string(i));
  }
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(cycle.OnAnswer("UNASKED" + std::to_string(i)));
  EXPECT_FALSE(cycle.OnAnswer("MTTS 137"));
  EXPECT_FALSE(cycle.capabilities().mtts);
  EXPECT_EQ(cycle.capabilities().terminal_type, "TYPE1");
  EXPECT_FALSE(cycle.may_send());
}

TEST(MttsTest, DepthFromBitsThenNames) {
  TerminalCapabilities caps;
  EXPECT_EQ(ColourDepthFor(caps), ColourDepth::k16);  // nothing said: ANSI, as every client
  caps.terminal_type = "xterm-truecolor";
  EXPECT_EQ(ColourDepthFor(caps), ColourDepth::kTruecolor);
  caps.mtts = true;
  caps.mtts_bits = mtts::kAnsi | mtts::k256Colours;
  EXPECT_EQ(ColourDepthFor(caps), ColourDepth::k256);  // the bits outrank the name
  caps.mtts_bits = mtts::kScreenReader;
  EXPECT_EQ(ColourDepthFor(caps), ColourDepth::kNone);
}

}  // namespace
}  // namespace telos::net
