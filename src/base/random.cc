#include "telos/base/random.h"

#include <algorithm>

#include "telos/base/assert.h"

namespace telos {

// The standard distributions are not specified bit-for-bit across library versions, so the
// mapping from engine output to a value is done here, where it is the same everywhere.

int64_t Random::Uniform(int64_t lo, int64_t hi) {
  RELEASE_ASSERT(lo <= hi, "Uniform needs lo <= hi");
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
  if (span == 0) return static_cast<int64_t>(engine_());  // the whole 64-bit range
  // Rejection sampling keeps the result unbiased.
  const uint64_t limit = UINT64_MAX - (UINT64_MAX % span);
  uint64_t x;
  do {
    x = engine_();
  } while (x >= limit);
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + x % span);
}

double Random::Unit() {
  // 53 random bits -> a double in [0, 1).
  return static_cast<double>(engine_() >> 11) * 0x1.0p-53;
}

bool Random::Chance(double p) {
  p = std::clamp(p, 0.0, 1.0);
  return Unit() < p;
}

}  // namespace telos
