#include "telos/shard/fleet_messages.h"

#include <gtest/gtest.h>

#include "telos/base/limits.h"

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

TEST(FleetMessagesTest, AStaffOrderRoundTripsAndAnUnknownOrderIsNothing) {
  world::StaffOrder order;
  order.kind = world::StaffKind::kMute;
  order.issuer = "Ada";
  order.issuer_roles = kRoleAdmin;
  order.target = "bob";
  order.room = world::Ref{"town", "square"};
  order.mute_until_unix_ms = 1'900'000'000'000;
  order.reason = "flooding \"ooc\"";
  const PlayerMessage m = DecodePlayerMessage(EncodeStaffOrder(order));
  ASSERT_EQ(m.kind, Kind::kStaff);
  EXPECT_EQ(m.staff.kind, world::StaffKind::kMute);
  EXPECT_EQ(m.staff.issuer, "Ada");
  EXPECT_EQ(m.staff.issuer_roles, kRoleAdmin);
  EXPECT_EQ(m.staff.room, (world::Ref{"town", "square"}));
  EXPECT_EQ(m.staff.mute_until_unix_ms, 1'900'000'000'000);
  EXPECT_EQ(m.staff.reason, "flooding \"ooc\"");
  EXPECT_EQ(DecodePlayerMessage(R"({"kind":"staff","order":"ban","from":"A"})").kind,
            Kind::kUnknown);
  // Role bits no role uses read as a player's order, which the far end refuses.
  EXPECT_EQ(DecodePlayerMessage(R"({"kind":"staff","order":"kick","from":"A","roles":255})")
                .staff.issuer_roles,
            kRolePlayer);
}

TEST(FleetMessagesTest, AStaffOrderCarriesTheIssuersAssertionBytesAndItsWorld) {
  world::StaffOrder order;
  order.kind = world::StaffKind::kKick;
  order.issuer = "Ada";
  order.target = "bob";
  // Every byte value survives (a SignedBlob is binary, JSON strings are not).
  for (int b = 0; b < 256; ++b) order.issuer_assertion.push_back(static_cast<char>(b));
  order.origin_world = "world-a";
  const PlayerMessage m = DecodePlayerMessage(EncodeStaffOrder(order));
  ASSERT_EQ(m.kind, Kind::kStaff);
  EXPECT_EQ(m.staff.issuer_assertion, order.issuer_assertion);
  EXPECT_EQ(m.staff.origin_world, "world-a");
  // Past its bound, or not hex, the assertion reads as none (which the receiver refuses).
  order.issuer_assertion = std::string(limits::kStaffAssertionBytesMax + 1, 'x');
  EXPECT_EQ(DecodePlayerMessage(EncodeStaffOrder(order)).staff.issuer_assertion, "");
  order.issuer_assertion = std::string(limits::kStaffAssertionBytesMax, 'x');
  EXPECT_EQ(DecodePlayerMessage(EncodeStaffOrder(order)).staff.issuer_assertion.size(),
            limits::kStaffAssertionBytesMax);
  EXPECT_EQ(DecodePlayerMessage(R"({"kind":"staff","order":"kick","assertion":"zz"})")
                .staff.issuer_assertion,
            "");
  EXPECT_EQ(DecodePlayerMessage(R"({"kind":"staff","order":"kick","assertion":"abc"})")
                .staff.issuer_assertion,
            "");
}

TEST(FleetMessagesTest, AStaffOutcomeRoundTripsAndGarbageIsAnError) {
  world::StaffOutcome outcome;
  outcome.text = "You go to Carol.";
  outcome.room = world::Ref{"town", "alley"};
  outcome.target_name = "Carol";
  const world::StaffOutcome back = DecodeStaffOutcome(EncodeStaffOutcome(outcome));
  EXPECT_TRUE(back.status.ok());
  EXPECT_EQ(back.text, "You go to Carol.");
  EXPECT_EQ(back.room, (world::Ref{"town", "alley"}));
  EXPECT_EQ(back.target_name, "Carol");
  outcome.status = Status::NotFound("gone");
  EXPECT_EQ(DecodeStaffOutcome(EncodeStaffOutcome(outcome)).status.code(), StatusCode::kNotFound);
  for (const char* data : {"", "[]", R"({"code":99})", R"({"code":-1})"}) {
    EXPECT_EQ(DecodeStaffOutcome(data).status.code(), StatusCode::kInternal) << data;
  }
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
