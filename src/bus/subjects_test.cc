// ValidSubject and SubjectToken.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "telos/bus/bus.h"

namespace telos::bus {
namespace {

TEST(ValidSubject, AcceptsDottedTokens) {
  EXPECT_TRUE(ValidSubject("a", false));
  EXPECT_TRUE(ValidSubject("world.town.say", false));
  EXPECT_TRUE(ValidSubject("_INBOX.c1.42", false));
  EXPECT_TRUE(ValidSubject("p.caf\xC3\xA9", false));  // UTF-8 bytes are not control characters
  EXPECT_TRUE(ValidSubject("A-b_c$d", false));
}

TEST(ValidSubject, RefusesEmptyTokensWhitespaceAndControls) {
  EXPECT_FALSE(ValidSubject("", true));
  EXPECT_FALSE(ValidSubject(".", true));
  EXPECT_FALSE(ValidSubject("a.", true));
  EXPECT_FALSE(ValidSubject(".a", true));
  EXPECT_FALSE(ValidSubject("a..b", true));
  EXPECT_FALSE(ValidSubject("a b", true));
  EXPECT_FALSE(ValidSubject("a\tb", true));
  EXPECT_FALSE(ValidSubject("a\nb", true));
  EXPECT_FALSE(ValidSubject(std::string("a\0b", 3), true));
  EXPECT_FALSE(ValidSubject("a\x7f", true));
  EXPECT_FALSE(ValidSubject("a\r", true));
}

TEST(ValidSubject, WildcardsOnlyAsWholeTokensAndWhenAllowed) {
  EXPECT_TRUE(ValidSubject("*", true));
  EXPECT_TRUE(ValidSubject(">", true));
  EXPECT_TRUE(ValidSubject("a.*.c", true));
  EXPECT_TRUE(ValidSubject("a.*.>", true));
  EXPECT_TRUE(ValidSubject("*.*", true));
  EXPECT_FALSE(ValidSubject("a.>.c", true));  // '>' only last
  EXPECT_FALSE(ValidSubject("a.b*", true));
  EXPECT_FALSE(ValidSubject("a.*b", true));
  EXPECT_FALSE(ValidSubject("a.b>", true));
  EXPECT_FALSE(ValidSubject("a.>>", true));
  EXPECT_FALSE(ValidSubject("a.*", false));
  EXPECT_FALSE(ValidSubject("a.>", false));
  EXPECT_FALSE(ValidSubject("a*b", false));
}

TEST(ValidSubject, LengthIsBounded) {
  EXPECT_TRUE(ValidSubject(std::string(kSubjectBytesMax, 'a'), false));
  EXPECT_FALSE(ValidSubject(std::string(kSubjectBytesMax + 1, 'a'), false));
}

TEST(SubjectMatches, LiteralsStarsAndTails) {
  EXPECT_TRUE(SubjectMatches("events.boss", "events.boss"));
  EXPECT_FALSE(SubjectMatches("events.boss", "events.boss.kill"));
  EXPECT_FALSE(SubjectMatches("events.boss.kill", "events.boss"));
  EXPECT_FALSE(SubjectMatches("events.boss", "events.bos"));
  EXPECT_TRUE(SubjectMatches("events.*.kill", "events.boss.kill"));
  EXPECT_FALSE(SubjectMatches("events.*.kill", "events.boss.first.kill"));
  EXPECT_TRUE(SubjectMatches("events.>", "events.boss"));
  EXPECT_TRUE(SubjectMatches("events.>", "events.boss.kill"));
  EXPECT_FALSE(SubjectMatches("events.>", "events"));
  EXPECT_FALSE(SubjectMatches("events.>", "records.boss"));
  EXPECT_TRUE(SubjectMatches(">", "anything.at.all"));
  EXPECT_TRUE(SubjectMatches("*", "one"));
  EXPECT_FALSE(SubjectMatches("*", "one.two"));
}

TEST(SubjectToken, KeepsLowercaseLettersAndDigits) {
  EXPECT_EQ(SubjectToken("gandalf42"), "gandalf42");
  EXPECT_EQ(SubjectToken("a"), "a");
}

TEST(SubjectToken, EscapesEverythingElseAsHex) {
  EXPECT_EQ(SubjectToken("A"), "_41");
  EXPECT_EQ(SubjectToken("a.b"), "a_2eb");
  EXPECT_EQ(SubjectToken("*"), "_2a");
  EXPECT_EQ(SubjectToken(">"), "_3e");
  EXPECT_EQ(SubjectToken("_"), "_5f");
  EXPECT_EQ(SubjectToken(" "), "_20");
  EXPECT_EQ(SubjectToken("\xC3\xA9"), "_c3_a9");
  EXPECT_EQ(SubjectToken(std::string(1, '\0')), "_00");
  EXPECT_EQ(SubjectToken(""), "_");
}

TEST(SubjectToken, IsInjective) {
  // Pairs that a careless escape would merge.
  EXPECT_NE(SubjectToken("A"), SubjectToken("a"));
  EXPECT_NE(SubjectToken("_41"), SubjectToken("A"));
  EXPECT_NE(SubjectToken("a.b"), SubjectToken("a_2eb"));
  EXPECT_NE(SubjectToken(""), SubjectToken("_"));
  // Every string of up to two bytes from a mixed alphabet maps to a distinct token.
  const std::string alphabet = std::string("aZ0._*> \x01\xff", 10) + std::string(1, '\0');
  std::set<std::string> inputs;
  std::set<std::string> tokens;
  inputs.insert("");
  for (char x : alphabet) {
    inputs.insert(std::string(1, x));
    for (char y : alphabet) inputs.insert(std::string{x, y});
  }
  for (const std::string& in : inputs) tokens.insert(SubjectToken(in));
  EXPECT_EQ(tokens.size(), inputs.size());
}

TEST(SubjectToken, OutputIsAlwaysExactlyOneValidToken) {
  for (int b = 0; b < 256; ++b) {
    const std::string text = "x" + std::string(1, static_cast<char>(b)) + "y";
    const std::string token = SubjectToken(text);
    EXPECT_TRUE(ValidSubject(token, /*allow_wildcards=*/false)) << b;
    EXPECT_EQ(token.find('.'), std::string::npos) << b;
    // Embedded in a subject it stays one token.
    EXPECT_TRUE(ValidSubject("tell." + token + ".in", false)) << b;
  }
  for (const char* hostile : {"", ".", "..", "*", ">", "a.>", "a b", "\n", "Ωmega", "a.*.b"}) {
    const std::string token = SubjectToken(hostile);
    EXPECT_TRUE(ValidSubject(token, false)) << hostile;
    EXPECT_EQ(token.find('.'), std::string::npos) << hostile;
  }
}

}  // namespace
}  // namespace telos::bus
