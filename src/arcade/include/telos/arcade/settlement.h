// Settlement and refund postings: how a round's escrow is emptied, exactly once.
//
// A round's stakes sit in its escrow ("escrow:<game>:<chain>:<position>"). The settlement moves
// the escrow to the winners (their payouts) and the house (the rest, or the house pays the
// difference when payouts exceed the stakes) in one posting keyed "settle:<escrow>" that closes
// the escrow. A round that never settles (its driver died) is refunded by RefundEscrow: every
// stake back to whoever paid it, in one posting keyed "refund:<escrow>" that closes the escrow.
// The ledger closes an escrow once (ledger.h), so a takeover driver and a periodic sweep
// refunding the same round, or a late settlement racing a refund, pay each stake exactly once:
// the first closer wins; a second refunder replays the same key; anything else is refused.
//
// Thread safety: pure functions, except RefundEscrow and SweepUnsettled, which call the Ledger
// (BLOCKING) and are safe from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "telos/arcade/ledger.h"
#include "telos/base/status.h"

namespace telos::arcade {

struct Payout {
  std::string player;  // the account name, "player:<name>"
  int64_t stake = 0;
  int64_t payout = 0;  // 0 for a loss; stake included for a win
};

// The settlement posting of `escrow` holding the sum of every stake in `payouts`. REQUIRES: one
// entry per player (an account appears once in a posting). Empty key when nothing was staked.
Posting SettlementPosting(const std::string& escrow, const std::vector<Payout>& payouts);

enum class RefundOutcome {
  kRefunded,       // this call's posting returned the stakes
  kAlreadyClosed,  // settled or refunded before (by anyone, this refund key included)
  kNothingHeld,    // the escrow holds nothing
};

// Refunds every stake in `escrow` unless it is closed already (see the header comment).
Result<RefundOutcome> RefundEscrow(Ledger& ledger, std::string_view escrow);

struct SweepResult {
  int refunded = 0;
  int already_closed = 0;
  int failed = 0;  // errors are retried by the next sweep
};

// The periodic reconciliation: refunds every open escrow whose name starts with `prefix`
// ("escrow:crash:") for which is_live says no round is using it, up to
// kArcadeOpenEscrowsPerSweepMax escrows per call.
Result<SweepResult> SweepUnsettled(Ledger& ledger, std::string_view prefix,
                                   const std::function<bool(std::string_view)>& is_live);

}  // namespace telos::arcade
