#include "telos/net/telnet_connection.h"

#include <gtest/gtest.h>
#include <zlib.h>

namespace telos::net {
namespace {

using namespace telnet;  // NOLINT

std::string Bytes(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s.push_back(static_cast<char>(b));
  return s;
}

class TelnetConnectionTest : public ::testing::Test {
 protected:
  TelnetConnection conn_{100, [] {
                           return std::vector<std::pair<std::string, std::string>>{
                               {"NAME", "TelosMUD"}, {"PLAYERS", "3"}};
                         }};
  std::string reply_;

  TelnetInput Send(const std::string& bytes) {
    reply_.clear();
    return conn_.Receive(bytes, reply_);
  }
};

TEST_F(TelnetConnectionTest, GreetingOffersAndAsks) {
  EXPECT_EQ(conn_.Greeting(), Bytes({kIac, kWill, kOptGmcp,       kIac, kWill, kOptMssp,
                                     kIac, kWill, kOptMccp2,      kIac, kWill, kOptEor,
                                     kIac, kWill, kOptCharset,    kIac, kWill, kOptMsdp,
                                     kIac, kDo,   kOptWindowSize, kIac, kDo,   kOptTerminalType}));
}

TEST_F(TelnetConnectionTest, AnswersToOurOffersAreNotEchoedBack) {
  conn_.Greeting();
  Send(Bytes({kIac, kDo, kOptGmcp}));
  EXPECT_EQ(reply_, "");
  EXPECT_TRUE(conn_.gmcp_enabled());
  // A repeated DO changes nothing and gets no answer (no negotiation loop).
  Send(Bytes({kIac, kDo, kOptGmcp}));
  EXPECT_EQ(reply_, "");
}

TEST_F(TelnetConnectionTest, UnsupportedOptionsAreRefused) {
  Send(Bytes({kIac, kDo, 44, kIac, kWill, 34}));  // COM-PORT, LINEMODE
  EXPECT_EQ(reply_, Bytes({kIac, kWont, 44, kIac, kDont, 34}));
}

TEST_F(TelnetConnectionTest, UnaskedDoForSupportedOptionIsAccepted) {
  Send(Bytes({kIac, kDo, kOptGmcp}));
  EXPECT_EQ(reply_, Bytes({kIac, kWill, kOptGmcp}));
  Send(Bytes({kIac, kDont, kOptGmcp}));
  EXPECT_EQ(reply_, Bytes({kIac, kWont, kOptGmcp}));
  EXPECT_FALSE(conn_.gmcp_enabled());
}

TEST_F(TelnetConnectionTest, NawsReportsTheWindow) {
  conn_.Greeting();
  auto in = Send(
      Bytes({kIac, kWill, kOptWindowSize, kIac, kSb, kOptWindowSize, 0, 132, 0, 50, kIac, kSe}));
  EXPECT_EQ(reply_, "");
  EXPECT_TRUE(in.window_size_changed);
  EXPECT_EQ(conn_.width(), 132);
  EXPECT_EQ(conn_.height(), 50);
  // A width of 255 arrives escaped.
  in = Send(Bytes({kIac, kSb, kOptWindowSize, 0, 255, 255, 0, 40, kIac, kSe}));
  EXPECT_EQ(conn_.width(), 255);
  EXPECT_EQ(conn_.height(), 40);
}

TEST_F(TelnetConnectionTest, TerminalTypeIsRequestedAndRecorded) {
  conn_.Greeting();
  Send(Bytes({kIac, kWill, kOptTerminalType}));
  EXPECT_EQ(reply_, Bytes({kIac, kSb, kOptTerminalType, kTtypeSend, kIac, kSe}));
  auto in =
      Send(Bytes({kIac, kSb, kOptTerminalType, kTtypeIs, 'M', 'U', 'D', 'L', 'E', 'T', kIac, kSe}));
  EXPECT_TRUE(in.terminal_type_changed);
  EXPECT_EQ(conn_.terminal_type(), "MUDLET");
}

TEST_F(TelnetConnectionTest, MsspIsSentWhenAsked) {
  conn_.Greeting();
  Send(Bytes({kIac, kDo, kOptMssp}));
  EXPECT_EQ(reply_,
            Bytes({kIac, kSb, kOptMssp, kMsspVar, 'N', 'A',      'M', 'E',      kMsspVal, 'T',
                   'e',  'l', 'o',      's',      'M', 'U',      'D', kMsspVar, 'P',      'L',
                   'A',  'Y', 'E',      'R',      'S', kMsspVal, '3', kIac,     kSe}));
}

TEST_F(TelnetConnectionTest, GmcpInAndOut) {
  EXPECT_EQ(conn_.Gmcp("Char.Vitals", "{}"), "");  // not enabled yet
  conn_.Greeting();
  Send(Bytes({kIac, kDo, kOptGmcp}));
  std::string hello = Bytes({kIac, kSb, kOptGmcp});
  hello += "Core.Hello {\"client\":\"Mudlet\"}";
  hello += Bytes({kIac, kSe});
  auto in = Send(hello);
  ASSERT_EQ(in.gmcp.size(), 1u);
  EXPECT_EQ(in.gmcp[0].package, "Core.Hello");
  EXPECT_EQ(in.gmcp[0].json, "{\"client\":\"Mudlet\"}");
  std::string expected = Bytes({kIac, kSb, kOptGmcp});
  expected += "Char.Vitals {\"hp\":5}";
  expected += Bytes({kIac, kSe});
  EXPECT_EQ(conn_.Gmcp("Char.Vitals", "{\"hp\":5}"), expected);
  // A malformed package name counts as a protocol error and yields nothing.
  std::string bad = Bytes({kIac, kSb, kOptGmcp});
  bad += "Bad<Name> {}";
  bad += Bytes({kIac, kSe});
  in = Send(bad);
  EXPECT_TRUE(in.gmcp.empty());
  EXPECT_EQ(in.protocol_errors, 1u);
}

std::string Inflate(z_stream& zs, const std::string& in) {
  std::string out;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  char buf[4096];
  do {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    const int rc = inflate(&zs, Z_SYNC_FLUSH);
    EXPECT_TRUE(rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR) << rc;
    out.append(buf, sizeof buf - zs.avail_out);
  } while (zs.avail_out == 0);
  return out;
}

TEST_F(TelnetConnectionTest, Mccp2CompressesEverythingAfterItsMarker) {
  conn_.Greeting();
  Send(Bytes({kIac, kDo, kOptMccp2}));
  EXPECT_EQ(reply_, Bytes({kIac, kSb, kOptMccp2, kIac, kSe}));
  EXPECT_TRUE(conn_.compressing());
  z_stream zs{};
  ASSERT_EQ(inflateInit(&zs), Z_OK);
  const std::string wire1 = conn_.Text("You are standing in the atrium.\n");
  EXPECT_EQ(Inflate(zs, wire1), "You are standing in the atrium.\r\n");
  const std::string wire2 = conn_.Prompt("> ");
  EXPECT_EQ(Inflate(zs, wire2), Bytes({'>', ' ', kIac, kGa}));
  // Turning it off ends the stream; later text is plain again.
  Send(Bytes({kIac, kDont, kOptMccp2}));
  EXPECT_FALSE(conn_.compressing());
  Inflate(zs, reply_);
  EXPECT_EQ(conn_.Text("plain\n"), "plain\r\n");
  inflateEnd(&zs);
}

TEST_F(TelnetConnectionTest, EchoHidesAndRestoresPasswordInput) {
  EXPECT_EQ(conn_.Echo(false), Bytes({kIac, kWill, kOptEcho}));
  Send(Bytes({kIac, kDo, kOptEcho}));
  EXPECT_EQ(reply_, "");  // the client agreed to our request
  EXPECT_EQ(conn_.Echo(true), Bytes({kIac, kWont, kOptEcho}));
  Send(Bytes({kIac, kDont, kOptEcho}));
  EXPECT_EQ(reply_, "");
  // Outside password entry an unprompted DO ECHO is refused.
  Send(Bytes({kIac, kDo, kOptEcho}));
  EXPECT_EQ(reply_, Bytes({kIac, kWont, kOptEcho}));
}

TEST_F(TelnetConnectionTest, LinesComeThroughAroundNegotiation) {
  conn_.Greeting();
  auto in = Send(Bytes(
      {'l', 'o', kIac, kDo, kOptGmcp, 'o', 'k', '\r', '\n', 's', 'a', 'y', ' ', 255, 255, '\n'}));
  ASSERT_EQ(in.lines.size(), 2u);
  EXPECT_EQ(in.lines[0].text, "look");
  EXPECT_EQ(in.lines[1].text, "say \xEF\xBF\xBD");  // a lone 0xFF byte is not UTF-8
}

}  // namespace
}  // namespace telos::net
