// Signed documents across a key rotation: every SignedBlob names its key, a verifier holding the
// current and the previous key accepts both and nothing else, and a changed key id cannot make
// a document pass.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "telos/auth/documents.h"
#include "telos/auth/keys.h"
#include "telos/base/clock.h"
#include "telos/v1/fleet.pb.h"

namespace telos::auth {
namespace {

int64_t WallMs(const Clock& clock) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock.WallNow().time_since_epoch())
      .count();
}

void ExpectDenied(const Status& status, const std::string& reason) {
  EXPECT_EQ(status.code(), StatusCode::kPermissionDenied) << status.ToString();
  EXPECT_EQ(status.message(), reason);
}

HandoffSnapshot Snapshot(const Clock& clock) {
  HandoffSnapshot s;
  s.character = "Aria";
  s.account_id = 42;
  s.zone = "town";
  s.expires_unix_ms = WallMs(clock) + 5'000;
  return s;
}

// Three generations of one key: `oldest` was retired by the rotation to `previous`, which the
// rotation to `current` retired in turn. Verifiers after the second rotation hold the ring
// {current, previous}.
class KeyRotation : public testing::Test {
 protected:
  std::string Assert(const SigningKey& key) {
    return IssueAssertion(key, 42, "Aria", "gate-1", 60'000, clock_);
  }
  static std::string WithKeyId(const std::string& blob, const std::string& key_id) {
    v1::SignedBlob parsed;
    EXPECT_TRUE(parsed.ParseFromString(blob));
    parsed.set_key_id(key_id);
    return parsed.SerializeAsString();
  }
  std::string Unknown(const std::string& what, const SigningKey& key) const {
    return what + ": unknown key id " + key.id() + " (this verifier holds " + current_.id() + ", " +
           previous_.id() + ")";
  }

  const SigningKey oldest_ = SigningKey::Generate();
  const SigningKey previous_ = SigningKey::Generate();
  const SigningKey current_ = SigningKey::Generate();
  const KeyRing ring_{current_.verify_key(), previous_.verify_key()};
  ManualClock clock_;
};

TEST_F(KeyRotation, EverySignedBlobNamesItsSigningKey) {
  v1::SignedBlob assertion;
  ASSERT_TRUE(assertion.ParseFromString(Assert(current_)));
  EXPECT_EQ(assertion.key_id(), current_.id());
  v1::SignedBlob snapshot;
  ASSERT_TRUE(snapshot.ParseFromString(SignSnapshot(previous_, Snapshot(clock_))));
  EXPECT_EQ(snapshot.key_id(), previous_.id());
}

TEST_F(KeyRotation, TheCurrentAndThePreviousKeyAreBothAccepted) {
  for (const SigningKey* key : {&current_, &previous_}) {
    auto assertion = VerifyAssertion(ring_, Assert(*key), clock_);
    ASSERT_TRUE(assertion.ok()) << assertion.status().ToString();
    EXPECT_EQ(assertion->character, "Aria");
    auto snapshot = VerifySnapshot(ring_, SignSnapshot(*key, Snapshot(clock_)), clock_);
    ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
    EXPECT_EQ(snapshot->zone, "town");
  }
}

TEST_F(KeyRotation, AnUnknownKeyIdIsRefusedNamingItAndTheKeysHeld) {
  const SigningKey stranger = SigningKey::Generate();
  ExpectDenied(VerifyAssertion(ring_, Assert(stranger), clock_).status(),
               Unknown("assertion", stranger));
  ExpectDenied(VerifySnapshot(ring_, SignSnapshot(stranger, Snapshot(clock_)), clock_).status(),
               Unknown("snapshot", stranger));
}

TEST_F(KeyRotation, AKeyTwoRotationsOldIsRefused) {
  // It was the previous key one rotation ago...
  const KeyRing before{previous_.verify_key(), oldest_.verify_key()};
  ASSERT_TRUE(VerifyAssertion(before, Assert(oldest_), clock_).ok());
  // ...and is gone from the ring after the next one.
  ExpectDenied(VerifyAssertion(ring_, Assert(oldest_), clock_).status(),
               Unknown("assertion", oldest_));
  ExpectDenied(VerifySnapshot(ring_, SignSnapshot(oldest_, Snapshot(clock_)), clock_).status(),
               Unknown("snapshot", oldest_));
}

TEST_F(KeyRotation, ATamperedKeyIdIsRefused) {
  const std::string by_previous = Assert(previous_);
  // Pointing at the other key of the ring only makes the signature check fail under that key.
  ExpectDenied(VerifyAssertion(ring_, WithKeyId(by_previous, current_.id()), clock_).status(),
               "assertion: bad signature");
  ExpectDenied(VerifyAssertion(ring_, WithKeyId(Assert(current_), previous_.id()), clock_).status(),
               "assertion: bad signature");
  // An id the ring does not hold, and ids that are not ids at all.
  const SigningKey stranger = SigningKey::Generate();
  ExpectDenied(VerifyAssertion(ring_, WithKeyId(by_previous, stranger.id()), clock_).status(),
               Unknown("assertion", stranger));
  for (const std::string& bad : {std::string("zz"), previous_.id() + "0", previous_.id().substr(1),
                                 std::string(kKeyIdChars, 'Z'), std::string("ABCDEF0123456789"),
                                 std::string(1000, 'a'), std::string("0123456789abcde\n")}) {
    ExpectDenied(VerifyAssertion(ring_, WithKeyId(by_previous, bad), clock_).status(),
                 "assertion: malformed key id");
  }
  // Removing the id does not fall back to trying a key: an unnamed blob is refused.
  ExpectDenied(VerifyAssertion(ring_, WithKeyId(by_previous, ""), clock_).status(),
               "assertion: no key id");
  ExpectDenied(VerifyAssertion(ring_, WithKeyId(Assert(current_), ""), clock_).status(),
               "assertion: no key id");
  ExpectDenied(
      VerifySnapshot(ring_, WithKeyId(SignSnapshot(current_, Snapshot(clock_)), ""), clock_)
          .status(),
      "snapshot: no key id");
}

}  // namespace
}  // namespace telos::auth
