#include "telos/base/utf8.h"

#include <gtest/gtest.h>

namespace telos {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

std::string Repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// The encoder from the definition, written apart from the code under test: every scalar value
// encoded this way must be accepted, and nothing else of that length may be.
std::string Encode(uint32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

TEST(Utf8Test, ValidTextIsKeptByteForByte) {
  const std::string text = "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x90\x89 plain";
  EXPECT_TRUE(IsValidUtf8(text));
  EXPECT_EQ(SanitizeUtf8(text), text);
}

TEST(Utf8Test, BoundaryCharactersAreValid) {
  for (const char* s : {"\x7F", "\xC2\x80", "\xDF\xBF", "\xE0\xA0\x80", "\xED\x9F\xBF",
                        "\xEE\x80\x80", "\xEF\xBF\xBF", "\xF0\x90\x80\x80", "\xF4\x8F\xBF\xBF"}) {
    EXPECT_TRUE(IsValidUtf8(s)) << s;
    EXPECT_EQ(Utf8SequenceLength(s, 0), std::string_view(s).size()) << s;
  }
}

TEST(Utf8Test, OverlongEncodingsAreReplaced) {
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));
  EXPECT_EQ(SanitizeUtf8("\xC0\xAF"), Repeat(kFffd, 2));  // C0 never leads; AF is stray
  EXPECT_EQ(SanitizeUtf8("\xC1\xBF"), Repeat(kFffd, 2));
  EXPECT_EQ(SanitizeUtf8("\xE0\x80\xAF"), Repeat(kFffd, 3));      // '/' in three bytes
  EXPECT_EQ(SanitizeUtf8("\xF0\x80\x80\xAF"), Repeat(kFffd, 4));  // '/' in four bytes
  EXPECT_EQ(SanitizeUtf8("\xF0\x8F\xBF\xBF"), Repeat(kFffd, 4));  // U+FFFF in four bytes
}

TEST(Utf8Test, SurrogatesAreReplaced) {
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));
  EXPECT_EQ(SanitizeUtf8("a\xED\xA0\x80z"), "a" + Repeat(kFffd, 3) + "z");  // U+D800
  EXPECT_EQ(SanitizeUtf8("\xED\xBF\xBF"), Repeat(kFffd, 3));                // U+DFFF
  // A surrogate pair as CESU-8 writes it is two invalid surrogates, not one character.
  EXPECT_EQ(SanitizeUtf8("\xED\xA0\xBD\xED\xB8\x80"), Repeat(kFffd, 6));
}

TEST(Utf8Test, CodePointsAboveTheLastAreReplaced) {
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));                  // U+110000
  EXPECT_EQ(SanitizeUtf8("\xF4\x90\x80\x80"), Repeat(kFffd, 4));  // F4 then three strays
  EXPECT_EQ(SanitizeUtf8("\xF5\x80\x80\x80"), Repeat(kFffd, 4));
  EXPECT_EQ(SanitizeUtf8("\xFF"), kFffd);
  EXPECT_EQ(SanitizeUtf8("\xFE\xFF"), Repeat(kFffd, 2));
}

TEST(Utf8Test, ATruncatedCharacterIsOneReplacement) {
  EXPECT_FALSE(IsValidUtf8("\xE2\x82"));
  EXPECT_EQ(SanitizeUtf8("\xE2\x82"), kFffd);
  EXPECT_EQ(SanitizeUtf8("euro \xE2\x82!"), "euro " + kFffd + "!");
  EXPECT_EQ(SanitizeUtf8("\xF0\x9F\x90"), kFffd);
  EXPECT_EQ(SanitizeUtf8("\xF0\x9F\x90\xF0\x9F\x90\x89"), kFffd + "\xF0\x9F\x90\x89");
  EXPECT_EQ(SanitizeUtf8("\xC3"), kFffd);
  EXPECT_EQ(SanitizeUtf8("\xC3(x"), kFffd + "(x");
  EXPECT_EQ(SanitizeUtf8("\x80\x80"), Repeat(kFffd, 2));  // each stray continuation alone
}

TEST(Utf8Test, ControlsAreKeptOrDroppedAsAsked) {
  const std::string text = std::string("a\0b", 3) + "\x1B[31m\x7F\xC2\x85\xC2\x9F\xC2\xA0z\t";
  EXPECT_EQ(SanitizeUtf8(text), text);
  // NUL, ESC, DEL, NEL and APC go; NO-BREAK SPACE (U+00A0, the first after C1) stays.
  EXPECT_EQ(SanitizeUtf8(text, Utf8Controls::kDrop), "ab[31m\xC2\xA0z");
  // Dropping never touches the validity rule: a bad byte is still one U+FFFD.
  EXPECT_EQ(SanitizeUtf8("\x07\xC3(", Utf8Controls::kDrop), kFffd + "(");
}

TEST(Utf8Test, AppendKeepsWhatWasThere) {
  std::string out = "head:";
  AppendSanitizedUtf8(out, "x\xFFy");
  EXPECT_EQ(out, "head:x" + kFffd + "y");
}

TEST(Utf8Test, EveryScalarValueIsAcceptedAndNothingElseOfItsLength) {
  for (uint32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    const std::string s = Encode(cp);
    ASSERT_EQ(Utf8SequenceLength(s, 0), s.size()) << std::hex << cp;
  }
  // Every two-byte string and every three-byte string with a three-byte lead: valid exactly
  // when the definition says so, and the repair of any of them is valid and stable.
  for (uint32_t a = 0; a < 256; ++a) {
    for (uint32_t b = 0; b < 256; ++b) {
      const std::string s{static_cast<char>(a), static_cast<char>(b)};
      const uint32_t cp = ((a & 0x1F) << 6) | (b & 0x3F);
      const bool two_byte = (a & 0xE0) == 0xC0 && (b & 0xC0) == 0x80 && cp >= 0x80;
      const bool two_ascii = a < 0x80 && b < 0x80;
      ASSERT_EQ(IsValidUtf8(s), two_byte || two_ascii) << std::hex << a << " " << b;
      const std::string fixed = SanitizeUtf8(s);
      ASSERT_TRUE(IsValidUtf8(fixed));
      ASSERT_EQ(SanitizeUtf8(fixed), fixed);
    }
  }
  for (uint32_t a = 0xE0; a <= 0xEF; ++a) {
    for (uint32_t b = 0x80; b < 0xC0; ++b) {
      for (uint32_t c = 0; c < 256; ++c) {
        const std::string s{static_cast<char>(a), static_cast<char>(b), static_cast<char>(c)};
        const uint32_t cp = ((a & 0x0F) << 12) | ((b & 0x3F) << 6) | (c & 0x3F);
        const bool valid = (c & 0xC0) == 0x80 && cp >= 0x800 && !(cp >= 0xD800 && cp <= 0xDFFF);
        ASSERT_EQ(IsValidUtf8(s), valid) << std::hex << a << " " << b << " " << c;
        ASSERT_TRUE(IsValidUtf8(SanitizeUtf8(s)));
      }
    }
  }
}

TEST(Utf8PrefixTest, CutsOnlyBetweenCharacters) {
  const std::string text =
      "ab\xE2\x82\xAC"
      "cd";  // "ab€cd": € is three bytes
  EXPECT_EQ(Utf8Prefix(text, 100), text);
  EXPECT_EQ(Utf8Prefix(text, 5), "ab\xE2\x82\xAC");
  for (size_t max : {2, 3, 4}) EXPECT_EQ(Utf8Prefix(text, max), "ab") << max;
  EXPECT_EQ(Utf8Prefix(text, 0), "");
  for (size_t max = 0; max <= text.size(); ++max) {
    EXPECT_TRUE(IsValidUtf8(Utf8Prefix(text, max))) << max;
  }
}

}  // namespace
}  // namespace telos
