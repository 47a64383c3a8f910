#include "telos/auth/documents.h"

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>

#include "telos/base/clock.h"
#include "telos/v1/fleet.pb.h"

namespace telos::auth {
namespace {

using std::chrono::milliseconds;

int64_t WallMs(const Clock& clock) {
  return std::chrono::duration_cast<milliseconds>(clock.WallNow().time_since_epoch()).count();
}

void ExpectDenied(const Status& status, const std::string& reason) {
  EXPECT_EQ(status.code(), StatusCode::kPermissionDenied) << status.ToString();
  EXPECT_EQ(status.message(), reason);
}

// A snapshot with every field set to something distinctive.
HandoffSnapshot FullSnapshot(const SigningKey& key, const Clock& clock) {
  HandoffSnapshot s;
  s.character = "Aria";
  s.account_id = 4'200'000'000'123;
  s.state_json = R"({"name":"Aria","hp":31,"inventory":["sword","lamp"]})";
  s.zone = "town";
  s.placement_epoch = 18'000'000'000'000'000'001u;
  s.nonce = RandomToken();
  s.from_shard = "world-3";
  s.gate_id = "gate-1";
  s.session = 0xfedcba9876543210u;
  s.token = RandomToken(32);
  s.reply_to = "10.0.0.7:7100";
  s.arrival = {"You step through the gate.", "", "Town Square"};
  s.expires_unix_ms = WallMs(clock) + 5'000;
  s.assertion = IssueAssertion(key, s.account_id, s.character, "gate-1", 60'000, clock);
  return s;
}

class Documents : public testing::Test {
 protected:
  SigningKey key_ = SigningKey::Generate();
  ManualClock clock_;
};

// ------------------------------------------------------------------ assertions

TEST_F(Documents, AssertionRoundTrip) {
  const std::string blob = IssueAssertion(key_, 42, "Aria", "gate-1", 60'000, clock_);
  auto assertion = VerifyAssertion(key_.verify_key(), blob, clock_);
  ASSERT_TRUE(assertion.ok()) << assertion.status().ToString();
  EXPECT_EQ(assertion->account_id, 42);
  EXPECT_EQ(assertion->character, "Aria");
  EXPECT_EQ(assertion->expires_unix_ms, WallMs(clock_) + 60'000);
  EXPECT_EQ(assertion->nonce.size(), 32u);  // 16 random bytes as hex
  EXPECT_EQ(assertion->gate_id, "gate-1");
}

TEST_F(Documents, ARenewedAssertionKeepsTheSessionAndMovesTheExpiry) {
  const std::string first = IssueAssertion(key_, 42, "Aria", "gate-1", 60'000, clock_);
  auto current = VerifyAssertion(key_.verify_key(), first, clock_);
  ASSERT_TRUE(current.ok()) << current.status().ToString();
  clock_.Advance(std::chrono::seconds(50));
  const std::string renewed = RenewAssertion(key_, *current, 60'000, clock_);
  clock_.Advance(std::chrono::seconds(30));  // past the first one's expiry
  ExpectDenied(VerifyAssertion(key_.verify_key(), first, clock_).status(), "assertion: expired");
  auto next = VerifyAssertion(key_.verify_key(), renewed, clock_);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(next->account_id, 42);
  EXPECT_EQ(next->character, "Aria");
  EXPECT_EQ(next->nonce, current->nonce);
  EXPECT_EQ(next->gate_id, "gate-1");
  EXPECT_EQ(next->expires_unix_ms, current->expires_unix_ms + 50'000);
}

TEST_F(Documents, AnAssertionBoundToNoGateIsRefused) {
  v1::Assertion payload;
  payload.set_account_id(42);
  payload.set_character("Aria");
  payload.set_nonce("n");
  payload.set_expires_unix_ms(WallMs(clock_) + 60'000);
  v1::SignedBlob blob;
  blob.set_payload(payload.SerializeAsString());
  blob.set_signature(key_.Sign(blob.payload()));
  blob.set_key_id(key_.id());
  ExpectDenied(VerifyAssertion(key_.verify_key(), blob.SerializeAsString(), clock_).status(),
               "assertion: malformed");
}

TEST_F(Documents, AnAssertionCarriesTheAccountsRolesThroughRenewal) {
  const std::string blob =
      IssueAssertion(key_, 42, "Aria", "gate-1", 60'000, clock_, kRoleAdmin | kRoleBuilder);
  auto issued = VerifyAssertion(key_.verify_key(), blob, clock_);
  ASSERT_TRUE(issued.ok()) << issued.status().ToString();
  EXPECT_EQ(issued->roles, kRoleAdmin | kRoleBuilder);
  auto renewed =
      VerifyAssertion(key_.verify_key(), RenewAssertion(key_, *issued, 60'000, clock_), clock_);
  ASSERT_TRUE(renewed.ok()) << renewed.status().ToString();
  EXPECT_EQ(renewed->roles, kRoleAdmin | kRoleBuilder);
  // Without roles, an assertion is a player's.
  EXPECT_EQ(VerifyAssertion(key_.verify_key(),
                            IssueAssertion(key_, 7, "Bram", "gate-1", 1'000, clock_), clock_)
                ->roles,
            kRolePlayer);
}

TEST_F(Documents, APlayerWhoWritesThemselvesAnAdminRoleIsRefused) {
  // A player holds their own assertion (the gate keeps it), so they can rewrite its payload; the
  // signature is over the payload the account service wrote, so the forged role breaks it.
  const std::string blob = IssueAssertion(key_, 42, "Aria", "gate-1", 60'000, clock_);
  v1::SignedBlob signed_blob;
  ASSERT_TRUE(signed_blob.ParseFromString(blob));
  v1::Assertion payload;
  ASSERT_TRUE(payload.ParseFromString(signed_blob.payload()));
  ASSERT_EQ(payload.roles(), 0u);
  payload.set_roles(kRoleAdmin);
  signed_blob.set_payload(payload.SerializeAsString());
  ExpectDenied(VerifyAssertion(key_.verify_key(), signed_blob.SerializeAsString(), clock_).status(),
               "assertion: bad signature");

  // Signed by a key of their own instead: the verifier does not hold it.
  const SigningKey forger = SigningKey::Generate();
  const std::string forged =
      IssueAssertion(forger, 42, "Aria", "gate-1", 60'000, clock_, kRoleAdmin);
  EXPECT_EQ(VerifyAssertion(key_.verify_key(), forged, clock_).status().code(),
            StatusCode::kPermissionDenied);
}

TEST_F(Documents, AnAssertionWithARoleThisBuildDoesNotKnowIsMalformed) {
  v1::Assertion payload;
  payload.set_account_id(42);
  payload.set_character("Aria");
  payload.set_nonce("n");
  payload.set_gate_id("gate-1");
  payload.set_expires_unix_ms(WallMs(clock_) + 60'000);
  payload.set_roles(kRoleAdmin | (1u << 9));
  v1::SignedBlob blob;
  blob.set_payload(payload.SerializeAsString());
  blob.set_signature(key_.Sign(blob.payload()));
  blob.set_key_id(key_.id());
  ExpectDenied(VerifyAssertion(key_.verify_key(), blob.SerializeAsString(), clock_).status(),
               "assertion: malformed");
}

TEST_F(Documents, AssertionIsASignedBlobOfTheProtoPayload) {
  const std::string blob = IssueAssertion(key_, 7, "Bram", "gate-1", 1'000, clock_);
  v1::SignedBlob signed_blob;
  ASSERT_TRUE(signed_blob.ParseFromString(blob));
  EXPECT_TRUE(key_.verify_key().Verify(signed_blob.payload(), signed_blob.signature()));
  v1::Assertion payload;
  ASSERT_TRUE(payload.ParseFromString(signed_blob.payload()));
  EXPECT_EQ(payload.account_id(), 7);
  EXPECT_EQ(payload.character(), "Bram");
}

TEST_F(Documents, EachAssertionHasItsOwnNonce) {
  std::set<std::string> nonces;
  for (int i = 0; i < 200; ++i) {
    auto a = VerifyAssertion(key_.verify_key(),
                             IssueAssertion(key_, 1, "Aria", "gate-1", 1'000, clock_), clock_);
    ASSERT_TRUE(a.ok());
    nonces.insert(a->nonce);
  }
  EXPECT_EQ(nonces.size(), 200u);
}

TEST_F(Documents, AssertionExpiresExactlyAtItsExpiry) {
  const std::string blob = IssueAssertion(key_, 42, "Aria", "gate-1", 1'000, clock_);
  clock_.Advance(milliseconds(999));
  EXPECT_TRUE(VerifyAssertion(key_.verify_key(), blob, clock_).ok());
  clock_.Advance(milliseconds(1));
  ExpectDenied(VerifyAssertion(key_.verify_key(), blob, clock_).status(), "assertion: expired");
  clock_.Advance(std::chrono::hours(24));
  ExpectDenied(VerifyAssertion(key_.verify_key(), blob, clock_).status(), "assertion: expired");
}

TEST_F(Documents, AStaleAssertionIsAcceptedForItsAllowanceAndNoLonger) {
  // A staff order's assertion (VerifyStaleAssertion): good past its expiry for the allowance,
  // still signed and still refused once the allowance has passed too.
  const std::string blob = IssueAssertion(key_, 42, "Aria", "gate-1", 1'000, clock_, kRoleAdmin);
  clock_.Advance(milliseconds(1'000 + 59'999));
  EXPECT_FALSE(VerifyAssertion(key_.verify_key(), blob, clock_).ok());
  auto stale = VerifyStaleAssertion(key_.verify_key(), blob, clock_, 60'000);
  ASSERT_TRUE(stale.ok()) << stale.status().ToString();
  EXPECT_EQ(stale->roles, kRoleAdmin);
  clock_.Advance(milliseconds(1));
  ExpectDenied(VerifyStaleAssertion(key_.verify_key(), blob, clock_, 60'000).status(),
               "assertion: expired");
  // The signature is checked as ever.
  std::string tampered = blob;
  tampered.back() ^= 1;
  EXPECT_FALSE(VerifyStaleAssertion(key_.verify_key(), tampered, clock_, 3'600'000).ok());
}

TEST_F(Documents, AssertionWithZeroTtlIsAlreadyExpired) {
  const std::string blob = IssueAssertion(key_, 42, "Aria", "gate-1", 0, clock_);
  ExpectDenied(VerifyAssertion(key_.verify_key(), blob, clock_).status(), "assertion: expired");
}

TEST_F(Documents, AssertionUnderAnotherKeyIsRejected) {
  const SigningKey other = SigningKey::Generate();
  const std::string blob = IssueAssertion(other, 42, "Aria", "gate-1", 60'000, clock_);
  ExpectDenied(
      VerifyAssertion(key_.verify_key(), blob, clock_).status(),
      "assertion: unknown key id " + other.id() + " (this verifier holds " + key_.id() + ")");
}

TEST_F(Documents, EveryTamperedPayloadByteIsRejected) {
  const std::string blob = IssueAssertion(key_, 42, "Aria", "gate-1", 60'000, clock_);
  v1::SignedBlob signed_blob;
  ASSERT_TRUE(signed_blob.ParseFromString(blob));
  const std::string payload = signed_blob.payload();
  for (size_t i = 0; i < payload.size(); ++i) {
    std::string tampered = payload;
    tampered[i] = static_cast<char>(tampered[i] ^ 0x20);
    signed_blob.set_payload(tampered);
    const Status status =
        VerifyAssertion(key_.verify_key(), signed_blob.SerializeAsString(), clock_).status();
    ExpectDenied(status, "assertion: bad signature");
  }
}

TEST_F(Documents, TamperedSignatureIsRejected) {
  const std::string blob = IssueAssertion(key_, 42, "Aria", "gate-1", 60'000, clock_);
  v1::SignedBlob signed_blob;
  ASSERT_TRUE(signed_blob.ParseFromString(blob));
  std::string signature = signed_blob.signature();
  signature[0] = static_cast<char>(signature[0] ^ 0x01);
  signed_blob.set_signature(signature);
  ExpectDenied(VerifyAssertion(key_.verify_key(), signed_blob.SerializeAsString(), clock_).status(),
               "assertion: bad signature");

  signed_blob.set_signature(signature.substr(0, kSignatureBytes - 1));
  ExpectDenied(VerifyAssertion(key_.verify_key(), signed_blob.SerializeAsString(), clock_).status(),
               "assertion: bad signature");
  signed_blob.clear_signature();
  ExpectDenied(VerifyAssertion(key_.verify_key(), signed_blob.SerializeAsString(), clock_).status(),
               "assertion: bad signature");
}

TEST_F(Documents, TamperedBlobBytesAreRejected) {
  const std::string blob = IssueAssertion(key_, 42, "Aria", "gate-1", 60'000, clock_);
  for (size_t i = 0; i < blob.size(); ++i) {
    std::string tampered = blob;
    tampered[i] = static_cast<char>(tampered[i] ^ 0x01);
    auto result = VerifyAssertion(key_.verify_key(), tampered, clock_);
    EXPECT_FALSE(result.ok()) << "byte " << i;
    EXPECT_EQ(result.status().code(), StatusCode::kPermissionDenied);
  }
}

TEST_F(Documents, TruncatedBlobsAreRejected) {
  const std::string blob = IssueAssertion(key_, 42, "Aria", "gate-1", 60'000, clock_);
  for (size_t length = 0; length < blob.size(); ++length) {
    auto result = VerifyAssertion(key_.verify_key(), blob.substr(0, length), clock_);
    EXPECT_FALSE(result.ok()) << "length " << length;
    EXPECT_EQ(result.status().code(), StatusCode::kPermissionDenied);
  }
}

TEST_F(Documents, EmptyAndGarbageAreRejected) {
  ExpectDenied(VerifyAssertion(key_.verify_key(), "", clock_).status(), "assertion: malformed");
  const std::string garbage[] = {std::string("\xff\xff\xff\xff\xff", 5), "hello, world",
                                 std::string(100, '\0'), RandomToken(64), std::string(1, '\x0a')};
  for (const std::string& g : garbage) {
    auto result = VerifyAssertion(key_.verify_key(), g, clock_);
    EXPECT_EQ(result.status().code(), StatusCode::kPermissionDenied);
  }
  // Random bytes, many of them: never a crash, never accepted.
  for (int i = 0; i < 500; ++i) {
    const std::string hex = RandomToken(static_cast<size_t>(1 + i % 200));
    std::string raw;
    for (size_t j = 0; j + 1 < hex.size(); j += 2) {
      raw.push_back(static_cast<char>(std::stoi(hex.substr(j, 2), nullptr, 16)));
    }
    EXPECT_FALSE(VerifyAssertion(key_.verify_key(), raw, clock_).ok());
    EXPECT_FALSE(VerifySnapshot(key_.verify_key(), raw, clock_).ok());
  }
}

TEST_F(Documents, OversizeBlobIsRefusedBeforeParsing) {
  // A validly signed SignedBlob whose padding pushes it past the bound.
  v1::Assertion payload;
  payload.set_account_id(1);
  payload.set_character("Aria");
  payload.set_nonce("n");
  payload.set_gate_id("gate-1");
  payload.set_expires_unix_ms(WallMs(clock_) + 60'000);
  const std::string bytes = payload.SerializeAsString();
  v1::SignedBlob blob;
  blob.set_payload(bytes);
  blob.set_signature(key_.Sign(bytes));
  blob.set_key_id(key_.id());
  const std::string good = blob.SerializeAsString();
  ASSERT_TRUE(VerifyAssertion(key_.verify_key(), good, clock_).ok());
  // Field 15, length-delimited: unknown, so only the size check can refuse it.
  std::string padded = good;
  padded += '\x7a';
  std::string padding(kSignedBlobBytesMax, 'p');
  size_t length = padding.size();
  while (length >= 0x80) {
    padded += static_cast<char>((length & 0x7f) | 0x80);
    length >>= 7;
  }
  padded += static_cast<char>(length);
  padded += padding;
  ASSERT_GT(padded.size(), kSignedBlobBytesMax);
  ExpectDenied(VerifyAssertion(key_.verify_key(), padded, clock_).status(), "assertion: too large");
  ExpectDenied(VerifySnapshot(key_.verify_key(), padded, clock_).status(), "snapshot: too large");
}

TEST_F(Documents, SignedPayloadThatIsNotAnAssertionIsMalformed) {
  v1::SignedBlob blob;
  blob.set_payload("\xff\xff\xff");
  blob.set_signature(key_.Sign(blob.payload()));
  blob.set_key_id(key_.id());
  ExpectDenied(VerifyAssertion(key_.verify_key(), blob.SerializeAsString(), clock_).status(),
               "assertion: malformed");
}

TEST_F(Documents, SignedAssertionWithoutCharacterIsMalformed) {
  v1::Assertion payload;
  payload.set_account_id(1);
  payload.set_nonce("n");
  payload.set_expires_unix_ms(WallMs(clock_) + 60'000);
  v1::SignedBlob blob;
  blob.set_payload(payload.SerializeAsString());
  blob.set_signature(key_.Sign(blob.payload()));
  blob.set_key_id(key_.id());
  ExpectDenied(VerifyAssertion(key_.verify_key(), blob.SerializeAsString(), clock_).status(),
               "assertion: malformed");

  payload.set_character(std::string(257, 'a'));
  blob.set_payload(payload.SerializeAsString());
  blob.set_signature(key_.Sign(blob.payload()));
  blob.set_key_id(key_.id());
  ExpectDenied(VerifyAssertion(key_.verify_key(), blob.SerializeAsString(), clock_).status(),
               "assertion: malformed");
}

// ------------------------------------------------------------------ snapshots

TEST_F(Documents, SnapshotRoundTripKeepsEveryField) {
  const HandoffSnapshot in = FullSnapshot(key_, clock_);
  auto out = VerifySnapshot(key_.verify_key(), SignSnapshot(key_, in), clock_);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->character, in.character);
  EXPECT_EQ(out->account_id, in.account_id);
  EXPECT_EQ(out->state_json, in.state_json);
  EXPECT_EQ(out->zone, in.zone);
  EXPECT_EQ(out->placement_epoch, in.placement_epoch);
  EXPECT_EQ(out->nonce, in.nonce);
  EXPECT_EQ(out->from_shard, in.from_shard);
  EXPECT_EQ(out->gate_id, in.gate_id);
  EXPECT_EQ(out->session, in.session);
  EXPECT_EQ(out->token, in.token);
  EXPECT_EQ(out->reply_to, in.reply_to);
  EXPECT_EQ(out->arrival, in.arrival);
  EXPECT_EQ(out->expires_unix_ms, in.expires_unix_ms);
  EXPECT_EQ(out->assertion, in.assertion);
  // The carried assertion still verifies on its own.
  auto assertion = VerifyAssertion(key_.verify_key(), out->assertion, clock_);
  ASSERT_TRUE(assertion.ok()) << assertion.status().ToString();
  EXPECT_EQ(assertion->character, "Aria");
}

TEST_F(Documents, SnapshotWithEmptyArrivalAndLargeState) {
  HandoffSnapshot in = FullSnapshot(key_, clock_);
  in.arrival.clear();
  in.state_json = std::string(512 * 1024, 'x');
  auto out = VerifySnapshot(key_.verify_key(), SignSnapshot(key_, in), clock_);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(out->arrival.empty());
  EXPECT_EQ(out->state_json, in.state_json);
}

TEST_F(Documents, SnapshotExpiresExactlyAtItsExpiry) {
  HandoffSnapshot in = FullSnapshot(key_, clock_);
  in.expires_unix_ms = WallMs(clock_) + 250;
  const std::string blob = SignSnapshot(key_, in);
  clock_.Advance(milliseconds(249));
  EXPECT_TRUE(VerifySnapshot(key_.verify_key(), blob, clock_).ok());
  clock_.Advance(milliseconds(1));
  ExpectDenied(VerifySnapshot(key_.verify_key(), blob, clock_).status(), "snapshot: expired");
  clock_.Advance(milliseconds(10'000));
  ExpectDenied(VerifySnapshot(key_.verify_key(), blob, clock_).status(), "snapshot: expired");
}

TEST_F(Documents, SnapshotUnderAnotherKeyOrTamperedIsRejected) {
  const HandoffSnapshot in = FullSnapshot(key_, clock_);
  const SigningKey other = SigningKey::Generate();
  ExpectDenied(
      VerifySnapshot(key_.verify_key(), SignSnapshot(other, in), clock_).status(),
      "snapshot: unknown key id " + other.id() + " (this verifier holds " + key_.id() + ")");

  v1::SignedBlob blob;
  ASSERT_TRUE(blob.ParseFromString(SignSnapshot(key_, in)));
  std::string payload = blob.payload();
  payload[payload.size() / 2] = static_cast<char>(payload[payload.size() / 2] ^ 0x04);
  blob.set_payload(payload);
  ExpectDenied(VerifySnapshot(key_.verify_key(), blob.SerializeAsString(), clock_).status(),
               "snapshot: bad signature");
  ExpectDenied(VerifySnapshot(key_.verify_key(), "", clock_).status(), "snapshot: malformed");
}

TEST_F(Documents, SnapshotWithoutCharacterIsMalformed) {
  HandoffSnapshot in = FullSnapshot(key_, clock_);
  in.character.clear();
  ExpectDenied(VerifySnapshot(key_.verify_key(), SignSnapshot(key_, in), clock_).status(),
               "snapshot: malformed");
}

TEST_F(Documents, AnAssertionIsNotASnapshot) {
  // Signed with the same key, an assertion presented as a snapshot still fails: its fields do not
  // line up with a snapshot's (no character), so the sanity checks refuse it.
  const std::string assertion = IssueAssertion(key_, 42, "Aria", "gate-1", 60'000, clock_);
  EXPECT_FALSE(VerifySnapshot(key_.verify_key(), assertion, clock_).ok());
}

// ------------------------------------------------------------------ tokens

TEST(RandomToken, IsLowerCaseHexOfTheRequestedLength) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{16}, size_t{32}, size_t{100}}) {
    const std::string token = RandomToken(bytes);
    EXPECT_EQ(token.size(), 2 * bytes);
    EXPECT_EQ(token.find_first_not_of("0123456789abcdef"), std::string::npos) << token;
  }
  EXPECT_EQ(RandomToken().size(), 32u);
}

TEST(RandomToken, IsUniqueAcrossManyCalls) {
  std::set<std::string> tokens;
  for (int i = 0; i < 10'000; ++i) tokens.insert(RandomToken());
  EXPECT_EQ(tokens.size(), 10'000u);
}

}  // namespace
}  // namespace telos::auth
