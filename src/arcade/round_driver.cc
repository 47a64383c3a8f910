#include "telos/arcade/round_driver.h"

#include <algorithm>

#include "telos/arcade/outcomes.h"
#include "telos/arcade/settlement.h"
#include "telos/base/assert.h"

namespace telos::arcade {
namespace {

Millis Ms(int64_t ms) {
  return Millis(ms);
}

}  // namespace

std::string_view PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kIdle: return "idle";
    case Phase::kBetting: return "betting";
    case Phase::kClosing: return "closing";
    case Phase::kRunning: return "running";
    case Phase::kSettling: return "settling";
    case Phase::kSettled: return "settled";
  }
  return "unknown";
}

Status ValidateGameConfig(const GameConfig& c) {
  const bool name_ok = !c.game.empty() && c.game.size() <= 16 &&
                       std::all_of(c.game.begin(), c.game.end(), [](char ch) {
                         return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-';
                       });
  if (!name_ok) {
    return Status::InvalidArgument("game: 1..16 lower-case letters, digits or '-', not '" + c.game +
                                   "'");
  }
  if (c.public_seed.empty() || c.public_seed.size() > limits::kArcadeSeedBytesMax) {
    return Status::InvalidArgument("public_seed: 1.." +
                                   std::to_string(limits::kArcadeSeedBytesMax) + " bytes");
  }
  if (c.edge_bp < 0 || c.edge_bp >= 10'000) {
    return Status::InvalidArgument("edge_bp: 0..9999 basis points");
  }
  if (c.betting_window_ms <= 0 || c.frame_interval_ms <= 0 || c.dice_roll_ms <= 0 ||
      c.settled_pause_ms < 0) {
    return Status::InvalidArgument(
        "betting_window_ms, frame_interval_ms and dice_roll_ms must be positive, "
        "settled_pause_ms not negative");
  }
  return Status::Ok();
}

RoundDriver::RoundDriver(GameConfig config, Ledger& ledger, StakeSubmitter& stakes,
                         HashChain& chain, const Clock& clock, FrameSink on_frame)
    : config_(std::move(config)),
      ledger_(ledger),
      stakes_(stakes),
      chain_(chain),
      clock_(clock),
      on_frame_(std::move(on_frame)),
      chain_name_(config_.game + ":" + ToHex(chain.commitment()).substr(0, 16)) {
  const Status valid = ValidateGameConfig(config_);
  RELEASE_ASSERT(valid.ok(), valid.ToString());
  frame_.game = config_.game;
}

void RoundDriver::Enter(Phase phase, Instant now) {
  phase_ = phase;
  phase_started_ = now;
  Emit(now);
}

bool RoundDriver::OpenRound(Instant now) {
  // A used-up chain opens no more rounds and claims no more positions (each claim is a durable
  // write): known before claiming once this driver played the last position, else from the
  // first claim past the end (a driver starting on a chain a past run used up).
  if (exhausted_) return false;
  if (position_ + 1 >= chain_.length()) {
    exhausted_ = true;
    return false;
  }
  auto position = ledger_.ClaimChainPosition(chain_name_);
  if (!position.ok()) return false;  // the ledger is unreachable: try again next Tick
  if (*position >= chain_.length()) {
    exhausted_ = true;  // an operator publishes a new chain (a new house secret)
    return false;
  }
  auto hash = chain_.RoundHash(*position);
  if (!hash.ok()) return false;
  ++round_generation_;
  position_ = *position;
  round_hash_ = *hash;
  const Hash outcome = OutcomeHash(round_hash_, config_.public_seed);
  crash_x100_ = CrashPointX100(outcome, config_.edge_bp);
  roll_ = DiceRoll(outcome);
  escrow_ = std::string(kEscrowPrefix) + chain_name_ + ":" + std::to_string(position_);
  multiplier_x100_ = 100;
  refunded_ = false;
  bets_.clear();
  in_flight_.clear();
  Enter(Phase::kBetting, now);
  return true;
}

Instant RoundDriver::Tick() {
  const Instant now = clock_.Now();
  switch (phase_) {
    case Phase::kIdle: (void)OpenRound(now); break;
    case Phase::kBetting:
      if (now - phase_started_ >= Ms(config_.betting_window_ms)) Enter(Phase::kClosing, now);
      break;
    case Phase::kClosing: break;
    case Phase::kRunning:
      // The crash game runs below, also in the Tick that enters kRunning.
      if (config_.kind == GameKind::kDice && now - phase_started_ >= Ms(config_.dice_roll_ms)) {
        Enter(Phase::kSettling, now);
      }
      break;
    case Phase::kSettling: break;
    case Phase::kSettled:
      if (now - phase_started_ >= Ms(config_.settled_pause_ms)) (void)OpenRound(now);
      break;
  }
  // The phases that wait on something rather than on time move on as soon as it happened.
  if (phase_ == Phase::kClosing && in_flight_.empty()) Enter(Phase::kRunning, now);
  if (phase_ == Phase::kRunning && config_.kind == GameKind::kCrash) RunCrash(now);
  if (phase_ == Phase::kSettling && Settle()) Enter(Phase::kSettled, now);
  if (now - last_frame_at_ >= Ms(config_.frame_interval_ms)) Emit(now);
  return std::min(last_frame_at_ + Ms(config_.frame_interval_ms),
                  phase_ == Phase::kBetting ? phase_started_ + Ms(config_.betting_window_ms)
                                            : last_frame_at_ + Ms(config_.frame_interval_ms));
}

void RoundDriver::RunCrash(Instant now) {
  const int64_t elapsed_ms = ElapsedMs(phase_started_, now);
  const int64_t shown = std::min(CrashCurveX100(elapsed_ms), crash_x100_);
  multiplier_x100_ = shown;
  // Auto cash-outs at their target, as long as the round reached it.
  for (auto& [player, bet] : bets_) {
    if (bet.cashed_out_x100 == 0 && bet.auto_cashout_x100 > 0 && bet.auto_cashout_x100 <= shown &&
        bet.auto_cashout_x100 <= crash_x100_) {
      bet.cashed_out_x100 = bet.auto_cashout_x100;
    }
  }
  if (CrashCurveX100(elapsed_ms) >= crash_x100_) Enter(Phase::kSettling, now);
}

bool RoundDriver::Settle(bool refund_open_bets) {
  std::vector<Payout> payouts;
  for (const auto& [player, bet] : bets_) {
    Payout p{.player = std::string(kPlayerPrefix) + player, .stake = bet.stake};
    if (config_.kind == GameKind::kCrash) {
      if (bet.cashed_out_x100 > 0) {
        p.payout = CrashPayout(bet.stake, bet.cashed_out_x100);
      } else if (refund_open_bets) {
        p.payout = bet.stake;
      }
    } else if (roll_ < bet.dice_target) {
      p.payout = DicePayout(bet.stake, bet.dice_target, config_.edge_bp);
    }
    payouts.push_back(std::move(p));
  }
  const Posting settlement = SettlementPosting(escrow_, payouts);
  if (settlement.legs.empty()) return true;  // nobody bet: nothing to settle
  auto posted = ledger_.Post(settlement);
  if (posted.ok()) return true;
  if (posted.status().code() == StatusCode::kFailedPrecondition) {
    auto closed = ledger_.EscrowClosed(escrow_);
    if (closed.ok() && *closed) {
      refunded_ = true;  // a refunder closed it first: the stakes went back
      return true;
    }
  }
  return false;  // retried on the next Tick with the same key
}

bool RoundDriver::SettleAtStop() {
  if (config_.kind != GameKind::kCrash || phase_ != Phase::kRunning) return false;
  const bool any_cashed_out = std::any_of(bets_.begin(), bets_.end(), [](const auto& entry) {
    return entry.second.cashed_out_x100 > 0;
  });
  if (!any_cashed_out) return false;
  // The round never reaches its crash point, so the bets still riding get their stakes back;
  // the cashed-out ones were told their payout and are paid it. No frame: the round never
  // crashed, so there is no outcome to show (its hash stays unrevealed).
  return Settle(/*refund_open_bets=*/true);
}

Status RoundDriver::PlaceBet(const BetRequest& bet, std::function<void(Status)> done) {
  if (phase_ != Phase::kBetting) {
    return Status::FailedPrecondition("bets are taken only while the " + config_.game +
                                      " round is betting (it is " + std::string(PhaseName(phase_)) +
                                      ")");
  }
  if (bet.stake < 1 || bet.stake > limits::kArcadeStakeMax) {
    return Status::InvalidArgument("a stake is 1.." + std::to_string(limits::kArcadeStakeMax) +
                                   " chips");
  }
  if (config_.kind == GameKind::kCrash && bet.auto_cashout_x100 != 0 &&
      (bet.auto_cashout_x100 < limits::kArcadeCashoutX100Min ||
       bet.auto_cashout_x100 > limits::kArcadeCrashX100Max)) {
    return Status::InvalidArgument("an auto cash-out is 1.01x..10000x, or none");
  }
  if (config_.kind == GameKind::kDice && (bet.dice_target < limits::kArcadeDiceTargetMin ||
                                          bet.dice_target > limits::kArcadeDiceTargetMax)) {
    return Status::InvalidArgument("a dice target is " +
                                   std::to_string(limits::kArcadeDiceTargetMin) + ".." +
                                   std::to_string(limits::kArcadeDiceTargetMax));
  }
  if (auto it = bets_.find(bet.player); it != bets_.end()) {
    if (it->second.key != bet.key) {
      return Status::AlreadyExists(bet.player + " already bet in this round");
    }
    done(Status::Ok());  // a retry of a bet that is in
    return Status::Ok();
  }
  if (in_flight_.contains(bet.player)) {
    return Status::AlreadyExists(bet.player + " has a bet on its way in this round");
  }
  if (bets_.size() + in_flight_.size() >= limits::kArcadeBetsPerRoundMax) {
    return Status::ResourceExhausted("the round holds kArcadeBetsPerRoundMax bets");
  }
  Posting stake{
      .key = bet.key,
      .legs = {{std::string(kPlayerPrefix) + bet.player, -bet.stake}, {escrow_, bet.stake}}};
  const int64_t generation = round_generation_;
  Bet accepted{.key = bet.key,
               .stake = bet.stake,
               .auto_cashout_x100 = bet.auto_cashout_x100,
               .dice_target = bet.dice_target};
  in_flight_[bet.player] = bet.key;
  const std::string player = bet.player;
  Status submitted = stakes_.Submit(
      std::move(stake), [this, generation, player, accepted, done](Result<PostingResult> r) {
        // Rounds never move on with a stake in flight (kClosing waits), so an answer always
        // belongs to the current round.
        RELEASE_ASSERT(generation == round_generation_, "a stake answered after its round");
        in_flight_.erase(player);
        if (r.ok()) bets_[player] = accepted;
        done(r.ok() ? Status::Ok() : r.status());
      });
  if (!submitted.ok()) in_flight_.erase(player);
  return submitted;
}

Result<int64_t> RoundDriver::CashOut(std::string_view player) {
  if (config_.kind != GameKind::kCrash || phase_ != Phase::kRunning) {
    return Status::FailedPrecondition("cash-out is only while a crash round runs");
  }
  auto it = bets_.find(std::string(player));
  if (it == bets_.end()) return Status::NotFound(std::string(player) + " has no bet this round");
  if (it->second.cashed_out_x100 > 0) {
    return Status::FailedPrecondition(std::string(player) + " already cashed out");
  }
  const int64_t now_x100 = CrashCurveX100(ElapsedMs(phase_started_, clock_.Now()));
  if (now_x100 >= crash_x100_) return Status::FailedPrecondition("the round crashed");
  if (now_x100 < limits::kArcadeCashoutX100Min) {
    return Status::FailedPrecondition("the multiplier has not reached 1.01x yet");
  }
  it->second.cashed_out_x100 = now_x100;
  return now_x100;
}

void RoundDriver::Emit(Instant now) {
  last_frame_at_ = now;
  frame_.position = position_;
  frame_.phase = phase_;
  frame_.betting_ms_left =
      phase_ == Phase::kBetting
          ? std::max<int64_t>(0, config_.betting_window_ms - ElapsedMs(phase_started_, now))
          : 0;
  frame_.multiplier_x100 = config_.kind == GameKind::kCrash ? multiplier_x100_ : 100;
  frame_.bets = static_cast<int64_t>(bets_.size());
  frame_.staked = 0;
  for (const auto& [player, bet] : bets_) frame_.staked += bet.stake;
  const bool revealed = phase_ == Phase::kSettled;
  frame_.round_hash = revealed ? ToHex(round_hash_) : "";
  frame_.crash_x100 = revealed && config_.kind == GameKind::kCrash ? crash_x100_ : 0;
  frame_.roll = revealed && config_.kind == GameKind::kDice ? roll_ : -1;
  frame_.refunded = revealed && refunded_;
  if (on_frame_) on_frame_(frame_);
}

}  // namespace telos::arcade
