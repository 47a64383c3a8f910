#include "telos/account/passwords.h"

#include <sodium.h>

#include <algorithm>
#include <cctype>

#include "telos/base/assert.h"

namespace telos::account {

PasswordHasher::PasswordHasher(PasswordCost cost) : cost_(cost) {
  RELEASE_ASSERT(sodium_init() >= 0, "libsodium failed to initialise");
}

Result<std::string> PasswordHasher::Hash(std::string_view password) const {
  char out[crypto_pwhash_STRBYTES];
  if (crypto_pwhash_str_alg(out, password.data(), password.size(), cost_.passes, cost_.memory_bytes,
                            crypto_pwhash_ALG_ARGON2ID13) != 0) {
    return Status::ResourceExhausted("not enough memory to hash a password right now");
  }
  return std::string(out);
}

bool PasswordHasher::Verify(std::string_view encoded_hash, std::string_view password) const {
  if (encoded_hash.size() >= crypto_pwhash_STRBYTES) return false;
  char hash[crypto_pwhash_STRBYTES] = {};
  std::copy(encoded_hash.begin(), encoded_hash.end(), hash);
  return crypto_pwhash_str_verify(hash, password.data(), password.size()) == 0;
}

Status ValidateNewPassword(std::string_view password, std::string_view account_name) {
  if (password.size() < kPasswordBytesMin) {
    return Status::InvalidArgument("A password needs at least " +
                                   std::to_string(kPasswordBytesMin) + " characters.");
  }
  if (password.size() > kPasswordBytesMax) {
    return Status::InvalidArgument("A password may have at most " +
                                   std::to_string(kPasswordBytesMax) + " characters.");
  }
  const auto lower = [](std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
  };
  if (!account_name.empty() && lower(password).find(lower(account_name)) != std::string::npos) {
    return Status::InvalidArgument("A password must not contain the account's name.");
  }
  return Status::Ok();
}

}  // namespace telos::account
