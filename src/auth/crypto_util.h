// Private helpers shared by keys.cc and documents.cc: libsodium initialisation and hex encoding.
// Not part of the module's public surface.
#pragma once

#include <cstddef>
#include <string>

namespace telos::auth::internal {

// Initialises libsodium once per process (thread-safe); every function that calls libsodium
// calls this first. Aborts if libsodium cannot initialise: nothing in this module can work then.
void EnsureSodium();

// Lower-case hex of `size` bytes at `data`.
std::string HexEncode(const unsigned char* data, size_t size);

}  // namespace telos::auth::internal
