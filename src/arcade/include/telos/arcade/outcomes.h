// Outcomes: how a round's result follows from its hash (issue 27 item 1). Published formulas,
// so anyone holding a revealed round hash and the public seed recomputes the result.
//
//   outcome = HMAC-SHA256(key = round hash, message = public seed)
//   r       = the first 52 bits of outcome, big-endian (the first 13 hex digits), 0 <= r < 2^52
//
// Crash (a multiplier rising from 1.00x until it crashes), with house edge e (kArcadeHouseEdgeBp,
// 1% = 100 basis points):
//   crash_x100 = max(100, floor((10000 - e_bp) * 2^52 / (100 * (2^52 - r)))),
//   capped at kArcadeCrashX100Max. For any target M >= 1.01x, P(crash >= M) = (1 - e) / M, so a
//   bet cashing out at M returns (1 - e) of its stake on average whatever M is; with e = 1%,
//   about 2 rounds in 100 crash at 1.00x, before any cash-out (kArcadeCashoutX100Min) can win.
//   A cash-out at M wins M x stake when M <= crash.
//
// Dice (roll under a target T of 10,000), house edge e:
//   roll   = floor(r * 10000 / 2^52), 0 <= roll <= 9999 (uniform to within 2^-39)
//   a bet under T wins iff roll < T, and pays floor(stake * (10000 - e_bp) / T) (stake
//   included), so it too returns (1 - e) of its stake on average; T in kArcadeDiceTargetMin ..
//   kArcadeDiceTargetMax.
//
// The crash curve shown while running: multiplier_x100(t) = floor(100 * e^(t_ms * 0.00006)),
// 2.00x after about 11.6 s; the round ends at the first frame whose multiplier reaches the
// crash point.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

#include "telos/arcade/digest.h"

namespace telos::arcade {

Hash OutcomeHash(const Hash& round_hash, std::string_view public_seed);

// The first 52 bits of `outcome`.
uint64_t Outcome52(const Hash& outcome);

int64_t CrashPointX100(const Hash& outcome, int64_t edge_bp);
int64_t DiceRoll(const Hash& outcome);
// What a winning dice bet of `stake` under `target` pays (stake included).
// REQUIRES: stake >= 0, kArcadeDiceTargetMin <= target <= kArcadeDiceTargetMax.
int64_t DicePayout(int64_t stake, int64_t target, int64_t edge_bp);
// What a crash bet of `stake` cashed out at `cashout_x100` pays (stake included).
int64_t CrashPayout(int64_t stake, int64_t cashout_x100);

// The multiplier shown `elapsed_ms` into a running crash round, x100 (capped at
// kArcadeCrashX100Max), and the first elapsed ms at which it reaches `x100`.
int64_t CrashCurveX100(int64_t elapsed_ms);
int64_t CrashCurveMsFor(int64_t x100);

}  // namespace telos::arcade
