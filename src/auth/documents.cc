#include "telos/auth/documents.h"

#include <sodium.h>

#include <chrono>
#include <string_view>
#include <utility>

#include "crypto_util.h"
#include "telos/base/limits.h"
#include "telos/v1/fleet.pb.h"

namespace telos::auth {
namespace {

// Bounds a verified document must still meet before its fields are used. The signer is trusted,
// but a bug on its side must not become a huge allocation or a nonsense name on ours.
// A name-like field: character, zone, nonce, shard and gate ids, token, reply address.
constexpr size_t kDocumentFieldBytesMax = limits::kSignedDocumentFieldBytesMax;
// The frozen character; the whole blob is bounded by kSignedBlobBytesMax as well.
constexpr size_t kSnapshotStateBytesMax = kSignedBlobBytesMax;
// The arrival lines are shown in one flush, so they obey the per-flush bound.
constexpr size_t kSnapshotArrivalLinesMax = limits::kOutputLinesPerFlushMax;
constexpr size_t kSnapshotArrivalLineBytesMax = limits::kSnapshotArrivalLineBytesMax;
// The nested assertion is a small SignedBlob (a name, a nonce, two integers and a signature).
constexpr size_t kSnapshotAssertionBytesMax = limits::kSnapshotAssertionBytesMax;

int64_t WallUnixMs(const Clock& clock) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock.WallNow().time_since_epoch())
      .count();
}

// Signs the serialized payload and wraps both, with the key's id, in a serialized SignedBlob.
std::string Seal(const SigningKey& key, const std::string& payload) {
  v1::SignedBlob blob;
  blob.set_signature(key.Sign(payload));
  blob.set_payload(payload);
  blob.set_key_id(key.id());
  return blob.SerializeAsString();
}

// Whether `id` has the shape of a key id: kKeyIdChars lower-case hex digits.
bool IsKeyId(std::string_view id) {
  if (id.size() != kKeyIdChars) return false;
  for (const char c : id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// The payload of `signed_blob` once its size, key id and signature check out. `what` prefixes
// every error ("assertion", "snapshot").
Result<std::string> Open(const KeyRing& keys, const std::string& signed_blob,
                         std::string_view what) {
  const std::string prefix(what);
  if (signed_blob.size() > kSignedBlobBytesMax) {
    return Status::PermissionDenied(prefix + ": too large");
  }
  v1::SignedBlob blob;
  if (signed_blob.empty() || !blob.ParseFromString(signed_blob)) {
    return Status::PermissionDenied(prefix + ": malformed");
  }
  // A blob without a key id is refused rather than tried against the current key: every signer
  // names its key, and accepting an unnamed blob would make the id optional for an attacker
  // (dropping the last field of a blob is all it takes) and every "truncated is refused"
  // property weaker. The id is echoed in a reason only once it is known to be 16 hex digits:
  // it comes from the sender and ends up in logs.
  if (blob.key_id().empty()) return Status::PermissionDenied(prefix + ": no key id");
  if (!IsKeyId(blob.key_id())) return Status::PermissionDenied(prefix + ": malformed key id");
  const VerifyKey* key = keys.Find(blob.key_id());
  if (key == nullptr) {
    return Status::PermissionDenied(prefix + ": unknown key id " + blob.key_id() +
                                    " (this verifier holds " + keys.Ids() + ")");
  }
  if (blob.signature().size() != kSignatureBytes ||
      !key->Verify(blob.payload(), blob.signature())) {
    return Status::PermissionDenied(prefix + ": bad signature");
  }
  return std::move(*blob.mutable_payload());
}

bool FieldOk(const std::string& field, bool required) {
  return field.size() <= kDocumentFieldBytesMax && (!required || !field.empty());
}

}  // namespace

// ------------------------------------------------------------------ assertions

namespace {

std::string SealAssertion(const SigningKey& key, const Assertion& fields, int64_t expires_unix_ms) {
  v1::Assertion assertion;
  assertion.set_account_id(fields.account_id);
  assertion.set_character(fields.character);
  assertion.set_expires_unix_ms(expires_unix_ms);
  assertion.set_nonce(fields.nonce);
  assertion.set_gate_id(fields.gate_id);
  assertion.set_roles(fields.roles);
  return Seal(key, assertion.SerializeAsString());
}

}  // namespace

std::string IssueAssertion(const SigningKey& key, int64_t account_id, const std::string& character,
                           const std::string& gate_id, int64_t ttl_ms, const Clock& clock,
                           Roles roles) {
  Assertion fields;
  fields.roles = roles;
  fields.account_id = account_id;
  fields.character = character;
  fields.nonce = RandomToken();
  fields.gate_id = gate_id;
  return SealAssertion(key, fields, WallUnixMs(clock) + ttl_ms);
}

std::string RenewAssertion(const SigningKey& key, const Assertion& current, int64_t ttl_ms,
                           const Clock& clock) {
  return SealAssertion(key, current, WallUnixMs(clock) + ttl_ms);
}

Result<Assertion> VerifyAssertion(const KeyRing& keys, const std::string& signed_blob,
                                  const Clock& clock) {
  return VerifyStaleAssertion(keys, signed_blob, clock, 0);
}

Result<Assertion> VerifyStaleAssertion(const KeyRing& keys, const std::string& signed_blob,
                                       const Clock& clock, int64_t stale_ms_max) {
  auto payload = Open(keys, signed_blob, "assertion");
  if (!payload.ok()) return payload.status();
  v1::Assertion parsed;
  // An assertion bound to no gate would be good through every gate: none is issued, none taken.
  if (!parsed.ParseFromString(*payload) || !FieldOk(parsed.character(), /*required=*/true) ||
      !FieldOk(parsed.nonce(), /*required=*/true) ||
      !FieldOk(parsed.gate_id(), /*required=*/true) || !RolesKnown(parsed.roles())) {
    // A role this build does not know is refused rather than dropped: granting it meant
    // something to the signer, and a world that ignored it would run the player as less (or,
    // for a future role that limits, as more) than they are.
    return Status::PermissionDenied("assertion: malformed");
  }
  // The allowance comes off the clock's reading, not onto the signed expiry: an expiry near
  // INT64_MAX plus the allowance would wrap.
  if (WallUnixMs(clock) - stale_ms_max >= parsed.expires_unix_ms()) {
    return Status::PermissionDenied("assertion: expired");
  }
  Assertion out;
  out.account_id = parsed.account_id();
  out.character = std::move(*parsed.mutable_character());
  out.expires_unix_ms = parsed.expires_unix_ms();
  out.nonce = std::move(*parsed.mutable_nonce());
  out.gate_id = std::move(*parsed.mutable_gate_id());
  out.roles = parsed.roles();
  return out;
}

// ------------------------------------------------------------------ handoff snapshots

std::string SignSnapshot(const SigningKey& key, const HandoffSnapshot& snapshot) {
  v1::HandoffSnapshot message;
  message.set_character(snapshot.character);
  message.set_account_id(snapshot.account_id);
  message.set_state_json(snapshot.state_json);
  message.set_zone(snapshot.zone);
  message.set_placement_epoch(snapshot.placement_epoch);
  message.set_nonce(snapshot.nonce);
  message.set_from_shard(snapshot.from_shard);
  message.set_gate_id(snapshot.gate_id);
  message.set_session(snapshot.session);
  message.set_token(snapshot.token);
  message.set_reply_to(snapshot.reply_to);
  for (const std::string& line : snapshot.arrival) message.add_arrival(line);
  message.set_expires_unix_ms(snapshot.expires_unix_ms);
  message.set_assertion(snapshot.assertion);
  return Seal(key, message.SerializeAsString());
}

Result<HandoffSnapshot> VerifySnapshot(const KeyRing& keys, const std::string& signed_blob,
                                       const Clock& clock) {
  auto payload = Open(keys, signed_blob, "snapshot");
  if (!payload.ok()) return payload.status();
  v1::HandoffSnapshot parsed;
  bool ok = parsed.ParseFromString(*payload) && FieldOk(parsed.character(), /*required=*/true) &&
            parsed.state_json().size() <= kSnapshotStateBytesMax && FieldOk(parsed.zone(), false) &&
            FieldOk(parsed.nonce(), false) && FieldOk(parsed.from_shard(), false) &&
            FieldOk(parsed.gate_id(), false) && FieldOk(parsed.token(), false) &&
            FieldOk(parsed.reply_to(), false) &&
            static_cast<size_t>(parsed.arrival_size()) <= kSnapshotArrivalLinesMax &&
            parsed.assertion().size() <= kSnapshotAssertionBytesMax;
  for (int i = 0; ok && i < parsed.arrival_size(); ++i) {
    ok = parsed.arrival(i).size() <= kSnapshotArrivalLineBytesMax;
  }
  if (!ok) return Status::PermissionDenied("snapshot: malformed");
  if (WallUnixMs(clock) >= parsed.expires_unix_ms()) {
    return Status::PermissionDenied("snapshot: expired");
  }
  HandoffSnapshot out;
  out.character = std::move(*parsed.mutable_character());
  out.account_id = parsed.account_id();
  out.state_json = std::move(*parsed.mutable_state_json());
  out.zone = std::move(*parsed.mutable_zone());
  out.placement_epoch = parsed.placement_epoch();
  out.nonce = std::move(*parsed.mutable_nonce());
  out.from_shard = std::move(*parsed.mutable_from_shard());
  out.gate_id = std::move(*parsed.mutable_gate_id());
  out.session = parsed.session();
  out.token = std::move(*parsed.mutable_token());
  out.reply_to = std::move(*parsed.mutable_reply_to());
  out.arrival.reserve(static_cast<size_t>(parsed.arrival_size()));
  for (std::string& line : *parsed.mutable_arrival()) out.arrival.push_back(std::move(line));
  out.expires_unix_ms = parsed.expires_unix_ms();
  out.assertion = std::move(*parsed.mutable_assertion());
  return out;
}

// ------------------------------------------------------------------ tokens

std::string RandomToken(size_t bytes) {
  internal::EnsureSodium();
  std::string raw(bytes, '\0');
  if (bytes > 0) randombytes_buf(raw.data(), raw.size());
  return internal::HexEncode(reinterpret_cast<const unsigned char*>(raw.data()), raw.size());
}

}  // namespace telos::auth
