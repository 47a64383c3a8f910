// Signed documents across a key rotation: every SignedBlob names its key, a verifier holding the
// current and the previous key accepts both and nothing else, and a changed key id cannot make
// a document pass. Assertions and snapshots are sealed and opened by the same code
// (documents.cc, Seal and Open); these cases use snapshots.
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

// Three generations of one key: `oldest` was retired by the rotation to `previous`, which the
// rotation to `current` retired in turn. Verifiers after the second rotation hold the ring
// {current, previous}.
class KeyRotation : public testing::Test {
 protected:
  std::string Sign(const SigningKey& key) const {
    HandoffSnapshot s;
    s.character = "Aria";
    s.account_id = 42;
    s.zone = "town";
    s.expires_unix_ms = WallMs(clock_) + 5'000;
    return SignSnapshot(key, s);
  }
  Status Verify(const KeyRing& ring, const std::string& blob) const {
    return VerifySnapshot(ring, blob, clock_).status();
  }
  static std::string WithKeyId(const std::string& blob, const std::string& key_id) {
    v1::SignedBlob parsed;
    EXPECT_TRUE(parsed.ParseFromString(blob));
    parsed.set_key_id(key_id);
    return parsed.SerializeAsString();
  }
  std::string Unknown(const SigningKey& key) const {
    return "snapshot: unknown key id " + key.id() + " (this verifier holds " + current_.id() +
           ", " + previous_.id() + ")";
  }

  const SigningKey oldest_ = SigningKey::Generate();
  const SigningKey previous_ = SigningKey::Generate();
  const SigningKey current_ = SigningKey::Generate();
  const KeyRing ring_{current_.verify_key(), previous_.verify_key()};
  ManualClock clock_;
};

TEST_F(KeyRotation, EverySignedBlobNamesItsSigningKey) {
  v1::SignedBlob blob;
  ASSERT_TRUE(blob.ParseFromString(Sign(previous_)));
  EXPECT_EQ(blob.key_id(), previous_.id());
}

TEST_F(KeyRotation, TheCurrentAndThePreviousKeyAreBothAccepted) {
  for (const SigningKey* key : {&current_, &previous_}) {
    auto snapshot = VerifySnapshot(ring_, Sign(*key), clock_);
    ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
    EXPECT_EQ(snapshot->zone, "town");
  }
}

TEST_F(KeyRotation, AnUnknownKeyIdIsRefusedNamingItAndTheKeysHeld) {
  const SigningKey stranger = SigningKey::Generate();
  ExpectDenied(Verify(ring_, Sign(stranger)), Unknown(stranger));
}

TEST_F(KeyRotation, AKeyTwoRotationsOldIsRefused) {
  // It was the previous key one rotation ago...
  const KeyRing before{previous_.verify_key(), oldest_.verify_key()};
  ASSERT_TRUE(Verify(before, Sign(oldest_)).ok());
  // ...and is gone from the ring after the next one.
  ExpectDenied(Verify(ring_, Sign(oldest_)), Unknown(oldest_));
}

TEST_F(KeyRotation, ATamperedKeyIdIsRefused) {
  const std::string by_previous = Sign(previous_);
  // Pointing at the other key of the ring only makes the signature check fail under that key.
  ExpectDenied(Verify(ring_, WithKeyId(by_previous, current_.id())), "snapshot: bad signature");
  ExpectDenied(Verify(ring_, WithKeyId(Sign(current_), previous_.id())), "snapshot: bad signature");
  // An id the ring does not hold, and ids that are not ids at all.
  const SigningKey stranger = SigningKey::Generate();
  ExpectDenied(Verify(ring_, WithKeyId(by_previous, stranger.id())), Unknown(stranger));
  for (const std::string& bad : {std::string("zz"), previous_.id() + "0", previous_.id().substr(1),
                                 std::string(kKeyIdChars, 'Z'), std::string("ABCDEF0123456789"),
                                 std::string(1000, 'a'), std::string("0123456789abcde\n")}) {
    ExpectDenied(Verify(ring_, WithKeyId(by_previous, bad)), "snapshot: malformed key id");
  }
  // Removing the id does not fall back to trying a key: an unnamed blob is refused.
  ExpectDenied(Verify(ring_, WithKeyId(by_previous, "")), "snapshot: no key id");
  ExpectDenied(Verify(ring_, WithKeyId(Sign(current_), "")), "snapshot: no key id");
}

}  // namespace
}  // namespace telos::auth
