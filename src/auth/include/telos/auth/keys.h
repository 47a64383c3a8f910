// Ed25519 keys and signatures (libsodium), and the two signed documents of the fleet:
//   - the login **assertion** the account service issues ("account A may play character C until
//     T, session nonce N"), which worlds verify offline with the account service's public key;
//   - the **handoff snapshot** one world sends another, signed with the fleet's handoff key.
//
// Key files hold hex text (one line, optional trailing newline): a signing key file holds the
// 32-byte seed (64 hex digits); a verify key file holds the 32-byte public key. A signing key
// file must not be readable by group or others (InvalidArgument naming the file otherwise).
//
// Every key has a **key id**: 16 lower-case hex digits, the first 8 bytes of the BLAKE2b hash of
// its public key. Every signed document names the id of the key that signed it, and a verifier
// looks the id up in its KeyRing (the current key and, during a rotation, the previous one).
// The id is derived rather than stored with the key so that it can never disagree with the key:
// there is no third file to copy and keep in step, a signer and its verifiers compute the same id
// independently, and a key file written before ids existed has one. The id is a name, not a
// credential: a forged or colliding id only selects a key whose signature check then fails.
//
// Everything here is thread-safe: keys are immutable after construction.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "telos/base/config.h"
#include "telos/base/limits.h"
#include "telos/base/status.h"

namespace telos::auth {

inline constexpr size_t kSeedBytes = 32;
inline constexpr size_t kPublicKeyBytes = 32;
inline constexpr size_t kSignatureBytes = 64;
// A key id is this many hex digits (half as many bytes of the public key's hash).
inline constexpr size_t kKeyIdChars = 16;
// A signed document larger than this is refused before it is verified or parsed.
inline constexpr size_t kSignedBlobBytesMax = limits::kSignedBlobBytesMax;

class VerifyKey {
 public:
  // The all-zero public key, which verifies nothing.
  VerifyKey();
  // InvalidArgument unless `hex` is exactly 64 hex digits.
  static Result<VerifyKey> FromHex(std::string_view hex);
  static Result<VerifyKey> LoadFile(const std::string& path);
  std::string Hex() const;
  // This key's id (see above). A default-constructed key, which verifies nothing, has the id of
  // the all-zero public key.
  const std::string& id() const { return id_; }
  // True when `signature` is a valid signature of `message` under this key.
  bool Verify(std::string_view message, std::string_view signature) const;

 private:
  // Recomputes id_ from public_key_; every constructor and factory calls it last.
  void SetId();

  std::array<unsigned char, kPublicKeyBytes> public_key_{};
  std::string id_;
  friend class SigningKey;
};

// The public keys a verifier accepts: the current key and, while a rotation rolls through the
// fleet, the previous one. Two and no more: a key two rotations old is refused, so a retired
// key stops working once the rotation after it has rolled out. A ring of one key is what a
// verifier holds outside a rotation; the implicit conversion lets a VerifyKey stand for it.
// Immutable and copyable (two 32-byte keys); thread-safe.
class KeyRing {
 public:
  KeyRing(const VerifyKey& current);  // NOLINT(google-explicit-constructor): a ring of one
  // A `previous` equal to `current` adds nothing and is dropped.
  KeyRing(const VerifyKey& current, std::optional<VerifyKey> previous);

  // The key whose id is `key_id`, or null when the ring holds no such key.
  const VerifyKey* Find(std::string_view key_id) const;
  const VerifyKey& current() const { return current_; }
  const std::optional<VerifyKey>& previous() const { return previous_; }
  // "<current id>" or "<current id>, <previous id>", for logs and error messages.
  std::string Ids() const;

 private:
  VerifyKey current_;
  std::optional<VerifyKey> previous_;
};

class SigningKey {
 public:
  // A fresh random key.
  static SigningKey Generate();
  static Result<SigningKey> FromSeedHex(std::string_view hex);
  static Result<SigningKey> LoadFile(const std::string& path);
  // Writes `<dir>/<name>.key` (seed, mode 0600) and `<dir>/<name>.pub` (public key).
  // AlreadyExists if either file exists (keys are never overwritten).
  Status WriteFiles(const std::string& dir, const std::string& name) const;

  std::string SeedHex() const;
  const VerifyKey& verify_key() const { return verify_; }
  // The id of this key pair (its public key's id), which every document it seals carries.
  const std::string& id() const { return verify_.id(); }
  // The 64-byte detached signature of `message`.
  std::string Sign(std::string_view message) const;

 private:
  std::array<unsigned char, 64> secret_key_{};  // libsodium's seed + public key form
  VerifyKey verify_;
};

// An optional public key named by configuration in Config::Secret's two forms: `variable` holds
// its 64 hex digits, or `variable`_FILE names a file holding them (a `.pub` file as keygen
// writes it). Empty when neither is set; InvalidArgument naming the variable when the value is
// not a key or both forms are set. A public key is no secret, but one variable shape for every
// key and token is what operators and their secret mounts already handle.
Result<std::optional<VerifyKey>> VerifyKeyFromConfig(const Config& config,
                                                     std::string_view variable);

// What RotateKeyFiles did, by key id.
struct KeyRotation {
  std::string current_id;   // the new pair, now `<name>.key` / `<name>.pub`
  std::string previous_id;  // the pair it replaced, now `<name>.previous.key` / `.previous.pub`
  std::string dropped_id;   // the pair two rotations old that was deleted; empty if there was none
};

// Rotates the pair `<dir>/<name>.key` / `<dir>/<name>.pub` in place: the pair becomes
// `<name>.previous.key` / `<name>.previous.pub` (replacing, and so retiring for good, the pair
// two rotations old) and a fresh pair takes the plain names. The names stay fixed so that
// verifiers configured once (current = `<name>.pub`, previous = `<name>.previous.pub`) need no
// configuration change per rotation, only restarts in the right order. Signers do: from the
// moment this returns `<name>.key` is the new key, so a signer that starts (on purpose or after
// a crash) before every verifier holds the new public key must be given `<name>.previous.key`,
// or its documents are refused as of an unknown key (for the handoff key, which every world
// signs with, that is the whole first pass of the roll).
// NotFound when there is no pair to rotate; FailedPrecondition when `<name>.pub` is not the
// public half of `<name>.key` (the files were mixed up: rotating would retire the wrong key);
// AlreadyExists when `<name>.next.*` is left from an interrupted rotation (delete it to retry).
Result<KeyRotation> RotateKeyFiles(const std::string& dir, const std::string& name);

}  // namespace telos::auth
