#include "telos/arcade/digest.h"

#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "telos/base/assert.h"

namespace telos::arcade {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

Hash Sha256(std::string_view bytes) {
  Hash out;
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), out.data());
  return out;
}

Hash Sha256(const Hash& hash) {
  Hash out;
  SHA256(hash.data(), hash.size(), out.data());
  return out;
}

Hash HmacSha256(const Hash& key, std::string_view message) {
  Hash out;
  unsigned int length = 0;
  const unsigned char* done = HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
                                   reinterpret_cast<const unsigned char*>(message.data()),
                                   message.size(), out.data(), &length);
  RELEASE_ASSERT(done != nullptr && length == out.size(), "HMAC-SHA256 failed");
  return out;
}

std::string ToHex(const Hash& hash) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(64);
  for (uint8_t byte : hash) {
    out += kDigits[byte >> 4];
    out += kDigits[byte & 0xf];
  }
  return out;
}

Result<Hash> HashFromHex(std::string_view text) {
  if (text.size() != 64) {
    return Status::InvalidArgument("a hash is 64 hex digits, not " + std::to_string(text.size()) +
                                   " characters");
  }
  Hash out;
  for (size_t i = 0; i < out.size(); ++i) {
    const int high = HexValue(text[2 * i]);
    const int low = HexValue(text[2 * i + 1]);
    if (high < 0 || low < 0) {
      return Status::InvalidArgument("a hash has a character that is not a hex digit at " +
                                     std::to_string(high < 0 ? 2 * i : 2 * i + 1));
    }
    out[i] = static_cast<uint8_t>(high * 16 + low);
  }
  return out;
}

}  // namespace telos::arcade
