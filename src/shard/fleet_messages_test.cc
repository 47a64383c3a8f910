#include "telos/shard/fleet_messages.h"

#include <gtest/gtest.h>

namespace telos::shard {
namespace {

using Kind = PlayerMessage::Kind;

TEST(FleetMessagesTest, TellAndMailOnAPlayerSubject) {
  PlayerMessage tell = DecodePlayerMessage(R"({"kind":"tell","from":"Alice","text":"hi there"})");
  EXPECT_EQ(tell.kind, Kind::kTell);
  EXPECT_EQ(tell.from, "Alice");
  EXPECT_EQ(tell.text, "hi there");
  PlayerMessage mail = DecodePlayerMessage(R"({"kind":"mail","from":"Bob","text":"ignored"})");
  EXPECT_EQ(mail.kind, Kind::kMail);
  EXPECT_EQ(mail.from, "Bob");
  EXPECT_EQ(mail.text, "");
}

TEST(FleetMessagesTest, StrayPublishersReadAsNothing) {
  for (const char* data : {"", "tell", "[]", "{\"kind\":1}", R"({"kind":"TELL","from":"A"})",
                           R"({"kind":"shout","from":"A"})", R"({"kind":"tell")"}) {
    PlayerMessage m = DecodePlayerMessage(data);
    EXPECT_EQ(m.kind, Kind::kUnknown) << data;
    EXPECT_EQ(m.from, "") << data;
  }
  // A field of the wrong type is empty, the rest still reads.
  PlayerMessage m = DecodePlayerMessage(R"({"kind":"tell","from":{"x":1},"text":"hello"})");
  EXPECT_EQ(m.kind, Kind::kTell);
  EXPECT_EQ(m.from, "");
  EXPECT_EQ(m.text, "hello");
}

TEST(FleetMessagesTest, TellReplyIsDeliveredOnlyWhenItSaysSo) {
  TellReply r = DecodeTellReply(R"({"outcome":"delivered","name":"Alice"})");
  EXPECT_TRUE(r.delivered);
  EXPECT_EQ(r.name, "Alice");
  EXPECT_FALSE(DecodeTellReply(R"({"outcome":"unavailable","name":"Alice"})").delivered);
  EXPECT_FALSE(DecodeTellReply(R"({"outcome":true})").delivered);
  EXPECT_FALSE(DecodeTellReply("not json").delivered);
  EXPECT_EQ(DecodeTellReply(R"({"outcome":"delivered"})").name, "");
}

TEST(FleetMessagesTest, ChannelLine) {
  ChannelLine line =
      DecodeChannelLine(R"({"origin":"w1","channel":"gossip","from":"Alice","text":"hello"})");
  EXPECT_EQ(line.origin, "w1");
  EXPECT_EQ(line.channel, "gossip");
  EXPECT_EQ(line.from, "Alice");
  EXPECT_EQ(line.text, "hello");
  ChannelLine stray = DecodeChannelLine(R"({"channel":["gossip"],"text":"x"})");
  EXPECT_EQ(stray.channel, "");
  EXPECT_EQ(stray.text, "x");
}

TEST(FleetMessagesTest, ReloadRequestRoundTripsAndAnUnknownOpCarriesNothing) {
  const ReloadRequest apply =
      DecodeReloadRequest(EncodeReloadRequest({ReloadRequest::Op::kApply, "abc"}));
  EXPECT_EQ(apply.op, ReloadRequest::Op::kApply);
  EXPECT_EQ(apply.hash, "abc");
  EXPECT_EQ(DecodeReloadRequest(EncodeReloadRequest({ReloadRequest::Op::kCheck, "x"})).op,
            ReloadRequest::Op::kCheck);
  const ReloadRequest stray = DecodeReloadRequest(R"({"op":"drop","hash":"abc"})");
  EXPECT_EQ(stray.op, ReloadRequest::Op::kUnknown);
  EXPECT_EQ(stray.hash, "");
  EXPECT_EQ(DecodeReloadRequest("not json").op, ReloadRequest::Op::kUnknown);
}

TEST(FleetMessagesTest, ReloadAnswerRoundTripsAndAnUnreadableOneIsARefusal) {
  ReloadAnswer answer;
  answer.ok = true;
  answer.shard = "w1";
  answer.running = "abc";
  answer.rebuilt = {"lobby", "town"};
  answer.players = 12;
  answer.relocated = 1;
  const ReloadAnswer back = DecodeReloadAnswer(EncodeReloadAnswer(answer));
  EXPECT_TRUE(back.ok);
  EXPECT_EQ(back.shard, "w1");
  EXPECT_EQ(back.running, "abc");
  EXPECT_EQ(back.rebuilt, (std::vector<std::string>{"lobby", "town"}));
  EXPECT_EQ(back.players, 12);
  EXPECT_EQ(back.relocated, 1);
  const ReloadAnswer garbage = DecodeReloadAnswer(R"({"ok":"yes","players":-4})");
  EXPECT_FALSE(garbage.ok);
  EXPECT_FALSE(garbage.error.empty());
  EXPECT_EQ(garbage.players, 0);
}

}  // namespace
}  // namespace telos::shard
