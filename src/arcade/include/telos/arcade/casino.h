// Casino: the arcade as one service a process runs (issue 27): one RoundDriver per game on one
// ledger, the WagerBatcher's group commit in front of it, and the wager API the world's
// commands and the HTTP API share (bet, cash out, buy chips, the balance, a round's proof).
//
// The house's chains: each game's HashChain is generated at Create from the house secret and
// the game's name, so the same secret gives the same chains, the same chain names in the
// ledger, and ClaimChainPosition continues where the last run stopped: a restart never replays
// a round hash. The secret is the caller's to keep (serve keeps it in its data directory).
//
// Idempotency: every wager carries the client's key (at most kArcadeClientKeyBytesMax bytes),
// namespaced by the player, so two players' keys never meet. A bet or cash-out answered OK is
// remembered by its key (the last kArcadeReceiptsMax) with a fingerprint of the request (a bet's
// game, stake and target; a cash-out's game); the same key with the same request answers the
// original result, also while the first is still on its way, and with a different request is
// refused (AlreadyExists), never answered with another wager's result. A refusal is not
// remembered: a retry is judged afresh. A buy is one ledger posting keyed by the client's key,
// so the ledger replays it, and refuses the key for another amount (AlreadyExists).
//
// Reconciliation: at Start, every `interval` and at Stop, open escrows of this house's games
// that no running round uses (a round a past run never settled, the round under way at Stop)
// are refunded (settlement.h SweepUnsettled; the ledger's escrow closure makes it exactly once).
// One exception at Stop: a crash round running with cash-outs is settled, not refunded — the
// cashed-out bets are paid what they were told, the others get their stakes back.
//
// Threads: one thread (Start) owns the drivers, the batcher's commits and the receipts; every
// request is queued to it (bounded by kArcadeCasinoInboxMax: ResourceExhausted at once beyond)
// and answered there, `done` called exactly once. Chips and Round may be called from any
// thread (Chips BLOCKS on a ledger read). Tests never Start: they call Pump on a ManualClock.
// The frame sink runs on the casino's thread and must not block.
//
// Lifecycle: Create → Start → ... → Stop (answers what is queued, commits what the batcher
// holds, refunds the round under way or settles a running crash round's cash-outs, joins). The
// Ledger and Clock outlive the casino.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "telos/arcade/hash_chain.h"
#include "telos/arcade/ledger.h"
#include "telos/arcade/round_driver.h"
#include "telos/arcade/wager_batcher.h"
#include "telos/base/clock.h"
#include "telos/base/limits.h"
#include "telos/base/log.h"
#include "telos/base/status.h"

namespace telos::arcade {

struct CasinoOptions {
  std::vector<GameConfig> games;  // at least one, names distinct
  std::string house_secret;       // non-empty; kept by the caller across restarts
  int64_t chain_length = limits::kArcadeChainLengthDefault;
  int64_t sweep_interval_ms = limits::kArcadeSweepIntervalMs;
  WagerBatcherOptions batcher;
  // Where the casino logs (a game's chain used up, once, at error level); none when null.
  // Outlives the casino.
  Logger* logger = nullptr;
};

// What a wager was answered with (a retry with its key gets the same).
struct WagerAnswer {
  std::string game;
  int64_t position = -1;     // the round's chain position
  int64_t stake = 0;         // bet: the stake committed
  int64_t target = 0;        // bet: dice under / crash auto cash-out x100 (0: by hand)
  int64_t cashout_x100 = 0;  // cash-out: the multiplier
  int64_t payout = 0;        // cash-out: what the bet pays (stake included)
  bool replayed = false;     // this is the answer to an earlier request with the key
};

// A round anyone may check: its hash once revealed, the next round's hash once that is revealed
// (SHA-256(next's hash) must equal this one's), and the outcome the hash gives.
struct RoundProof {
  std::string game;
  int64_t position = 0;
  std::string chain;       // the ledger's chain name
  std::string commitment;  // the chain's published end, hex
  std::string public_seed;
  std::string hash;       // hex
  std::string next_hash;  // hex, empty until the next round is revealed
  bool verified = false;  // next_hash given and it hashes to `hash`
  int64_t crash_x100 = 0;
  int64_t roll = -1;
};

class Casino {
 public:
  using FrameSink = std::function<void(const Frame&)>;
  using Done = std::function<void(Result<WagerAnswer>)>;

  // InvalidArgument naming the option when `options` is out of bounds (a config error).
  static Result<std::unique_ptr<Casino>> Create(Ledger& ledger, const Clock& clock,
                                                CasinoOptions options, FrameSink on_frame);
  ~Casino();
  Casino(const Casino&) = delete;
  Casino& operator=(const Casino&) = delete;

  void Start();
  void Stop();

  // A bet of `stake` chips by `player` (a name key) in `game`'s round now betting. `target`:
  // dice, the roll to be under (kArcadeDiceTargetMin..Max); crash, an auto cash-out x100 or 0.
  // NotFound for an unknown game; InvalidArgument for a bad key or amount; the driver's
  // refusals (FailedPrecondition when not betting or the chips are not there).
  void Bet(std::string game, std::string player, int64_t stake, int64_t target, std::string key,
           Done done);
  // Cashes the player's crash-game bet out at the multiplier now.
  void CashOut(std::string game, std::string player, std::string key, Done done);
  // Sells `chips` to `player` (the house's chips for the caller's coins: one-way play money).
  // The answer's `stake` is the chips bought and `payout` the player's balance after.
  void Buy(std::string player, int64_t chips, std::string key, Done done);

  // The player's chips. BLOCKS on the ledger.
  Result<int64_t> Chips(std::string_view player);
  // NotFound for an unknown game, or a round not revealed yet (the one betting or running, or
  // later ones). Thread-safe; does not block on the ledger.
  Result<RoundProof> Round(std::string_view game, int64_t position);
  std::vector<std::string> games() const;
  // The games whose chain is used up (RoundDriver::exhausted): they open no more rounds until
  // an operator starts the casino on a new house secret. Thread-safe; for health and metrics.
  std::vector<std::string> exhausted_games() const;

  // Tests (and the casino's thread): applies what is queued, ticks every driver, commits what
  // the batcher holds when due (all of it when `force_commit`), sweeps when due. Returns when it
  // wants to run next.
  Instant Pump(bool force_commit = false);

 private:
  struct Game;
  struct Receipt {
    std::string fingerprint;  // the request's parameters: the key answers only these
    bool answered = false;
    WagerAnswer answer;
    std::vector<Done> waiting;
  };
  Casino(Ledger& ledger, const Clock& clock, CasinoOptions options, FrameSink on_frame);
  Status Post(std::function<void()> task);
  void RunQueued();
  void PlaceBet(Game& game, std::string player, int64_t stake, int64_t target, std::string key,
                Done done);
  void DoCashOut(Game& game, const std::string& player, std::string key, Done done);
  void DoBuy(std::string player, int64_t chips, std::string key, Done done);
  // The receipt of `full_key`: answers `done` from it and returns true when there is one
  // (AlreadyExists when its fingerprint is not `fingerprint`: the key was used for another wager).
  bool Replay(const std::string& full_key, std::string_view client_key,
              const std::string& fingerprint, Done& done);
  void Answer(const std::string& full_key, Result<WagerAnswer> answer);
  void Sweep(bool everything);
  void OnFrame(Game& game, const Frame& frame);
  Game* FindGame(std::string_view name);
  void Run();

  Ledger& ledger_;
  const Clock& clock_;
  const CasinoOptions options_;
  const FrameSink on_frame_;
  WagerBatcher batcher_;
  WagerBatcherSubmitter submitter_;
  std::vector<std::unique_ptr<Game>> games_;

  // The casino thread's own state.
  std::map<std::string, Receipt> receipts_;  // by "<player>:<client key>"
  std::deque<std::string> receipt_order_;    // oldest first, for the bound
  Instant next_sweep_{};

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> inbox_;  // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  std::thread worker_;
};

}  // namespace telos::arcade
