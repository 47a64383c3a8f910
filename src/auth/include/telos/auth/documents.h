// The fleet's signed documents, carried as serialized telos.v1.SignedBlob bytes
// (schema/proto/telos/v1/fleet.proto): the payload bytes, an Ed25519 signature over exactly
// those bytes and the signing key's id. Verification checks size, picks the key by its id from
// the verifier's KeyRing, checks the signature, then parses, then checks expiry against the
// caller's clock; every failure is PermissionDenied with a short reason ("unknown key id ...",
// "no key id", "bad signature", "expired", "malformed"), never a crash.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "telos/auth/keys.h"
#include "telos/base/clock.h"
#include "telos/base/roles.h"
#include "telos/base/status.h"

namespace telos::auth {

// "This account may play this character through this gate until then": what a world admits a
// character on. It is a bearer token, so it is bound to the gate it was issued for (a world
// refuses it on another gate's stream) and short-lived (the gate renews it while the session
// lives); the nonce names the session, and a world refuses a second session presenting it.
struct Assertion {
  int64_t account_id = 0;
  std::string character;  // display name
  int64_t expires_unix_ms = 0;
  std::string nonce;    // per session, random
  std::string gate_id;  // the gate it was issued for
  // The account's staff roles as the account service signed them. Signed like every other
  // field, so a player cannot raise their own: a changed bit breaks the signature.
  Roles roles = kRolePlayer;
};

// Issues an assertion for `gate_id` valid for `ttl_ms` from the clock's wall time, with a fresh
// random nonce. Returns the serialized SignedBlob. `roles` are the account's staff roles
// (REQUIRES: RolesKnown(roles)).
std::string IssueAssertion(const SigningKey& key, int64_t account_id, const std::string& character,
                           const std::string& gate_id, int64_t ttl_ms, const Clock& clock,
                           Roles roles = kRolePlayer);
// The same session's assertion again (account, character, nonce, gate and roles of `current`),
// valid for `ttl_ms` from now. The caller has verified `current`.
std::string RenewAssertion(const SigningKey& key, const Assertion& current, int64_t ttl_ms,
                           const Clock& clock);
// Every failure is PermissionDenied; an assertion without a gate id, or with a role bit no role
// uses, is "malformed".
Result<Assertion> VerifyAssertion(const KeyRing& keys, const std::string& signed_blob,
                                  const Clock& clock);
// As VerifyAssertion, but an assertion up to `stale_ms_max` past its expiry is still accepted:
// for a staff order another world sends, which proves who issued it and with which roles
// (limits.h kStaffAssertionStaleMsMax says why that may be older than a login's). Never for
// admitting a character. REQUIRES: stale_ms_max >= 0.
Result<Assertion> VerifyStaleAssertion(const KeyRing& keys, const std::string& signed_blob,
                                       const Clock& clock, int64_t stale_ms_max);

struct HandoffSnapshot {
  std::string character;
  int64_t account_id = 0;
  std::string state_json;
  std::string zone;
  uint64_t placement_epoch = 0;
  std::string nonce;
  std::string from_shard;
  std::string gate_id;
  uint64_t session = 0;
  std::string token;
  std::string reply_to;
  std::vector<std::string> arrival;
  int64_t expires_unix_ms = 0;
  std::string assertion;  // the player's serialized SignedBlob assertion
};

// Signs the snapshot (its expires_unix_ms is set by the caller). Returns the SignedBlob bytes.
std::string SignSnapshot(const SigningKey& key, const HandoffSnapshot& snapshot);
Result<HandoffSnapshot> VerifySnapshot(const KeyRing& keys, const std::string& signed_blob,
                                       const Clock& clock);

// A random token of `bytes` random bytes as lower-case hex (nonces, handoff tokens).
std::string RandomToken(size_t bytes = 16);

}  // namespace telos::auth
