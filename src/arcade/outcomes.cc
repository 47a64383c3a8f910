#include "telos/arcade/outcomes.h"

#include <algorithm>
#include <cmath>

#include "telos/base/assert.h"
#include "telos/base/limits.h"

namespace telos::arcade {
namespace {

constexpr uint64_t kTwo52 = uint64_t{1} << 52;
constexpr double kGrowthPerMs = 0.00006;

// 128-bit intermediates keep stake × multiplier products exact; __extension__
// tells -Wpedantic the GCC/Clang type is meant.
__extension__ typedef unsigned __int128 Uint128;
__extension__ typedef __int128 Int128;

}  // namespace

Hash OutcomeHash(const Hash& round_hash, std::string_view public_seed) {
  return HmacSha256(round_hash, public_seed);
}

uint64_t Outcome52(const Hash& outcome) {
  uint64_t value = 0;
  for (int i = 0; i < 7; ++i) value = (value << 8) | outcome[static_cast<size_t>(i)];
  return value >> 4;  // 56 bits read, the first 52 kept
}

int64_t CrashPointX100(const Hash& outcome, int64_t edge_bp) {
  const uint64_t r = Outcome52(outcome);
  const Uint128 numerator = static_cast<Uint128>(10'000 - edge_bp) * static_cast<Uint128>(kTwo52);
  const Uint128 denominator = static_cast<Uint128>(100) * (kTwo52 - r);
  const Uint128 x100 = numerator / denominator;
  if (x100 >= static_cast<Uint128>(limits::kArcadeCrashX100Max)) {
    return limits::kArcadeCrashX100Max;
  }
  return std::max<int64_t>(100, static_cast<int64_t>(x100));
}

int64_t DiceRoll(const Hash& outcome) {
  const Uint128 scaled = static_cast<Uint128>(Outcome52(outcome)) * 10'000;
  return static_cast<int64_t>(scaled >> 52);
}

int64_t DicePayout(int64_t stake, int64_t target, int64_t edge_bp) {
  RELEASE_ASSERT(stake >= 0 && target >= limits::kArcadeDiceTargetMin &&
                     target <= limits::kArcadeDiceTargetMax,
                 "a dice payout outside its bounds");
  const Int128 payout = static_cast<Int128>(stake) * (10'000 - edge_bp) / target;
  return static_cast<int64_t>(payout);
}

int64_t CrashPayout(int64_t stake, int64_t cashout_x100) {
  return static_cast<int64_t>(static_cast<Int128>(stake) * cashout_x100 / 100);
}

int64_t CrashCurveX100(int64_t elapsed_ms) {
  if (elapsed_ms <= 0) return 100;
  const double x100 = std::floor(100.0 * std::exp(static_cast<double>(elapsed_ms) * kGrowthPerMs));
  if (x100 >= static_cast<double>(limits::kArcadeCrashX100Max)) return limits::kArcadeCrashX100Max;
  return static_cast<int64_t>(x100);
}

int64_t CrashCurveMsFor(int64_t x100) {
  if (x100 <= 100) return 0;
  // A first guess from the inverse, then a walk to the exact first millisecond, so that the
  // answer agrees with CrashCurveX100 whatever the rounding of log and exp.
  int64_t ms = static_cast<int64_t>(std::log(static_cast<double>(x100) / 100.0) / kGrowthPerMs);
  while (ms > 0 && CrashCurveX100(ms - 1) >= x100) --ms;
  while (CrashCurveX100(ms) < x100) ++ms;
  return ms;
}

}  // namespace telos::arcade
