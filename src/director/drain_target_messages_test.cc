// The drain-targets codec: what one side encodes the other decodes unchanged, the subject is
// built from one token per scope, and every malformed message reads as kInvalidArgument.
#include "telos/director/drain_target_messages.h"

#include <string>

#include <gtest/gtest.h>

#include "telos/base/limits.h"
#include "telos/base/utf8.h"

namespace telos::director {
namespace {

DrainTargetsRequest SampleRequest() {
  return DrainTargetsRequest{"world-1", {{"town", 12}, {"forest", 0}}, 60'000};
}

DrainTargetsReply SampleReply() {
  return DrainTargetsReply{
      "director-0", 7, {{"town", "world-2", "r-1", false}, {"forest", "world-3", "r-2", true}}};
}

TEST(DrainTargetMessages, SubjectHasOneTokenPerScope) {
  EXPECT_EQ(DrainTargetsSubject("telos.telos", "fleet"),
            "telos.telos.director.fleet.drain-targets");
  // A scope with a dot or a wildcard still makes exactly one token.
  EXPECT_EQ(DrainTargetsSubject("telos.x", "a.b*"), "telos.x.director.a_2eb_2a.drain-targets");
}

TEST(DrainTargetMessages, RequestRoundTrips) {
  Result<DrainTargetsRequest> decoded =
      DecodeDrainTargetsRequest(EncodeDrainTargetsRequest(SampleRequest()));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, SampleRequest());
}

TEST(DrainTargetMessages, ReplyRoundTrips) {
  Result<DrainTargetsReply> decoded =
      DecodeDrainTargetsReply(EncodeDrainTargetsReply(SampleReply()));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, SampleReply());
  // No targets is a valid answer: the leader could place nothing, the shard chooses itself.
  Result<DrainTargetsReply> empty =
      DecodeDrainTargetsReply(EncodeDrainTargetsReply({"director-0", 1, {}}));
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(empty->targets.empty());
}

TEST(DrainTargetMessages, ErrorReplyCarriesItsCode) {
  Result<DrainTargetsReply> decoded =
      DecodeDrainTargetsReply(EncodeDrainTargetsError(Status::FailedPrecondition("not leading")));
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(decoded.status().message().find("not leading"), std::string::npos);

  Result<DrainTargetsReply> unknown = DecodeDrainTargetsReply(R"({"error":"weird","message":"m"})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInternal);
  // "ok" is not an error code: a reply claiming an OK error is not trusted as a success.
  Result<DrainTargetsReply> ok_error = DecodeDrainTargetsReply(R"({"error":"ok"})");
  ASSERT_FALSE(ok_error.ok());
  EXPECT_EQ(ok_error.status().code(), StatusCode::kInternal);
}

TEST(DrainTargetMessages, ErrorTextIsCutOnACharacterBoundary) {
  // 'é' is two bytes; an odd cut would split one and the reply would not parse.
  std::string text;
  while (text.size() < limits::kDirectorErrorTextBytesMax + 10) text += "\xC3\xA9";
  text = "x" + text;
  Result<DrainTargetsReply> decoded =
      DecodeDrainTargetsReply(EncodeDrainTargetsError(Status::Unavailable(text)));
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().code(), StatusCode::kUnavailable);
  EXPECT_LE(decoded.status().message().size(), limits::kDirectorErrorTextBytesMax + 20);
}

// An error may quote a requester's id, and ids are any bytes: the reply still parses, keeps its
// code, and is valid UTF-8 whatever the bytes were.
TEST(DrainTargetMessages, ErrorTextOfBinaryBytesIsRepaired) {
  const std::string id = "world-\xFF\xC3(\xED\xA0\x80\xF0\x9F";
  const std::string encoded = EncodeDrainTargetsError(
      Status::FailedPrecondition("shard " + id + " is not a live registered shard"));
  EXPECT_TRUE(IsValidUtf8(encoded)) << encoded;
  Result<DrainTargetsReply> decoded = DecodeDrainTargetsReply(encoded);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().code(), StatusCode::kFailedPrecondition)
      << decoded.status().ToString();
  EXPECT_NE(decoded.status().message().find("is not a live registered shard"), std::string::npos);
  EXPECT_TRUE(IsValidUtf8(decoded.status().message()));

  // Binary bytes right at the cut: still valid, still within the bound.
  std::string long_text(limits::kDirectorErrorTextBytesMax - 1, 'x');
  long_text += "\xE2\x82\xAC\xFF\xFF";
  const std::string cut = EncodeDrainTargetsError(Status::Unavailable(long_text));
  EXPECT_TRUE(IsValidUtf8(cut));
  Result<DrainTargetsReply> cut_decoded = DecodeDrainTargetsReply(cut);
  EXPECT_EQ(cut_decoded.status().code(), StatusCode::kUnavailable);
}

void ExpectBadRequest(const std::string& data) {
  Result<DrainTargetsRequest> decoded = DecodeDrainTargetsRequest(data);
  ASSERT_FALSE(decoded.ok()) << data;
  EXPECT_EQ(decoded.status().code(), StatusCode::kInvalidArgument) << data;
}

TEST(DrainTargetMessages, MalformedRequestsAreRefused) {
  ExpectBadRequest("");
  ExpectBadRequest("not json");
  ExpectBadRequest("[]");
  ExpectBadRequest(R"({"zones":[{"zone":"a","players":1}],"ttl_ms":1})");  // no shard
  ExpectBadRequest(R"({"shard":"","zones":[{"zone":"a","players":1}],"ttl_ms":1})");
  ExpectBadRequest(R"({"shard":"s\n","zones":[{"zone":"a","players":1}],"ttl_ms":1})");
  ExpectBadRequest(R"({"shard":"s","zones":[],"ttl_ms":1})");
  ExpectBadRequest(R"({"shard":"s","zones":{},"ttl_ms":1})");
  ExpectBadRequest(R"({"shard":"s","zones":[1],"ttl_ms":1})");
  ExpectBadRequest(R"({"shard":"s","zones":[{"zone":"a","players":-1}],"ttl_ms":1})");
  ExpectBadRequest(R"({"shard":"s","zones":[{"zone":"a","players":1.5}],"ttl_ms":1})");
  ExpectBadRequest(R"({"shard":"s","zones":[{"zone":"a","players":"1"}],"ttl_ms":1})");
  ExpectBadRequest(R"({"shard":"s","zones":[{"zone":"a","players":1}],"ttl_ms":0})");
  ExpectBadRequest(R"({"shard":"s","zones":[{"zone":"a","players":1}]})");
  ExpectBadRequest(
      R"({"shard":"s","zones":[{"zone":"a","players":1}],"ttl_ms":18446744073709551615})");
  ExpectBadRequest(
      R"({"shard":"s","zones":[{"zone":"a","players":1},{"zone":"a","players":2}],"ttl_ms":1})");
  ExpectBadRequest(R"({"shard":")" + std::string(limits::kDirectoryIdBytesMax + 1, 'x') +
                   R"(","zones":[{"zone":"a","players":1}],"ttl_ms":1})");
}

TEST(DrainTargetMessages, UnknownFieldsAreIgnored) {
  Result<DrainTargetsRequest> decoded = DecodeDrainTargetsRequest(
      R"({"shard":"s","zones":[{"zone":"a","players":1,"x":2}],"ttl_ms":5,"v":2})");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->ttl_ms, 5);
}

void ExpectBadReply(const std::string& data) {
  Result<DrainTargetsReply> decoded = DecodeDrainTargetsReply(data);
  ASSERT_FALSE(decoded.ok()) << data;
  EXPECT_EQ(decoded.status().code(), StatusCode::kInvalidArgument) << data;
}

TEST(DrainTargetMessages, MalformedRepliesAreRefused) {
  ExpectBadReply("");
  ExpectBadReply("{");
  ExpectBadReply(R"({"error":5})");
  ExpectBadReply(R"({"epoch":1,"targets":[]})");                              // no leader
  ExpectBadReply(R"({"leader":"d","epoch":0,"targets":[]})");                 // no term is 0
  ExpectBadReply(R"({"leader":"d","epoch":-3,"targets":[]})");                // negative
  ExpectBadReply(R"({"leader":"d","epoch":1})");                              // no targets
  ExpectBadReply(R"({"leader":"d","epoch":9007199254740992,"targets":[]})");  // 2^53
  ExpectBadReply(R"({"leader":"d","epoch":1,"targets":[{"zone":"a","target":"t"}]})");
  ExpectBadReply(R"({"leader":"d","epoch":1,"targets":[{"zone":"a","target":"t","reservation":"r",)"
                 R"("over_ceiling":1}]})");
  ExpectBadReply(
      R"({"leader":"d","epoch":1,"targets":[{"zone":"a","target":"t","reservation":"r"},)"
      R"({"zone":"a","target":"u","reservation":"q"}]})");
}

TEST(DrainTargetMessages, OversizedInputIsRefusedUnread) {
  std::string big = R"({"shard":"s","ttl_ms":1,"pad":")";
  big += std::string(limits::kDirectorDrainMessageBytesMax, 'x');
  big += R"(","zones":[{"zone":"a","players":1}]})";
  ExpectBadRequest(big);
}

}  // namespace
}  // namespace telos::director
