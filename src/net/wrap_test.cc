#include "telos/net/wrap.h"

#include <gtest/gtest.h>

namespace telos::net {
namespace {

TEST(WrapTextTest, BreaksAtTheLastSpaceThatFits) {
  EXPECT_EQ(WrapText("the quick brown fox jumps\n", 10), "the quick\nbrown fox\njumps\n");
  EXPECT_EQ(WrapText("fits in ten\nok\n", 11), "fits in ten\nok\n");
  EXPECT_EQ(WrapText("exactly10c next", 10), "exactly10c\nnext");
}

TEST(WrapTextTest, LongWordsAreBrokenWhereTheLineIsFull) {
  EXPECT_EQ(WrapText("abcdefghijkl", 5), "abcde\nfghij\nkl");
  EXPECT_EQ(WrapText("ab abcdefghij", 5), "ab\nabcde\nfghij");
}

TEST(WrapTextTest, EscapesTakeNoColumnsAndCharactersOne) {
  EXPECT_EQ(WrapText("\x1b[31mthe quick\x1b[0m brown", 9), "\x1b[31mthe quick\x1b[0m\nbrown");
  EXPECT_EQ(WrapText("\xC3\xA9\xC3\xA9\xC3\xA9 \xC3\xA9\xC3\xA9", 3),
            "\xC3\xA9\xC3\xA9\xC3\xA9\n\xC3\xA9\xC3\xA9");
  EXPECT_EQ(WrapText("a\r\nbb cc\r\n", 4), "a\r\nbb\ncc\r\n");
}

}  // namespace
}  // namespace telos::net
