// Byte-level negotiation of the options beyond the basics (CHARSET, TTYPE/MTTS, EOR, MSDP),
// each in both orders of offer: the server's greeting first, or the client asking unprompted.
#include <gtest/gtest.h>

#include "telos/net/mssp.h"
#include "telos/net/telnet_connection.h"

namespace telos::net {
namespace {

using namespace telnet;  // NOLINT

std::string Bytes(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s.push_back(static_cast<char>(b));
  return s;
}

std::string Sb(uint8_t option, std::string_view payload) {
  return EncodeSubnegotiation(option, payload);
}

std::string Neg(uint8_t verb, uint8_t option) {
  return EncodeNegotiation(verb, option);
}

class TelnetOptionsTest : public ::testing::Test {
 protected:
  TelnetConnection conn_{100, nullptr};
  std::string reply_;

  TelnetInput Send(const std::string& bytes) {
    reply_.clear();
    return conn_.Receive(bytes, reply_);
  }
  static std::string Request() {
    return Sb(kOptCharset, std::string("\x01;UTF-8;ISO-8859-1;US-ASCII"));
  }
};

// --- CHARSET

TEST_F(TelnetOptionsTest, GreetingOffersTheNewOptions) {
  const std::string greeting = conn_.Greeting();
  for (const uint8_t option : {kOptEor, kOptCharset, kOptMsdp}) {
    EXPECT_NE(greeting.find(Neg(kWill, option)), std::string::npos) << int(option);
  }
}

TEST_F(TelnetOptionsTest, CharsetServerOffersClientAcceptsUtf8) {
  conn_.Greeting();
  Send(Neg(kDo, kOptCharset));
  EXPECT_EQ(reply_, Request());
  auto in = Send(Sb(kOptCharset, "\x02UTF-8"));
  EXPECT_EQ(reply_, "");
  EXPECT_EQ(conn_.charset(), Charset::kUtf8);
  EXPECT_TRUE(in.terminal_type_changed);
  EXPECT_EQ(conn_.Text("caf\xC3\xA9\n"), "caf\xC3\xA9\r\n");
}

TEST_F(TelnetOptionsTest, CharsetServerOffersClientAcceptsLatin1) {
  conn_.Greeting();
  Send(Neg(kDo, kOptCharset));
  Send(Sb(kOptCharset, "\x02ISO-8859-1"));
  EXPECT_EQ(conn_.charset(), Charset::kLatin1);
  // Output: é is one byte, the em dash has none; ÿ (0xFF) is escaped as IAC IAC.
  EXPECT_EQ(conn_.Text("caf\xC3\xA9 \xE2\x80\x94 \xC3\xBF\n"), "caf\xE9 ? \xFF\xFF\r\n");
  EXPECT_EQ(conn_.Prompt("\xC3\xA9> "), Bytes({0xE9, '>', ' ', kIac, kGa}));
  // Input, a password included, reaches the game as UTF-8 rather than U+FFFD.
  conn_.Echo(false);
  auto in = Send("p\xE4ss\r\ncaf\xE9\r\n");
  ASSERT_EQ(in.lines.size(), 2u);
  EXPECT_EQ(in.lines[0].text, "p\xC3\xA4ss");
  EXPECT_EQ(in.lines[1].text, "caf\xC3\xA9");
}

TEST_F(TelnetOptionsTest, CharsetClientOffersFirst) {
  // No greeting yet: the client announces it will send a REQUEST, and does.
  Send(Neg(kWill, kOptCharset));
  EXPECT_EQ(reply_, Neg(kDo, kOptCharset));
  auto in = Send(Sb(kOptCharset, "\x01 latin1 UTF-8"));
  EXPECT_EQ(reply_, Sb(kOptCharset, "\x02latin1"));  // its own spelling, its first choice
  EXPECT_EQ(conn_.charset(), Charset::kLatin1);
  EXPECT_TRUE(in.terminal_type_changed);
  // A client asking for a set we cannot serve is refused and keeps UTF-8.
  TelnetConnection other(100, nullptr);
  std::string reply;
  other.Receive(Neg(kWill, kOptCharset) + Sb(kOptCharset, "\x01;KOI8-R;CP1251"), reply);
  EXPECT_EQ(reply, Neg(kDo, kOptCharset) + Sb(kOptCharset, "\x03"));
  EXPECT_EQ(other.charset(), Charset::kUtf8);
}

TEST_F(TelnetOptionsTest, CharsetClientDoBeforeGreetingIsAnsweredWithWillAndRequest) {
  Send(Neg(kDo, kOptCharset));
  EXPECT_EQ(reply_, Neg(kWill, kOptCharset) + Request());
}

TEST_F(TelnetOptionsTest, CharsetCrossingRequestsLetTheServersStand) {
  conn_.Greeting();
  Send(Neg(kDo, kOptCharset) + Neg(kWill, kOptCharset));
  EXPECT_EQ(reply_, Request() + Neg(kDo, kOptCharset));
  Send(Sb(kOptCharset, "\x01;ISO-8859-1"));
  EXPECT_EQ(reply_, Sb(kOptCharset, "\x03"));  // ours is outstanding
  Send(Sb(kOptCharset, "\x02UTF-8"));
  EXPECT_EQ(conn_.charset(), Charset::kUtf8);
}

TEST_F(TelnetOptionsTest, CharsetOurRequestIsForgottenWhenTheClientTurnsItOff) {
  conn_.Greeting();
  Send(Neg(kDo, kOptCharset));
  EXPECT_EQ(reply_, Request());
  Send(Neg(kDont, kOptCharset));
  EXPECT_EQ(reply_, Neg(kWont, kOptCharset));
  Send(Neg(kWill, kOptCharset) + Sb(kOptCharset, "\x01;ISO-8859-1"));
  EXPECT_EQ(reply_, Neg(kDo, kOptCharset) + Sb(kOptCharset, "\x02ISO-8859-1"));
  EXPECT_EQ(conn_.charset(), Charset::kLatin1);
}

TEST_F(TelnetOptionsTest, CharsetRefusedOrRejectedKeepsUtf8) {
  conn_.Greeting();
  Send(Neg(kDont, kOptCharset));
  EXPECT_EQ(reply_, "");
  EXPECT_EQ(conn_.charset(), Charset::kUtf8);
  TelnetConnection other(100, nullptr);
  std::string reply;
  other.Greeting();
  other.Receive(Neg(kDo, kOptCharset) + Sb(kOptCharset, "\x03"), reply);
  EXPECT_EQ(other.charset(), Charset::kUtf8);
}

TEST_F(TelnetOptionsTest, CharsetOddMessages) {
  conn_.Greeting();
  auto in = Send(Sb(kOptCharset, "\x02UTF-8"));  // CHARSET not on yet: ignored
  EXPECT_EQ(in.protocol_errors, 0u);
  Send(Neg(kDo, kOptCharset));
  in = Send(Sb(kOptCharset, "\x02KOI8-R"));  // a set we never offered
  EXPECT_EQ(in.protocol_errors, 1u);
  EXPECT_EQ(conn_.charset(), Charset::kUtf8);
  Send(Sb(kOptCharset, std::string("\x04\x01", 2)));  // TTABLE-IS: we keep no tables
  EXPECT_EQ(reply_, Sb(kOptCharset, "\x05"));
  in = Send(Sb(kOptCharset, ""));
  EXPECT_EQ(in.protocol_errors, 1u);
}

TEST_F(TelnetOptionsTest, MttsWithoutUtf8MeansLatin1UntilCharsetSaysOtherwise) {
  conn_.Greeting();
  Send(Neg(kWill, kOptTerminalType));
  Send(Sb(kOptTerminalType, std::string(1, '\0') + "TINTIN++"));
  Send(Sb(kOptTerminalType, std::string(1, '\0') + "XTERM"));
  Send(Sb(kOptTerminalType, std::string(1, '\0') + "MTTS 9"));  // ANSI, 256 colours, no UTF-8
  EXPECT_EQ(conn_.charset(), Charset::kLatin1);
  EXPECT_EQ(conn_.Text("\xC3\xA9\n"), "\xE9\r\n");
  Send(Neg(kDo, kOptCharset) + Sb(kOptCharset, "\x02UTF-8"));
  EXPECT_EQ(conn_.charset(), Charset::kUtf8);
}

TEST_F(TelnetOptionsTest, CharsetOutranksMttsThatComesLater) {
  conn_.Greeting();
  Send(Neg(kDo, kOptCharset) + Sb(kOptCharset, "\x02UTF-8"));
  Send(Neg(kWill, kOptTerminalType));
  Send(Sb(kOptTerminalType, std::string(1, '\0') + "X"));
  Send(Sb(kOptTerminalType, std::string(1, '\0') + "Y"));
  Send(Sb(kOptTerminalType, std::string(1, '\0') + "MTTS 1"));
  EXPECT_EQ(conn_.charset(), Charset::kUtf8);
}

// --- TTYPE and MTTS

TEST_F(TelnetOptionsTest, MttsCycleServerAsksFirst) {
  const std::string send = Sb(kOptTerminalType, std::string(1, char(kTtypeSend)));
  const auto is = [](std::string_view v) {
    return Sb(kOptTerminalType, std::string(1, char(kTtypeIs)) + std::string(v));
  };
  conn_.Greeting();
  Send(Neg(kWill, kOptTerminalType));
  EXPECT_EQ(reply_, send);
  Send(is("MUDLET"));
  EXPECT_EQ(reply_, send);
  Send(is("XTERM-256COLOR"));
  EXPECT_EQ(reply_, send);
  auto in = Send(is("MTTS 2893"));  // ANSI, UTF-8, 256, screen reader, truecolor, MNES, TLS
  EXPECT_EQ(reply_, "");            // the cycle is over
  EXPECT_TRUE(in.terminal_type_changed);
  const TerminalCapabilities& caps = conn_.capabilities();
  EXPECT_EQ(caps.client_name, "MUDLET");
  EXPECT_EQ(conn_.terminal_type(), "XTERM-256COLOR");
  EXPECT_TRUE(caps.Has(mtts::kScreenReader));
  EXPECT_EQ(conn_.colour_depth(), ColourDepth::kTruecolor);
  EXPECT_EQ(conn_.charset(), Charset::kUtf8);
}

TEST_F(TelnetOptionsTest, TtypeClientOffersFirstAndRepeats) {
  const std::string send = Sb(kOptTerminalType, std::string(1, char(kTtypeSend)));
  Send(Neg(kWill, kOptTerminalType));
  EXPECT_EQ(reply_, Neg(kDo, kOptTerminalType) + send);
  Send(Sb(kOptTerminalType, std::string(1, '\0') + "XTERM-256COLOR"));
  EXPECT_EQ(reply_, send);
  Send(Sb(kOptTerminalType, std::string(1, '\0') + "XTERM-256COLOR"));
  EXPECT_EQ(reply_, "");
  EXPECT_EQ(conn_.terminal_type(), "XTERM-256COLOR");
  EXPECT_EQ(conn_.colour_depth(), ColourDepth::k256);
  // A 24-bit colour from the game reaches this client as its nearest palette colour.
  EXPECT_EQ(conn_.Text("\x1b[38;2;255;0;0mred\n"), "\x1b[38;5;196mred\r\n");
}

TEST_F(TelnetOptionsTest, ColourDepthFollowsTheClientAndThePlayersChoice) {
  conn_.Greeting();
  EXPECT_EQ(conn_.colour_depth(), ColourDepth::k16);  // nothing said yet
  EXPECT_EQ(conn_.Text("\x1b[38;5;196mred\n"), "\x1b[91mred\r\n");
  Send(Neg(kWill, kOptTerminalType));
  Send(Sb(kOptTerminalType, std::string(1, '\0') + "BLIND"));
  Send(Sb(kOptTerminalType, std::string(1, '\0') + "DUMB"));
  Send(Sb(kOptTerminalType, std::string(1, '\0') + "MTTS 64"));  // a screen reader, no ANSI
  EXPECT_EQ(conn_.colour_depth(), ColourDepth::kNone);
  EXPECT_EQ(conn_.Text("\x1b[31mred\x1b[0m\n"), "red\r\n");
  conn_.SetColourDepthOverride(ColourDepth::k16);
  EXPECT_EQ(conn_.Text("\x1b[31mred\n"), "\x1b[31mred\r\n");
  conn_.SetColourDepthOverride(std::nullopt);
  EXPECT_EQ(conn_.colour_depth(), ColourDepth::kNone);
}

// --- Word wrap to the NAWS width

TEST_F(TelnetOptionsTest, TextIsWrappedToTheWindowButPromptsAreNot) {
  conn_.Greeting();
  const std::string line = "the quick brown fox jumps over the lazy dog\n";
  EXPECT_EQ(conn_.Text(line), "the quick brown fox jumps over the lazy dog\r\n");  // no NAWS
  Send(Neg(kWill, kOptWindowSize) + Sb(kOptWindowSize, std::string("\0\x14\0\x18", 4)));
  ASSERT_EQ(conn_.width(), 20);
  EXPECT_EQ(conn_.Text(line), "the quick brown fox\r\njumps over the lazy\r\ndog\r\n");
  EXPECT_EQ(conn_.Prompt("a prompt longer than twenty columns> "),
            "a prompt longer than twenty columns> " + Bytes({kIac, kGa}));
  conn_.SetWordWrap(false);
  EXPECT_EQ(conn_.Text(line), "the quick brown fox jumps over the lazy dog\r\n");
  conn_.SetWordWrap(true);
  // A width below the bound is not wrapped to.
  Send(Sb(kOptWindowSize, std::string("\0\x05\0\x18", 4)));
  EXPECT_EQ(conn_.Text(line), "the quick brown fox jumps over the lazy dog\r\n");
}

// --- EOR

TEST_F(TelnetOptionsTest, EorServerOffersFirst) {
  conn_.Greeting();
  EXPECT_EQ(conn_.Prompt("> "), Bytes({'>', ' ', kIac, kGa}));  // not agreed yet
  Send(Neg(kDo, kOptEor));
  EXPECT_EQ(reply_, "");
  EXPECT_TRUE(conn_.eor_enabled());
  EXPECT_EQ(conn_.Prompt("> "), Bytes({'>', ' ', kIac, kEor}));
  Send(Neg(kDont, kOptEor));
  EXPECT_EQ(reply_, Neg(kWont, kOptEor));  // a change of state is always acknowledged
  EXPECT_EQ(conn_.Prompt("> "), Bytes({'>', ' ', kIac, kGa}));
  Send(Neg(kDont, kOptEor));
  EXPECT_EQ(reply_, "");  // and a repeat never is
}

TEST_F(TelnetOptionsTest, EorClientAsksFirst) {
  Send(Neg(kDo, kOptEor));
  EXPECT_EQ(reply_, Neg(kWill, kOptEor));
  // EOR marks the prompt even when go-ahead is suppressed.
  Send(Neg(kDo, kOptSuppressGoAhead));
  EXPECT_EQ(conn_.Prompt("> "), Bytes({'>', ' ', kIac, kEor}));
  Send(Neg(kDont, kOptEor));
  EXPECT_EQ(reply_, Neg(kWont, kOptEor));
  EXPECT_EQ(conn_.Prompt("> "), "> ");
}

// --- MSDP

std::string Msdp(std::vector<MsdpVariable> vars) {
  return Sb(kOptMsdp, EncodeMsdp(vars));
}

MsdpValue S(std::string text) {
  return MsdpValue::String(std::move(text));
}

TEST_F(TelnetOptionsTest, MsdpServerOffersFirst) {
  conn_.Greeting();
  EXPECT_EQ(conn_.Gmcp("Char.Vitals", R"({"hp":30})"), "");  // neither GMCP nor MSDP on
  Send(Neg(kDo, kOptMsdp));
  EXPECT_EQ(reply_, "");
  EXPECT_TRUE(conn_.msdp_enabled());
  Send(Msdp({{"LIST", S("COMMANDS")}}));
  EXPECT_EQ(reply_, Msdp({{"COMMANDS", MsdpValue::Array({S("LIST"), S("REPORT"), S("RESET"),
                                                         S("SEND"), S("UNREPORT")})}}));
  Send(Msdp({{"REPORT", S("HEALTH")}}));
  EXPECT_EQ(reply_, "");  // no value yet
  // The game's GMCP package feeds MSDP, sent alone because GMCP is off.
  EXPECT_EQ(conn_.Gmcp("Char.Vitals", R"({"hp":30,"maxhp":40})"), Msdp({{"HEALTH", S("30")}}));
  EXPECT_EQ(conn_.Gmcp("Char.Vitals", R"({"hp":30,"maxhp":41})"), "");  // HEALTH unchanged
  Send(Msdp({{"UNREPORT", S("HEALTH")}}));
  EXPECT_EQ(conn_.Gmcp("Char.Vitals", R"({"hp":29})"), "");
}

TEST_F(TelnetOptionsTest, MsdpClientAsksFirstAlongsideGmcp) {
  Send(Neg(kDo, kOptMsdp));
  EXPECT_EQ(reply_, Neg(kWill, kOptMsdp));
  Send(Neg(kDo, kOptGmcp));
  Send(Msdp({{"REPORT", MsdpValue::Array({S("ROOM_NAME"), S("ROOM_VNUM")})}}));
  const std::string json = R"({"zone":"z","id":"atrium","name":"The Atrium","exits":{}})";
  EXPECT_EQ(conn_.Gmcp("Room.Info", json),
            Sb(kOptGmcp, "Room.Info " + json) +
                Msdp({{"ROOM_NAME", S("The Atrium")}, {"ROOM_VNUM", S("atrium")}}));
  Send(Msdp({{"SEND", S("ROOM_VNUM")}}));
  EXPECT_EQ(reply_, Msdp({{"ROOM_VNUM", S("atrium")}}));
}

TEST_F(TelnetOptionsTest, MsdpMalformedOrUnaskedIsNotAnswered) {
  conn_.Greeting();
  auto in = Send(Msdp({{"LIST", S("COMMANDS")}}));  // MSDP not agreed: ignored
  EXPECT_EQ(reply_, "");
  Send(Neg(kDo, kOptMsdp));
  in = Send(Sb(kOptMsdp, "\x01LIST\x02\x03"));  // a table never closed
  EXPECT_EQ(reply_, "");
  EXPECT_EQ(in.protocol_errors, 1u);
}

TEST_F(TelnetOptionsTest, MsdpToALatin1ClientIsLatin1) {
  conn_.Greeting();
  Send(Neg(kDo, kOptCharset) + Sb(kOptCharset, "\x02ISO-8859-1"));
  Send(Neg(kDo, kOptMsdp) + Msdp({{"REPORT", S("ROOM_NAME")}}));
  EXPECT_EQ(conn_.Gmcp("Room.Info", R"({"id":"c","name":"Caf\u00e9"})"),
            Msdp({{"ROOM_NAME", S("Caf\xE9")}}));
}

// --- GMCP: the Core package answered, Core.Supports honoured (gmcp.h), in both orders of offer

std::string Gmcp(std::string_view payload) {
  return Sb(kOptGmcp, payload);
}

TEST_F(TelnetOptionsTest, GmcpServerOffersMudletAnswersAndChoosesModules) {
  conn_.Greeting();
  Send(Neg(kDo, kOptGmcp));
  EXPECT_EQ(reply_, "");  // our WILL stands answered
  ASSERT_TRUE(conn_.gmcp_enabled());
  // What Mudlet sends at once: Hello, then the modules it wants.
  auto in = Send(Gmcp(R"(Core.Hello {"client":"Mudlet","version":"4.17.2"})") +
                 Gmcp(R"(Core.Supports.Set ["Char 1", "Char.Skills 1", "Room 1"])"));
  EXPECT_EQ(reply_, Gmcp(R"(Core.Hello {"name":"TelosMUD"})"));
  EXPECT_TRUE(in.terminal_type_changed);
  EXPECT_EQ(conn_.client_name(), "Mudlet");
  ASSERT_EQ(in.gmcp.size(), 2u);  // the game is told too
  EXPECT_EQ(in.gmcp[1].package, "Core.Supports.Set");
  EXPECT_EQ(conn_.Gmcp("Room.Info", R"({"num":1})"), Gmcp(R"(Room.Info {"num":1})"));
  EXPECT_EQ(conn_.Gmcp("Char.Vitals", R"({"hp":3})"), Gmcp(R"(Char.Vitals {"hp":3})"));
  EXPECT_EQ(conn_.Gmcp("Char.Items.List", R"({"location":"inv","items":[]})"), "");
  EXPECT_EQ(conn_.Gmcp("Comm.Channel.Text", R"({"talker":"Bob"})"), "");
  Send(Gmcp(R"(Core.Supports.Add ["Comm.Channel 1"])"));
  EXPECT_EQ(reply_, "");
  EXPECT_EQ(conn_.Gmcp("Comm.Channel.Text", R"({"talker":"Bob"})"),
            Gmcp(R"(Comm.Channel.Text {"talker":"Bob"})"));
  Send(Gmcp(R"(Core.Supports.Remove ["Room 1"])"));
  EXPECT_EQ(conn_.Gmcp("Room.Info", R"({"num":2})"), "");
  // Turned on again: the room the client missed is sent at once.
  Send(Gmcp(R"(Core.Supports.Add ["Room 1"])"));
  EXPECT_EQ(reply_, Gmcp(R"(Room.Info {"num":2})"));
  // Core.Ping is answered with an empty Core.Ping.
  Send(Gmcp("Core.Ping 85"));
  EXPECT_EQ(reply_, Gmcp("Core.Ping"));
}

TEST_F(TelnetOptionsTest, GmcpClientAsksFirstAndNeverChoosesGetsEverything) {
  Send(Neg(kDo, kOptGmcp));
  EXPECT_EQ(reply_, Neg(kWill, kOptGmcp));
  Send(Neg(kDo, kOptGmcp));  // a repeat is not answered
  EXPECT_EQ(reply_, "");
  for (const char* package :
       {"Char.Vitals", "Char.Items.Add", "Room.Players", "Comm.Channel.Text"}) {
    EXPECT_EQ(conn_.Gmcp(package, "{}"), Gmcp(std::string(package) + " {}")) << package;
  }
  Send(Gmcp("Core.Ping"));
  EXPECT_EQ(reply_, Gmcp("Core.Ping"));
}

TEST_F(TelnetOptionsTest, GmcpCoreIsNotAnsweredBeforeTheOptionIsOn) {
  conn_.Greeting();
  auto in = Send(Gmcp("Core.Ping"));
  EXPECT_EQ(reply_, "");
  EXPECT_TRUE(in.gmcp.empty());
}

TEST_F(TelnetOptionsTest, GmcpModulesNotChosenStillFeedMsdp) {
  conn_.Greeting();
  Send(Neg(kDo, kOptGmcp) + Neg(kDo, kOptMsdp));
  Send(Gmcp(R"(Core.Supports.Set ["Char 1"])"));
  Send(Msdp({{"REPORT", S("ROOM_VNUM")}}));
  // Room is not among the client's GMCP modules, but MSDP reported ROOM_VNUM.
  EXPECT_EQ(conn_.Gmcp("Room.Info", R"({"num":12,"id":"atrium"})"), Msdp({{"ROOM_VNUM", S("12")}}));
}

// --- MSSP (the variables themselves: mssp_test.cc and TelnetServerTest)

TEST(TelnetMsspTest, BothOrdersOfOfferSendTheVariablesOnce) {
  const auto provider = [] { return MsspVariables{{"NAME", "T"}}; };
  const std::string data = EncodeSubnegotiation(
      kOptMssp, std::string(1, char(kMsspVar)) + "NAME" + std::string(1, char(kMsspVal)) + "T");
  TelnetConnection offered(100, provider);
  std::string reply;
  offered.Greeting();
  offered.Receive(Neg(kDo, kOptMssp), reply);
  EXPECT_EQ(reply, data);
  reply.clear();
  offered.Receive(Neg(kDo, kOptMssp), reply);  // a repeat changes nothing
  EXPECT_EQ(reply, "");
  TelnetConnection asked(100, provider);
  reply.clear();
  asked.Receive(Neg(kDo, kOptMssp), reply);
  EXPECT_EQ(reply, Neg(kWill, kOptMssp) + data);
}

}  // namespace
}  // namespace telos::net
