// RoundDriver: the round state machine of one game (issue 27 item 4), for the crash game and
// the dice game, driven by the Clock (a ManualClock in tests).
//
//   kBetting  (betting_window_ms)  bets are taken; each is acknowledged once its stake is
//                                  committed to the round's escrow (through the StakeSubmitter:
//                                  the WagerBatcher's group commit)
//   kClosing                       no new bets; waits until every stake in flight is answered,
//                                  so the round knows exactly what its escrow holds
//   kRunning  crash: the multiplier rises (outcomes.h's curve) until the crash point; bets cash
//                    out by hand (CashOut) or at their auto cash-out target
//             dice:  kArcadeDiceRollMs of rolling
//   kSettling                      the settlement posting (settlement.h) is sent to the ledger,
//                                  again each Tick until it is answered
//   kSettled  (settled_pause_ms)   the round hash is revealed; then the next round begins
//
// Each round claims the next chain position durably from the ledger before it opens, so a
// driver that takes the game over after a crash continues the chain and never replays a hash
// (hash_chain.h). A round whose settlement is refused because its escrow was closed meanwhile
// (a refunder decided the round was dead) counts as refunded: either way each stake is paid
// out once.
//
// Frames: on_frame is called on every phase change and at least every frame_interval_ms while
// Tick is called that often (several frames per second); a frame shows the round hash and the
// outcome only once settled.
//
// Ownership: the driver borrows the Ledger, StakeSubmitter, HashChain and Clock, which outlive
// it. Thread safety: none. One owner calls every method, and delivers each stake's answer (the
// StakeSubmitter's callback) on that same thread — with the WagerBatcher, the owner posts the
// callback to its executor; tests call CommitDue on the test thread. Tick and settlements
// BLOCK on the ledger (a chain claim, a settlement): the owner runs the driver on a thread of
// its own, never a zone executor.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "telos/arcade/hash_chain.h"
#include "telos/arcade/ledger.h"
#include "telos/arcade/wager_batcher.h"
#include "telos/base/clock.h"
#include "telos/base/limits.h"
#include "telos/base/status.h"

namespace telos::arcade {

enum class GameKind { kCrash, kDice };
enum class Phase { kIdle, kBetting, kClosing, kRunning, kSettling, kSettled };
std::string_view PhaseName(Phase phase);

struct GameConfig {
  std::string game;  // "crash", "dice": 1..16 lower-case letters, digits or '-'
  GameKind kind = GameKind::kCrash;
  std::string public_seed;  // 1..kArcadeSeedBytesMax bytes, fixed after the chain is published
  int64_t edge_bp = limits::kArcadeHouseEdgeBp;
  int64_t betting_window_ms = limits::kArcadeBettingWindowMs;
  int64_t frame_interval_ms = limits::kArcadeFrameIntervalMs;
  int64_t dice_roll_ms = limits::kArcadeDiceRollMs;
  int64_t settled_pause_ms = limits::kArcadeSettledPauseMs;
};
// InvalidArgument naming the field when a GameConfig is out of bounds.
Status ValidateGameConfig(const GameConfig& config);

// Where the driver sends stakes: the WagerBatcher in production (see WagerBatcherSubmitter).
class StakeSubmitter {
 public:
  virtual ~StakeSubmitter() = default;
  // As WagerBatcher::Submit.
  virtual Status Submit(Posting posting, WagerDone done) = 0;
};

class WagerBatcherSubmitter final : public StakeSubmitter {
 public:
  explicit WagerBatcherSubmitter(WagerBatcher& batcher) : batcher_(batcher) {}
  Status Submit(Posting posting, WagerDone done) override {
    return batcher_.Submit(std::move(posting), std::move(done));
  }

 private:
  WagerBatcher& batcher_;
};

struct BetRequest {
  std::string player;  // the name, without "player:"
  int64_t stake = 0;   // 1..kArcadeChipsMax
  std::string key;     // the client's idempotency key
  // Crash: an automatic cash-out target (x100, >= kArcadeCashoutX100Min), or 0 for by hand.
  int64_t auto_cashout_x100 = 0;
  // Dice: the bet wins when the roll is under this (kArcadeDiceTargetMin..Max).
  int64_t dice_target = 0;
};

struct Frame {
  std::string game;
  int64_t position = -1;  // the round's chain position
  Phase phase = Phase::kIdle;
  int64_t betting_ms_left = 0;
  int64_t multiplier_x100 = 100;  // crash: the current multiplier
  int64_t bets = 0;
  int64_t staked = 0;
  // Once settled:
  std::string round_hash;  // hex; verifies against the previous round's (hash_chain.h)
  int64_t crash_x100 = 0;  // crash
  int64_t roll = -1;       // dice
  bool refunded = false;   // the escrow was closed by a refund, not this settlement
};

class RoundDriver {
 public:
  using FrameSink = std::function<void(const Frame&)>;
  // REQUIRES: ValidateGameConfig(config).ok() (else RELEASE_ASSERT: a wiring bug).
  RoundDriver(GameConfig config, Ledger& ledger, StakeSubmitter& stakes, HashChain& chain,
              const Clock& clock, FrameSink on_frame);

  // Advances the state machine to clock.Now() and emits the frames due. Returns when it wants
  // to be called next (never later than the next frame).
  Instant Tick();

  // Takes a bet in the betting window. `done` is called once: OK when the stake is committed
  // (the bet is in the round), or the refusal. Refused at once (without `done`) when: not
  // betting (FailedPrecondition), malformed (InvalidArgument), the round is full
  // (ResourceExhausted), the player already bet this round under another key (AlreadyExists),
  // or the StakeSubmitter refuses. The same key again answers OK at once once it is in.
  Status PlaceBet(const BetRequest& bet, std::function<void(Status)> done);

  // Crash, while running: cashes the player's bet out at the current multiplier, returned x100.
  // FailedPrecondition when not running, already cashed out, below kArcadeCashoutX100Min, or
  // crashed; NotFound when the player has no bet in the round.
  Result<int64_t> CashOut(std::string_view player);

  // For the owner's stop (it will not Tick again): a crash round running with cash-outs is
  // settled now instead of being left to a refund, which would take back what the cashed-out
  // bets were told they won. Cashed-out bets are paid their cash-out; bets not cashed out get
  // their stake back (the round never reached its crash point). Returns true when this posted
  // the settlement (the escrow is closed); false when there is nothing to settle (not a crash
  // round running, no cash-out) or the ledger refused it, and the round is left to the refund.
  // BLOCKS on the ledger.
  bool SettleAtStop();

  // The chain is used up: every position was played, no round opens again and no position is
  // claimed any more (the driver idles in the phase it ended in).
  bool exhausted() const { return exhausted_; }
  Phase phase() const { return phase_; }
  const Frame& last_frame() const { return frame_; }
  // The escrow account of the current round (empty before the first).
  const std::string& escrow() const { return escrow_; }
  // The name of this game's chain in the ledger: "<game>:<16 hex digits of the commitment>".
  const std::string& chain_name() const { return chain_name_; }

 private:
  struct Bet {
    std::string key;
    int64_t stake = 0;
    int64_t auto_cashout_x100 = 0;
    int64_t dice_target = 0;
    int64_t cashed_out_x100 = 0;  // crash: > 0 once cashed out
  };
  void Enter(Phase phase, Instant now);
  bool OpenRound(Instant now);
  void RunCrash(Instant now);
  // refund_open_bets: crash bets not cashed out get their stake back (SettleAtStop) rather
  // than losing it.
  bool Settle(bool refund_open_bets = false);
  void Emit(Instant now);

  const GameConfig config_;
  Ledger& ledger_;
  StakeSubmitter& stakes_;
  HashChain& chain_;
  const Clock& clock_;
  const FrameSink on_frame_;
  const std::string chain_name_;

  Phase phase_ = Phase::kIdle;
  Instant phase_started_{};
  Instant last_frame_at_{};
  int64_t position_ = -1;
  std::string escrow_;
  Hash round_hash_{};
  int64_t crash_x100_ = 0;
  int64_t roll_ = -1;
  int64_t multiplier_x100_ = 100;
  bool refunded_ = false;
  bool exhausted_ = false;
  std::map<std::string, Bet> bets_;               // by player name, committed stakes only
  std::map<std::string, std::string> in_flight_;  // player -> key of a stake not yet answered
  int64_t round_generation_ = 0;                  // tells a late answer which round it was for
  Frame frame_;
};

}  // namespace telos::arcade
