#include "telos/net/colour.h"

#include <gtest/gtest.h>

namespace telos::net {
namespace {

TEST(FitColourTest, TextThatFitsIsUnchanged) {
  const std::string text = "\x1b[1;31mred\x1b[0m plain \x1b[2J";
  EXPECT_EQ(FitColour(text, ColourDepth::k16), text);
  EXPECT_EQ(FitColour("\x1b[38;5;208morange", ColourDepth::k256), "\x1b[38;5;208morange");
  EXPECT_EQ(FitColour("\x1b[38;2;1;2;3mx", ColourDepth::kTruecolor), "\x1b[38;2;1;2;3mx");
}

TEST(FitColourTest, TruecolorFallsToTheNearestPaletteColour) {
  EXPECT_EQ(FitColour("\x1b[38;2;255;0;0mred", ColourDepth::k256), "\x1b[38;5;196mred");
  EXPECT_EQ(FitColour("\x1b[48;2;128;128;128mgrey", ColourDepth::k256), "\x1b[48;5;244mgrey");
  EXPECT_EQ(FitColour("\x1b[38;2;255;0;0mred", ColourDepth::k16), "\x1b[91mred");
  EXPECT_EQ(FitColour("\x1b[1;38;2;0;0;200;4mx", ColourDepth::k16), "\x1b[1;34;4mx");
}

TEST(FitColourTest, PaletteColoursFallToTheBasicSixteen) {
  EXPECT_EQ(FitColour("\x1b[38;5;2mgreen", ColourDepth::k16), "\x1b[32mgreen");
  EXPECT_EQ(FitColour("\x1b[38;5;9mbright", ColourDepth::k16), "\x1b[91mbright");
  EXPECT_EQ(FitColour("\x1b[48;5;231mwhite", ColourDepth::k16), "\x1b[107mwhite");
}

TEST(FitColourTest, NoColourDropsEverySgrEscapeButKeepsOthers) {
  EXPECT_EQ(FitColour("\x1b[1;31mred\x1b[0m \x1b[2J\x1b", ColourDepth::kNone), "red \x1b[2J\x1b");
}

TEST(FitColourTest, MalformedEscapesPassThrough) {
  EXPECT_EQ(FitColour("\x1b[38;5m\x1b[38;2;1m\x1b[", ColourDepth::k16),
            "\x1b[38;5m\x1b[38;2;1m\x1b[");
  EXPECT_EQ(FitColour("\x1b[38:2:1:2:3mx", ColourDepth::k16), "\x1b[38:2:1:2:3mx");
}

TEST(RenderColourAtDepthTest, HexCodesAreFitted) {
  EXPECT_EQ(RenderColourAtDepth("{#ff0000}hot{x}", ColourDepth::kTruecolor),
            "\x1b[38;2;255;0;0mhot\x1b[0m");
  EXPECT_EQ(RenderColourAtDepth("{#ff0000}hot{x}", ColourDepth::k256), "\x1b[38;5;196mhot\x1b[0m");
  EXPECT_EQ(RenderColourAtDepth("{#ff0000}hot{r}x", ColourDepth::kNone), "hotx");
  EXPECT_EQ(RenderColourAtDepth("{{#ff0000} {#ff00}", ColourDepth::k16), "{#ff0000} {#ff00}");
}

}  // namespace
}  // namespace telos::net
