// HashChain: the provably fair sequence of round hashes (issue 27 item 1), the way the
// crash-game industry does it.
//
// Generation, ahead of time, from a secret only the house knows:
//   g[0] = SHA-256(secret), g[k+1] = SHA-256(g[k]) for k < length.
// The chain's end g[length] is published before any round is played (the commitment). Rounds
// play the chain in REVERSE: the round at position p (0, 1, 2, ... claimed durably from the
// ledger, arcade::Ledger::ClaimChainPosition) uses
//   round_hash(p) = g[length - 1 - p],
// so SHA-256(round_hash(p)) = round_hash(p - 1), and SHA-256(round_hash(0)) = the commitment.
// Revealing a round hash therefore proves it was fixed when the commitment was published: the
// house could not choose it later, and nobody can compute the next round's hash from revealed
// ones (that would invert SHA-256). A position skipped (a round lost in a failover) breaks
// nothing: the next revealed hash verifies by hashing twice.
//
// The outcome of a round also depends on a public seed the house cannot choose (fixed after the
// commitment is published, e.g. a value announced later by a third party): see outcomes.h.
//
// Memory: a chain of up to kArcadeChainLengthMax hashes is not kept whole. Every kStride-th
// hash is kept (a checkpoint) and a round hash is recomputed from the checkpoint below it, at
// most kStride - 1 hashes of work; the segment last recomputed is cached, since rounds move
// through one segment in order.
//
// Thread safety: none (const methods mutate the cache). The game's driver owns its chain.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "telos/arcade/digest.h"
#include "telos/base/status.h"

namespace telos::arcade {

class HashChain {
 public:
  static constexpr int64_t kStride = 1024;

  // Generates the chain: `length` hashes of work. REQUIRES: a non-empty secret and
  // 1 <= length <= kArcadeChainLengthMax (else InvalidArgument).
  static Result<HashChain> Generate(std::string_view secret, int64_t length);

  int64_t length() const { return length_; }
  // g[length], published before the first round.
  const Hash& commitment() const { return commitment_; }

  // The hash of the round at `position`. REQUIRES: 0 <= position < length() (else
  // FailedPrecondition: the chain is used up and a new one must be published).
  Result<Hash> RoundHash(int64_t position);

 private:
  HashChain() = default;
  // g[index], from the checkpoint at or below it.
  Hash Generated(int64_t index);

  int64_t length_ = 0;
  Hash commitment_{};
  std::vector<Hash> checkpoints_;  // g[0], g[kStride], g[2 kStride], ...
  int64_t cached_base_ = -1;       // the checkpoint index the cache starts at
  std::vector<Hash> cached_;       // g[cached_base_ * kStride + i]
};

// True when `revealed` is the hash of the round right after the one whose hash is `next`
// (next = SHA-256(revealed)): the check anyone can make between two consecutive rounds.
bool VerifyAgainstNext(const Hash& revealed, const Hash& next);

// True when hashing `revealed` between 1 and `max_steps` times gives `later`: a round hash
// checked against an earlier-revealed one across skipped positions, or against the commitment
// (later = commitment, max_steps = position + 1). REQUIRES: max_steps <= kArcadeChainLengthMax.
bool VerifyAgainst(const Hash& revealed, const Hash& later, int64_t max_steps);

}  // namespace telos::arcade
