// Password hashing with argon2id (libsodium), and the rules a new password must meet.
//
// Hash() produces a self-describing "$argon2id$..." string with a fresh salt; Verify() checks a
// password against one in constant time. The default cost follows OWASP's minimum for argon2id
// (19 MiB of memory, 2 passes). Hashing is deliberately slow (tens of milliseconds): call it on
// a blocking pool, never on an event loop or a zone executor.
//
// Thread safety: stateless after construction; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "telos/base/status.h"

namespace telos::account {

struct PasswordCost {
  uint64_t passes = 2;                                             // argon2 "t"
  size_t memory_bytes = size_t{19} << 20;                          // argon2 "m": 19 MiB
  static PasswordCost ForTests() { return {1, size_t{8} << 10}; }  // libsodium's minimum
};

class PasswordHasher {
 public:
  explicit PasswordHasher(PasswordCost cost = {});
  // ResourceExhausted if the machine cannot spare the memory right now.
  Result<std::string> Hash(std::string_view password) const;
  bool Verify(std::string_view encoded_hash, std::string_view password) const;

 private:
  PasswordCost cost_;
};

inline constexpr size_t kPasswordBytesMin = 8;
inline constexpr size_t kPasswordBytesMax = 128;

// InvalidArgument with a sentence a player can act on.
Status ValidateNewPassword(std::string_view password, std::string_view account_name);

}  // namespace telos::account
