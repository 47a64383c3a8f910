// Ed25519 keys and signatures (libsodium), and the two signed documents of the fleet:
//   - the login **assertion** the account service issues ("account A may play character C until
//     T, session nonce N"), which worlds verify offline with the account service's public key;
//   - the **handoff snapshot** one world sends another, signed with the fleet's handoff key.
//
// Key files hold hex text (one line, optional trailing newline): a signing key file holds the
// 32-byte seed (64 hex digits); a verify key file holds the 32-byte public key. A signing key
// file must not be readable by group or others (InvalidArgument naming the file otherwise).
//
// Everything here is thread-safe: keys are immutable after construction.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "telos/base/limits.h"
#include "telos/base/status.h"

namespace telos::auth {

inline constexpr size_t kSeedBytes = 32;
inline constexpr size_t kPublicKeyBytes = 32;
inline constexpr size_t kSignatureBytes = 64;
// A signed document larger than this is refused before it is verified or parsed.
inline constexpr size_t kSignedBlobBytesMax = limits::kSignedBlobBytesMax;

class VerifyKey {
 public:
  // InvalidArgument unless `hex` is exactly 64 hex digits.
  static Result<VerifyKey> FromHex(std::string_view hex);
  static Result<VerifyKey> LoadFile(const std::string& path);
  std::string Hex() const;
  // True when `signature` is a valid signature of `message` under this key.
  bool Verify(std::string_view message, std::string_view signature) const;

 private:
  std::array<unsigned char, kPublicKeyBytes> public_key_{};
  friend class SigningKey;
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
  // The 64-byte detached signature of `message`.
  std::string Sign(std::string_view message) const;

 private:
  std::array<unsigned char, 64> secret_key_{};  // libsodium's seed + public key form
  VerifyKey verify_;
};

}  // namespace telos::auth
