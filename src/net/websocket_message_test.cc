#include "telos/net/websocket_message.h"

#include <gtest/gtest.h>

#include <string>

#include "telos/base/limits.h"

namespace telos::net {
namespace {

using Kind = ClientMessage::Kind;

TEST(WebSocketMessageTest, InputKeepsTheWholeTextForTheTerminalToSplit) {
  ClientMessage m = DecodeClientMessage(R"({"type":"input","text":"look\nsay hi"})");
  EXPECT_EQ(m.kind, Kind::kInput);
  EXPECT_EQ(m.text, "look\nsay hi");
}

TEST(WebSocketMessageTest, GmcpSanitizesThePackageAndReserializesTheBody) {
  ClientMessage m =
      DecodeClientMessage(R"({"type":"gmcp","package":"Core.\u0007Hello","data":{"a": [1, 2]}})");
  EXPECT_EQ(m.kind, Kind::kGmcp);
  EXPECT_EQ(m.package, "Core.Hello");
  EXPECT_EQ(m.data, R"({"a":[1,2]})");
  EXPECT_EQ(DecodeClientMessage(R"({"type":"gmcp","package":"Core.Ping"})").data, "");
}

TEST(WebSocketMessageTest, GmcpPackageMustBeNonEmptyAndShort) {
  EXPECT_EQ(DecodeClientMessage(R"({"type":"gmcp","package":""})").kind, Kind::kIgnored);
  const std::string longest(limits::kGmcpPackageBytesMax, 'a');
  EXPECT_EQ(DecodeClientMessage(R"({"type":"gmcp","package":")" + longest + "\"}").kind,
            Kind::kGmcp);
  EXPECT_EQ(DecodeClientMessage(R"({"type":"gmcp","package":")" + longest + "a\"}").kind,
            Kind::kIgnored);
}

TEST(WebSocketMessageTest, NawsIsClampedAndZeroWhenUnknown) {
  ClientMessage m = DecodeClientMessage(R"({"type":"naws","width":80.7,"height":1e9})");
  EXPECT_EQ(m.kind, Kind::kResize);
  EXPECT_EQ(m.width, 80);
  EXPECT_EQ(m.height, kClientWindowDimensionMax);
  m = DecodeClientMessage(R"({"type":"naws","width":-3,"height":"24"})");
  EXPECT_EQ(m.kind, Kind::kResize);
  EXPECT_EQ(m.width, 0);
  EXPECT_EQ(m.height, 0);
}

TEST(WebSocketMessageTest, AnythingElseIsIgnored) {
  for (const char* frame : {"", "look", "[1,2]", "{\"type\":7}", R"({"type":"input"})",
                            R"({"type":"input","text":1})", R"({"type":"shout","text":"hi"})",
                            R"({"type":"gmcp","package":5})", "{\"type\":\"input\""}) {
    EXPECT_EQ(DecodeClientMessage(frame).kind, Kind::kIgnored) << frame;
  }
}

TEST(WebSocketMessageTest, NestingBeyondTheLimitIsIgnored) {
  auto nested = [](int depth) {
    std::string data(static_cast<size_t>(depth), '[');
    data += std::string(static_cast<size_t>(depth), ']');
    return R"({"type":"gmcp","package":"P","data":)" + data + "}";
  };
  EXPECT_EQ(DecodeClientMessage(nested(kClientMessageJsonDepthMax - 1)).kind, Kind::kGmcp);
  EXPECT_EQ(DecodeClientMessage(nested(kClientMessageJsonDepthMax)).kind, Kind::kIgnored);
}

}  // namespace
}  // namespace telos::net
