#include "telos/net/text.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "telos/base/utf8.h"

namespace telos::net {
namespace {

std::vector<InputLine> Read(LineReader& r, std::string_view data) {
  std::vector<InputLine> lines;
  r.Feed(data, lines);
  return lines;
}

TEST(LineReaderTest, EveryLineEndingEndsALine) {
  LineReader r(100);
  auto lines = Read(r, "a\r\nb\nc\r");
  lines.push_back({});
  auto more = Read(r, std::string("\0d\r", 3));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].text, "a");
  EXPECT_EQ(lines[1].text, "b");
  EXPECT_EQ(lines[2].text, "c");
  ASSERT_EQ(more.size(), 1u);  // the NUL after CR belongs to the CR
  EXPECT_EQ(more[0].text, "d");
}

TEST(LineReaderTest, PartialLinesWaitForTheirEnd) {
  LineReader r(100);
  EXPECT_TRUE(Read(r, "loo").empty());
  EXPECT_EQ(r.pending_bytes(), 3u);
  auto lines = Read(r, "k\n");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].text, "look");
}

TEST(LineReaderTest, LongLineKeepsItsStartAndIsFlagged) {
  LineReader r(10);
  auto lines = Read(r, std::string(5000, 'x') + "\nshort\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].text, std::string(10, 'x'));
  EXPECT_TRUE(lines[0].truncated);
  EXPECT_EQ(lines[1].text, "short");
  EXPECT_FALSE(lines[1].truncated);
  EXPECT_LT(r.pending_bytes(), 20u);
}

TEST(LineReaderTest, CutNeverSplitsACharacter) {
  LineReader r(5);
  auto lines = Read(r, "ab\xC3\xA9\xC3\xA9\n");  // a b é é = 6 bytes
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].text, "ab\xC3\xA9");
  EXPECT_TRUE(lines[0].truncated);
}

TEST(SanitizeTest, ControlsDroppedTabsBecomeSpaces) {
  EXPECT_EQ(SanitizeInput(std::string("say\thi\x1b[31m\x07\0!", 14)), "say hi[31m!");
  EXPECT_EQ(SanitizeInput("del\x7f"), "del");
}

TEST(SanitizeTest, ACharacterCutShortIsOneReplacementAsInTheBaseRule) {
  EXPECT_EQ(SanitizeInput("euro \xE2\x82!"), "euro \xEF\xBF\xBD!");
  for (const std::string text : {"a\tb\x01\xC3(", "\xF0\x9F\x90\xC2\x85x", "\xED\xA0\x80\x7F"}) {
    std::string spaced = text;
    std::replace(spaced.begin(), spaced.end(), '\t', ' ');
    EXPECT_EQ(SanitizeInput(text), SanitizeUtf8(spaced, Utf8Controls::kDrop)) << text;
  }
}

TEST(SanitizeTest, InvalidUtf8IsReplacedValidKept) {
  EXPECT_EQ(SanitizeInput("caf\xC3\xA9"), "caf\xC3\xA9");
  EXPECT_EQ(SanitizeInput("bad\xFF"
                          "x"),
            "bad\xEF\xBF\xBDx");
  EXPECT_EQ(SanitizeInput("\xC3"), "\xEF\xBF\xBD");                  // truncated sequence
  EXPECT_EQ(SanitizeInput("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong
  EXPECT_EQ(SanitizeInput("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(SanitizeInput("a\xC2\x85"
                          "b"),
            "ab");                                                   // C1 control dropped
  EXPECT_EQ(SanitizeInput("\xF0\x9F\x90\x89"), "\xF0\x9F\x90\x89");  // dragon emoji kept
}

TEST(RenderColourTest, CodesBecomeAnsiOrVanish) {
  EXPECT_EQ(RenderColour("{r}red{x} plain", true), "\x1b[31mred\x1b[0m plain");
  EXPECT_EQ(RenderColour("{r}red{x} plain", false), "red plain");
  EXPECT_EQ(RenderColour("{{r} {q} {", true), "{r} {q} {");
}

}  // namespace
}  // namespace telos::net
