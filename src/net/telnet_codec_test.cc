#include "telos/net/telnet_codec.h"

#include <gtest/gtest.h>

#include "telos/base/limits.h"

namespace telos::net::telnet {
namespace {

std::string Bytes(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s.push_back(static_cast<char>(b));
  return s;
}

using Kind = TelnetEvent::Kind;

std::vector<TelnetEvent> Decode(const std::string& input) {
  TelnetDecoder d;
  std::vector<TelnetEvent> out;
  d.Feed(input, out);
  return out;
}

TEST(TelnetDecoderTest, PlainDataIsOneEvent) {
  auto events = Decode("look\r\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0], (TelnetEvent{Kind::kData, 0, 0, "look\r\n"}));
}

TEST(TelnetDecoderTest, EscapedIacIsData) {
  auto events = Decode(Bytes({'a', kIac, kIac, 'b'}));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].bytes, Bytes({'a', 255, 'b'}));
}

TEST(TelnetDecoderTest, NegotiationsAndCommandsSplitTheData) {
  auto events = Decode(Bytes({'h', kIac, kWill, kOptWindowSize, 'i', kIac, kNop, kIac, kDont, 99}));
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[0], (TelnetEvent{Kind::kData, 0, 0, "h"}));
  EXPECT_EQ(events[1], (TelnetEvent{Kind::kNegotiation, kWill, kOptWindowSize, ""}));
  EXPECT_EQ(events[2], (TelnetEvent{Kind::kData, 0, 0, "i"}));
  EXPECT_EQ(events[3], (TelnetEvent{Kind::kCommand, kNop, 0, ""}));
  EXPECT_EQ(events[4], (TelnetEvent{Kind::kNegotiation, kDont, 99, ""}));
}

TEST(TelnetDecoderTest, SubnegotiationWithEscapedIac) {
  auto events = Decode(Bytes({kIac, kSb, kOptWindowSize, 0, 80, kIac, kIac, 24, kIac, kSe, 'x'}));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0],
            (TelnetEvent{Kind::kSubnegotiation, kSb, kOptWindowSize, Bytes({0, 80, 255, 24})}));
  EXPECT_EQ(events[1].bytes, "x");
}

TEST(TelnetDecoderTest, EverySplitPointGivesTheSameEvents) {
  const std::string input =
      Bytes({'a', kIac, kIac, kIac, kDo,  kOptGmcp, kIac, kSb, kOptGmcp, 'C',
             'o', 'r',  'e',  kIac, kIac, kIac,     kSe,  'z', kIac,     kGa});
  const auto whole = Decode(input);
  for (size_t cut = 0; cut <= input.size(); ++cut) {
    TelnetDecoder d;
    std::vector<TelnetEvent> out;
    d.Feed(input.substr(0, cut), out);
    d.Feed(input.substr(cut), out);
    // Data events may be split at the cut; join neighbours before comparing.
    std::vector<TelnetEvent> joined;
    for (auto& e : out) {
      if (!joined.empty() && e.kind == Kind::kData && joined.back().kind == Kind::kData) {
        joined.back().bytes += e.bytes;
      } else {
        joined.push_back(e);
      }
    }
    EXPECT_EQ(joined, whole) << "cut at " << cut;
  }
}

TEST(TelnetDecoderTest, OversizedSubnegotiationIsDroppedAndReported) {
  std::string input = Bytes({kIac, kSb, kOptGmcp});
  input += std::string(telos::limits::kTelnetSubnegotiationBytesMax + 100, 'x');
  input += Bytes({kIac, kSe, 'o', 'k'});
  auto events = Decode(input);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0], (TelnetEvent{Kind::kOverflow, 0, kOptGmcp, ""}));
  EXPECT_EQ(events[1].bytes, "ok");
}

TEST(TelnetDecoderTest, IacCommandInsideSubnegotiationEndsIt) {
  auto events = Decode(Bytes({kIac, kSb, kOptTerminalType, 0, 'v', 't', kIac, kWill, 1}));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, Kind::kSubnegotiation);
  EXPECT_EQ(events[0].bytes, Bytes({0, 'v', 't'}));
  EXPECT_EQ(events[1], (TelnetEvent{Kind::kNegotiation, kWill, 1, ""}));
}

TEST(TelnetEncodeTest, EncodersEscape) {
  EXPECT_EQ(EncodeNegotiation(kWill, kOptGmcp), Bytes({kIac, kWill, kOptGmcp}));
  EXPECT_EQ(EncodeSubnegotiation(kOptGmcp, Bytes({'a', 255})),
            Bytes({kIac, kSb, kOptGmcp, 'a', 255, 255, kIac, kSe}));
  EXPECT_EQ(EncodeText("one\ntwo\r\nthree"), "one\r\ntwo\r\nthree");
  EXPECT_EQ(EncodeText(Bytes({255})), Bytes({255, 255}));
  EXPECT_EQ(EncodeText("\nstart"), "\r\nstart");
  EXPECT_EQ(EncodeText("a\n\nb\n"), "a\r\n\r\nb\r\n");
  EXPECT_EQ(EncodeText("x" + Bytes({255, 255}) + "y\r\n"),
            "x" + Bytes({255, 255, 255, 255}) + "y\r\n");
  EXPECT_EQ(EncodeText(""), "");
}

}  // namespace
}  // namespace telos::net::telnet
