// Digest: SHA-256 and HMAC-SHA256 (OpenSSL underneath) and the hex form hashes are published in.
//
// Thread safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "telos/base/status.h"

namespace telos::arcade {

using Hash = std::array<uint8_t, 32>;

Hash Sha256(std::string_view bytes);
Hash Sha256(const Hash& hash);
Hash HmacSha256(const Hash& key, std::string_view message);

// 64 lower-case hex digits.
std::string ToHex(const Hash& hash);
// Parses 64 hex digits (either case) and nothing else; InvalidArgument otherwise. Used on what
// a player pastes into the verifier, so any input is safe.
Result<Hash> HashFromHex(std::string_view text);

}  // namespace telos::arcade
