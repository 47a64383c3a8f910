// libFuzzer target for the fleet's signed documents (documents.h): login assertions, which a
// world reads from a gate, and handoff snapshots, which a world reads from another world.
//
// The first byte chooses what the rest is:
//   bit 0 clear: the whole SignedBlob as received — size check, SignedBlob parsing, signature;
//   bit 0 set:   the payload alone, which the target signs with the test key before verifying, so
//                that the payload parser and the field bounds behind the signature are reached;
//   bit 1:       assertion (clear) or handoff snapshot (set).
// Besides "never crashes": anything that verifies meets the documented bounds, and signing what
// verified and verifying it again gives back the same document.
//
// Run locally:  build/dev/tests/fuzz/documents_fuzz tests/fuzz/corpus/documents \
//                 -dict=tests/fuzz/dict/documents.dict -max_total_time=600
#include <google/protobuf/stubs/logging.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_checks.h"
#include "telos/auth/documents.h"
#include "telos/auth/keys.h"
#include "telos/base/clock.h"
#include "telos/v1/fleet.pb.h"

namespace {

using telos::fuzz::Check;

// A fixed key so that crashes reproduce; the seed is a test value, not a secret of any fleet.
const telos::auth::SigningKey& TestKey() {
  static const telos::auth::SigningKey key =
      telos::auth::SigningKey::FromSeedHex(
          "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
          .value();
  return key;
}

constexpr size_t kFieldBytesMax = 256;  // documents.cc: kDocumentFieldBytesMax

bool SameSnapshot(const telos::auth::HandoffSnapshot& a, const telos::auth::HandoffSnapshot& b) {
  return a.character == b.character && a.account_id == b.account_id &&
         a.state_json == b.state_json && a.zone == b.zone &&
         a.placement_epoch == b.placement_epoch && a.nonce == b.nonce &&
         a.from_shard == b.from_shard && a.gate_id == b.gate_id && a.session == b.session &&
         a.token == b.token && a.reply_to == b.reply_to && a.arrival == b.arrival &&
         a.expires_unix_ms == b.expires_unix_ms && a.assertion == b.assertion;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Proto3 refuses a string field holding invalid UTF-8 (the document is then malformed, as it
  // should be) and logs every refusal; at fuzzing rates that log would be most of the run.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const telos::ManualClock clock;  // 2026-01-01, never advanced
  const telos::auth::SigningKey& key = TestKey();
  const uint8_t mode = data[0];
  std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  if (mode & 1) {
    telos::v1::SignedBlob blob;
    blob.set_signature(key.Sign(bytes));
    blob.set_key_id(key.id());
    blob.set_payload(std::move(bytes));
    bytes = blob.SerializeAsString();
  }
  if ((mode & 2) == 0) {
    auto assertion = telos::auth::VerifyAssertion(key.verify_key(), bytes, clock);
    if (!assertion.ok()) return 0;
    Check(!assertion->character.empty() && assertion->character.size() <= kFieldBytesMax);
    Check(!assertion->nonce.empty() && assertion->nonce.size() <= kFieldBytesMax);
    // IssueAssertion makes a fresh nonce, so the round trip compares the fields it keeps.
    telos::v1::Assertion again;
    again.set_account_id(assertion->account_id);
    again.set_character(assertion->character);
    again.set_expires_unix_ms(assertion->expires_unix_ms);
    again.set_nonce(assertion->nonce);
    again.set_gate_id(assertion->gate_id);
    telos::v1::SignedBlob blob;
    blob.set_payload(again.SerializeAsString());
    blob.set_signature(key.Sign(blob.payload()));
    blob.set_key_id(key.id());
    auto reread = telos::auth::VerifyAssertion(key.verify_key(), blob.SerializeAsString(), clock);
    Check(reread.ok());
    Check(reread->account_id == assertion->account_id &&
          reread->character == assertion->character && reread->nonce == assertion->nonce &&
          reread->gate_id == assertion->gate_id &&
          reread->expires_unix_ms == assertion->expires_unix_ms);
  } else {
    auto snapshot = telos::auth::VerifySnapshot(key.verify_key(), bytes, clock);
    if (!snapshot.ok()) return 0;
    Check(!snapshot->character.empty() && snapshot->character.size() <= kFieldBytesMax);
    auto reread = telos::auth::VerifySnapshot(key.verify_key(),
                                              telos::auth::SignSnapshot(key, *snapshot), clock);
    Check(reread.ok());
    Check(SameSnapshot(*reread, *snapshot));
  }
  return 0;
}
