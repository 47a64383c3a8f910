#include "telos/net/charset.h"

#include <gtest/gtest.h>

#include "telos/base/limits.h"

namespace telos::net {
namespace {

using namespace telnet;  // NOLINT

TEST(CharsetTest, NamesAndAliases) {
  EXPECT_EQ(CharsetByName("utf-8"), Charset::kUtf8);
  EXPECT_EQ(CharsetByName("Latin1"), Charset::kLatin1);
  EXPECT_EQ(CharsetByName("ISO_8859-1"), Charset::kLatin1);
  EXPECT_EQ(CharsetByName("US-ASCII"), Charset::kAscii);
  EXPECT_EQ(CharsetByName("KOI8-R"), std::nullopt);
  EXPECT_EQ(CharsetByName(""), std::nullopt);
  EXPECT_EQ(CharsetName(Charset::kLatin1), "ISO-8859-1");
}

TEST(CharsetTest, DecodesRequestsWithAnySeparatorAndTtableVersion) {
  const std::string plain = std::string(1, char(kCharsetRequest)) + ";UTF-8;ISO-8859-1";
  EXPECT_EQ(DecodeCharset(plain),
            (CharsetMessage{CharsetMessage::Kind::kRequest, {"UTF-8", "ISO-8859-1"}}));
  const std::string spaced = std::string(1, char(kCharsetRequest)) + " LATIN1  UTF-8";
  EXPECT_EQ(DecodeCharset(spaced).names, (std::vector<std::string>{"LATIN1", "UTF-8"}));
  const std::string ttable =
      std::string(1, char(kCharsetRequest)) + "[TTABLE]" + std::string(1, '\x01') + ";US-ASCII";
  EXPECT_EQ(DecodeCharset(ttable).names, (std::vector<std::string>{"US-ASCII"}));
}

TEST(CharsetTest, MalformedMessagesDecodeAsMalformed) {
  EXPECT_EQ(DecodeCharset("").kind, CharsetMessage::Kind::kMalformed);
  EXPECT_EQ(DecodeCharset(std::string(1, char(kCharsetRequest))).kind,
            CharsetMessage::Kind::kMalformed);
  EXPECT_EQ(DecodeCharset(std::string(1, char(kCharsetRequest)) + ";;;").kind,
            CharsetMessage::Kind::kMalformed);
  EXPECT_EQ(DecodeCharset(std::string(1, char(kCharsetAccepted))).kind,
            CharsetMessage::Kind::kMalformed);
  EXPECT_EQ(DecodeCharset("\x09zz").kind, CharsetMessage::Kind::kMalformed);
  // Found by charset_fuzz: names of control bytes alone are no names.
  const std::string controls = std::string("\x01;", 2) + std::string(3, '\0') + ";\x7f";
  EXPECT_EQ(DecodeCharset(controls).kind, CharsetMessage::Kind::kMalformed);
}

TEST(CharsetTest, RequestsAreBounded) {
  std::string many(1, char(kCharsetRequest));
  for (int i = 0; i < 100; ++i) many += ";" + std::string(100, 'A');
  const CharsetMessage msg = DecodeCharset(many);
  EXPECT_EQ(msg.names.size(), limits::kCharsetNamesMax);
  EXPECT_EQ(msg.names[0].size(), limits::kCharsetNameBytesMax);
}

TEST(CharsetTest, EncodesReplies) {
  EXPECT_EQ(EncodeCharsetRequest({"UTF-8", "ISO-8859-1"}), "\x01;UTF-8;ISO-8859-1");
  EXPECT_EQ(EncodeCharsetAccepted("UTF-8"), "\x02UTF-8");
  EXPECT_EQ(EncodeCharsetRejected(), "\x03");
  EXPECT_EQ(EncodeCharsetTtableRejected(), "\x05");
}

TEST(CharsetTest, Latin1OutputKeepsWhatItCanAndMarksTheRest) {
  // é is U+00E9; the em dash and the emoji have no Latin-1 byte.
  EXPECT_EQ(ToClientCharset("caf\xC3\xA9 \xE2\x80\x94 \xF0\x9F\x98\x80!", Charset::kLatin1),
            "caf\xE9 ? ?!");
  EXPECT_EQ(ToClientCharset("\xC3\xBF", Charset::kLatin1), "\xFF");  // U+00FF
  EXPECT_EQ(ToClientCharset("bad \xC3 byte", Charset::kLatin1), "bad ? byte");
  EXPECT_EQ(ToClientCharset("caf\xC3\xA9", Charset::kAscii), "caf?");
  EXPECT_EQ(ToClientCharset("caf\xC3\xA9", Charset::kUtf8), "caf\xC3\xA9");
}

TEST(CharsetTest, Latin1InputBecomesUtf8) {
  EXPECT_EQ(FromClientCharset("caf\xE9 \xFF\x80", Charset::kLatin1),
            "caf\xC3\xA9 \xC3\xBF\xC2\x80");
  EXPECT_EQ(FromClientCharset("caf\xE9", Charset::kUtf8), "caf\xE9");  // repaired later
  // Every Latin-1 byte comes back from the round trip.
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  EXPECT_EQ(ToClientCharset(FromClientCharset(all, Charset::kLatin1), Charset::kLatin1), all);
}

}  // namespace
}  // namespace telos::net
