#include "telos/arcade/settlement.h"

#include "telos/base/limits.h"

namespace telos::arcade {

Posting SettlementPosting(const std::string& escrow, const std::vector<Payout>& payouts) {
  Posting posting;
  int64_t staked = 0;
  int64_t paid = 0;
  for (const Payout& p : payouts) {
    staked += p.stake;
    paid += p.payout;
  }
  if (staked == 0) return posting;
  posting.key = "settle:" + escrow;
  posting.closes_escrow = escrow;
  posting.legs.push_back({escrow, -staked});
  for (const Payout& p : payouts) {
    if (p.payout > 0) posting.legs.push_back({p.player, p.payout});
  }
  // The house keeps what the winners did not take, or pays what they took beyond the stakes.
  if (staked != paid) posting.legs.push_back({std::string(kHouseAccount), staked - paid});
  return posting;
}

Result<RefundOutcome> RefundEscrow(Ledger& ledger, std::string_view escrow) {
  auto closed = ledger.EscrowClosed(escrow);
  if (!closed.ok()) return closed.status();
  if (*closed) return RefundOutcome::kAlreadyClosed;
  auto flows = ledger.EscrowFlows(escrow);
  if (!flows.ok()) return flows.status();
  Posting refund{.key = "refund:" + std::string(escrow), .closes_escrow = std::string(escrow)};
  int64_t held = 0;
  for (const Leg& flow : *flows) held -= flow.amount;
  if (held == 0) return RefundOutcome::kNothingHeld;
  refund.legs.push_back({std::string(escrow), -held});
  for (const Leg& flow : *flows) refund.legs.push_back({flow.account, -flow.amount});
  auto posted = ledger.Post(refund);
  if (posted.ok())
    return posted->replayed ? RefundOutcome::kAlreadyClosed : RefundOutcome::kRefunded;
  if (posted.status().code() == StatusCode::kFailedPrecondition) {
    // Closed between our read and our posting (a settlement or another refunder), or a stake
    // arrived meanwhile; in the second case the next sweep refunds it with fresh flows.
    auto now_closed = ledger.EscrowClosed(escrow);
    if (now_closed.ok() && *now_closed) return RefundOutcome::kAlreadyClosed;
  }
  return posted.status();
}

Result<SweepResult> SweepUnsettled(Ledger& ledger, std::string_view prefix,
                                   const std::function<bool(std::string_view)>& is_live) {
  auto open = ledger.OpenEscrows(prefix, limits::kArcadeOpenEscrowsPerSweepMax);
  if (!open.ok()) return open.status();
  SweepResult result;
  for (const std::string& escrow : *open) {
    if (is_live(escrow)) continue;
    auto refunded = RefundEscrow(ledger, escrow);
    if (!refunded.ok()) {
      ++result.failed;
    } else if (*refunded == RefundOutcome::kRefunded) {
      ++result.refunded;
    } else {
      ++result.already_closed;
    }
  }
  return result;
}

}  // namespace telos::arcade
