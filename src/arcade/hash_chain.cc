#include "telos/arcade/hash_chain.h"

#include <algorithm>

#include "telos/base/assert.h"
#include "telos/base/limits.h"

namespace telos::arcade {

Result<HashChain> HashChain::Generate(std::string_view secret, int64_t length) {
  if (secret.empty()) return Status::InvalidArgument("a hash chain needs a non-empty secret");
  if (length < 1 || length > limits::kArcadeChainLengthMax) {
    return Status::InvalidArgument("a hash chain is 1.." +
                                   std::to_string(limits::kArcadeChainLengthMax) +
                                   " hashes long, not " + std::to_string(length));
  }
  HashChain chain;
  chain.length_ = length;
  Hash g = Sha256(secret);
  for (int64_t k = 0; k < length; ++k) {
    if (k % kStride == 0) chain.checkpoints_.push_back(g);
    g = Sha256(g);
  }
  chain.commitment_ = g;  // g[length]
  return chain;
}

Hash HashChain::Generated(int64_t index) {
  const int64_t base = index / kStride;
  if (base != cached_base_) {
    cached_.clear();
    Hash g = checkpoints_[static_cast<size_t>(base)];
    const int64_t end = std::min(kStride, length_ - base * kStride);
    for (int64_t i = 0; i < end; ++i) {
      cached_.push_back(g);
      g = Sha256(g);
    }
    cached_base_ = base;
  }
  return cached_[static_cast<size_t>(index - base * kStride)];
}

Result<Hash> HashChain::RoundHash(int64_t position) {
  if (position < 0 || position >= length_) {
    return Status::FailedPrecondition("the hash chain of " + std::to_string(length_) +
                                      " rounds has no position " + std::to_string(position) +
                                      ": publish a new chain");
  }
  return Generated(length_ - 1 - position);
}

bool VerifyAgainstNext(const Hash& revealed, const Hash& next) {
  return Sha256(revealed) == next;
}

bool VerifyAgainst(const Hash& revealed, const Hash& later, int64_t max_steps) {
  RELEASE_ASSERT(max_steps <= limits::kArcadeChainLengthMax, "a verification beyond any chain");
  Hash h = revealed;
  for (int64_t step = 0; step < max_steps; ++step) {
    h = Sha256(h);
    if (h == later) return true;
  }
  return false;
}

}  // namespace telos::arcade
