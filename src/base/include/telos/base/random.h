// Random: the only source of randomness for game and distributed logic.
//
// A seeded pseudo-random generator (64-bit Mersenne Twister): the same seed gives the same
// sequence on every machine, so a simulation or a combat transcript replays from its seed.
// Production seeds it from std::random_device in main; tests pass a fixed seed.
//
// Thread safety: none. Each owner (a zone, a simulation) holds its own Random.
#pragma once

#include <cstdint>
#include <random>

namespace telos {

class Random {
 public:
  explicit Random(uint64_t seed) : seed_(seed), engine_(seed) {}

  uint64_t seed() const { return seed_; }

  // A uniformly distributed integer in [lo, hi]. REQUIRES: lo <= hi.
  int64_t Uniform(int64_t lo, int64_t hi);
  // True with probability p (clamped to [0, 1]).
  bool Chance(double p);
  // A uniformly distributed real in [0, 1).
  double Unit();
  // A fresh 64-bit value, e.g. to seed a child generator.
  uint64_t Next() { return engine_(); }

 private:
  uint64_t seed_;
  std::mt19937_64 engine_;
};

}  // namespace telos
