#include "telos/arcade/casino.h"

#include <algorithm>
#include <atomic>
#include <set>
#include <utility>

#include "telos/arcade/digest.h"
#include "telos/arcade/outcomes.h"
#include "telos/arcade/settlement.h"
#include "telos/base/assert.h"

namespace telos::arcade {
namespace {

// Printable ASCII without spaces, 1..kArcadeClientKeyBytesMax bytes.
Status ValidateClientKey(std::string_view key) {
  if (key.empty() || key.size() > limits::kArcadeClientKeyBytesMax) {
    return Status::InvalidArgument("an idempotency key is 1.." +
                                   std::to_string(limits::kArcadeClientKeyBytesMax) +
                                   " characters");
  }
  for (char c : key) {
    if (c <= ' ' || c > '~') {
      return Status::InvalidArgument("an idempotency key is printable ASCII without spaces");
    }
  }
  return Status::Ok();
}

Status ValidatePlayer(std::string_view player) {
  return ValidateAccountName(std::string(kPlayerPrefix) + std::string(player));
}

}  // namespace

struct Casino::Game {
  GameConfig config;
  std::unique_ptr<HashChain> chain;  // the driver's
  std::unique_ptr<RoundDriver> driver;
  std::string escrow_prefix;  // "escrow:<chain name>:"
  // The stakes of the round at `stakes_position`, by player (the casino thread's).
  int64_t stakes_position = -1;
  std::map<std::string, int64_t> stakes;
  // Round proofs, for any thread.
  std::mutex proof_mu;
  HashChain proof_chain;                  // guarded by proof_mu: a copy of the chain
  std::atomic<int64_t> revealed_max{-1};  // the last position whose hash may be shown
  std::atomic<bool> exhausted{false};     // the driver's chain is used up (reported once)

  explicit Game(HashChain c) : proof_chain(std::move(c)) {}
};

Result<std::unique_ptr<Casino>> Casino::Create(Ledger& ledger, const Clock& clock,
                                               CasinoOptions options, FrameSink on_frame) {
  if (options.games.empty()) return Status::InvalidArgument("the casino needs at least one game");
  if (options.house_secret.empty()) return Status::InvalidArgument("house_secret is empty");
  if (options.chain_length < 1 || options.chain_length > limits::kArcadeChainLengthMax) {
    return Status::InvalidArgument("chain_length is 1.." +
                                   std::to_string(limits::kArcadeChainLengthMax));
  }
  if (options.sweep_interval_ms < 1) return Status::InvalidArgument("sweep_interval_ms < 1");
  std::set<std::string> names;
  for (const GameConfig& game : options.games) {
    TELOS_RETURN_IF_ERROR(ValidateGameConfig(game));
    if (!names.insert(game.game).second) {
      return Status::InvalidArgument("the game '" + game.game + "' is configured twice");
    }
  }
  std::unique_ptr<Casino> casino(
      new Casino(ledger, clock, std::move(options), std::move(on_frame)));
  for (const GameConfig& config : casino->options_.games) {
    // One chain per game, from the house secret and the game's name.
    auto chain = HashChain::Generate(casino->options_.house_secret + ":" + config.game,
                                     casino->options_.chain_length);
    if (!chain.ok()) return chain.status();
    auto game = std::make_unique<Game>(*chain);
    game->config = config;
    game->chain = std::make_unique<HashChain>(std::move(*chain));
    Game* raw = game.get();
    game->driver = std::make_unique<RoundDriver>(
        config, ledger, casino->submitter_, *game->chain, clock,
        [c = casino.get(), raw](const Frame& frame) { c->OnFrame(*raw, frame); });
    game->escrow_prefix = std::string(kEscrowPrefix) + game->driver->chain_name() + ":";
    casino->games_.push_back(std::move(game));
  }
  return casino;
}

Casino::Casino(Ledger& ledger, const Clock& clock, CasinoOptions options, FrameSink on_frame)
    : ledger_(ledger),
      clock_(clock),
      options_(std::move(options)),
      on_frame_(std::move(on_frame)),
      batcher_(ledger, clock, options_.batcher),
      submitter_(batcher_) {}

Casino::~Casino() {
  Stop();
}

void Casino::Start() {
  RELEASE_ASSERT(!worker_.joinable(), "Casino::Start twice");
  worker_ = std::thread([this] { Run(); });
}

void Casino::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && !worker_.joinable()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
  // What was queued before the stop is answered, the stakes in flight committed, and the
  // round under way (it will never finish) refunded — except a crash round running with
  // cash-outs, which is settled: the cashed-out bets are paid what they were told, the bets
  // not cashed out get their stakes back (RoundDriver::SettleAtStop). Its escrow is then
  // closed, so the sweep leaves it alone.
  RunQueued();
  while (batcher_.CommitDue(/*force=*/true) > 0) {
  }
  for (auto& game : games_) (void)game->driver->SettleAtStop();
  Sweep(/*everything=*/true);
}

void Casino::Run() {
  while (true) {
    const Instant next = Pump();
    std::unique_lock lock(mu_);
    if (stopping_) return;
    if (!inbox_.empty()) continue;
    const Duration wait = std::clamp<Duration>(next - clock_.Now(), Duration::zero(),
                                               Millis(limits::kArcadeFrameIntervalMs));
    wake_.wait_for(lock, wait, [this] { return stopping_ || !inbox_.empty(); });
  }
}

void Casino::RunQueued() {
  std::deque<std::function<void()>> tasks;
  {
    std::lock_guard lock(mu_);
    tasks.swap(inbox_);
  }
  for (auto& task : tasks) task();
}

Instant Casino::Pump(bool force_commit) {
  RunQueued();
  const Instant now = clock_.Now();
  if (now >= next_sweep_) {
    Sweep(/*everything=*/false);
    next_sweep_ = now + Millis(options_.sweep_interval_ms);
  }
  Instant next = next_sweep_;
  for (auto& game : games_) {
    next = std::min(next, game->driver->Tick());
    if (game->driver->exhausted() && !game->exhausted.load()) {
      game->exhausted.store(true);
      if (options_.logger != nullptr) {
        options_.logger->Error("arcade chain used up: the game opens no more rounds",
                               {{"game", game->config.game},
                                {"chain", game->driver->chain_name()},
                                {"chain_length", options_.chain_length}});
      }
    }
  }
  while (batcher_.CommitDue(force_commit) > 0) {
  }
  return std::min(next, batcher_.NextDue());
}

void Casino::Sweep(bool everything) {
  for (auto& game : games_) {
    const std::string live = everything ? "" : game->driver->escrow();
    (void)SweepUnsettled(ledger_, game->escrow_prefix, [&live](std::string_view escrow) {
      return !live.empty() && escrow == live;
    });
  }
}

void Casino::OnFrame(Game& game, const Frame& frame) {
  const int64_t revealed = frame.phase == Phase::kSettled ? frame.position : frame.position - 1;
  if (revealed > game.revealed_max.load()) game.revealed_max.store(revealed);
  if (on_frame_) on_frame_(frame);
}

Status Casino::Post(std::function<void()> task) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return Status::Cancelled("the arcade is closing");
    if (inbox_.size() >= limits::kArcadeCasinoInboxMax) {
      return Status::ResourceExhausted("the arcade is busy; try again in a moment");
    }
    inbox_.push_back(std::move(task));
  }
  wake_.notify_one();
  return Status::Ok();
}

Casino::Game* Casino::FindGame(std::string_view name) {
  for (auto& game : games_) {
    if (game->config.game == name) return game.get();
  }
  return nullptr;
}

std::vector<std::string> Casino::games() const {
  std::vector<std::string> names;
  for (const auto& game : games_) names.push_back(game->config.game);
  return names;
}

std::vector<std::string> Casino::exhausted_games() const {
  std::vector<std::string> names;
  for (const auto& game : games_) {
    if (game->exhausted.load()) names.push_back(game->config.game);
  }
  return names;
}

bool Casino::Replay(const std::string& full_key, std::string_view client_key,
                    const std::string& fingerprint, Done& done) {
  auto it = receipts_.find(full_key);
  if (it == receipts_.end()) return false;
  if (it->second.fingerprint != fingerprint) {
    // The key answers only the request it was first used for: another wager under it would be
    // answered with the first one's result and never placed.
    done(Status::AlreadyExists("key " + std::string(client_key) +
                               " was used for a different wager"));
    return true;
  }
  if (!it->second.answered) {
    it->second.waiting.push_back(std::move(done));
    return true;
  }
  WagerAnswer answer = it->second.answer;
  answer.replayed = true;
  done(std::move(answer));
  return true;
}

void Casino::Answer(const std::string& full_key, Result<WagerAnswer> answer) {
  auto it = receipts_.find(full_key);
  if (it == receipts_.end()) return;
  std::vector<Done> waiting = std::move(it->second.waiting);
  if (answer.ok()) {
    it->second.answered = true;
    it->second.answer = *answer;
    receipt_order_.push_back(full_key);
    while (receipt_order_.size() > limits::kArcadeReceiptsMax) {
      receipts_.erase(receipt_order_.front());
      receipt_order_.pop_front();
    }
  } else {
    receipts_.erase(it);  // a refusal is not remembered: a retry is judged afresh
  }
  for (size_t i = 0; i < waiting.size(); ++i) {
    if (i > 0 && answer.ok()) answer->replayed = true;
    waiting[i](answer);
  }
}

void Casino::Bet(std::string game, std::string player, int64_t stake, int64_t target,
                 std::string key, Done done) {
  Game* g = FindGame(game);
  Status valid = g == nullptr ? Status::NotFound("there is no game called '" + game + "'")
                              : ValidatePlayer(player);
  if (valid.ok()) valid = ValidateClientKey(key);
  if (!valid.ok()) {
    done(valid);
    return;
  }
  auto shared = std::make_shared<Done>(std::move(done));
  Status queued = Post(
      [this, g, player = std::move(player), stake, target, key = std::move(key), shared]() mutable {
        PlaceBet(*g, std::move(player), stake, target, std::move(key), std::move(*shared));
      });
  if (!queued.ok()) (*shared)(queued);
}

void Casino::PlaceBet(Game& game, std::string player, int64_t stake, int64_t target,
                      std::string key, Done done) {
  const std::string full_key = "bet:" + player + ":" + key;
  const std::string fingerprint = "game=" + game.config.game + " stake=" + std::to_string(stake) +
                                  " target=" + std::to_string(target);
  if (Replay(full_key, key, fingerprint, done)) return;
  BetRequest bet{.player = player, .stake = stake, .key = full_key};
  if (game.config.kind == GameKind::kDice) {
    bet.dice_target = target;
  } else {
    bet.auto_cashout_x100 = target;
  }
  const int64_t position = game.driver->last_frame().position;
  Receipt& receipt = receipts_[full_key];
  receipt.fingerprint = fingerprint;
  receipt.waiting.push_back(std::move(done));
  Status placed = game.driver->PlaceBet(bet, [this, &game, full_key, player, position, stake,
                                              target](Status committed) {
    if (!committed.ok()) {
      Answer(full_key, committed);
      return;
    }
    if (game.stakes_position != position) {
      game.stakes.clear();
      game.stakes_position = position;
    }
    game.stakes[player] = stake;
    Answer(full_key,
           WagerAnswer{
               .game = game.config.game, .position = position, .stake = stake, .target = target});
  });
  if (!placed.ok()) Answer(full_key, placed);
}

void Casino::CashOut(std::string game, std::string player, std::string key, Done done) {
  Game* g = FindGame(game);
  Status valid = g == nullptr ? Status::NotFound("there is no game called '" + game + "'")
                              : ValidatePlayer(player);
  if (valid.ok()) valid = ValidateClientKey(key);
  if (valid.ok() && g->config.kind != GameKind::kCrash) {
    valid = Status::InvalidArgument("only the crash game has cash-outs");
  }
  if (!valid.ok()) {
    done(valid);
    return;
  }
  auto shared = std::make_shared<Done>(std::move(done));
  Status queued =
      Post([this, g, player = std::move(player), key = std::move(key), shared]() mutable {
        DoCashOut(*g, player, std::move(key), std::move(*shared));
      });
  if (!queued.ok()) (*shared)(queued);
}

void Casino::DoCashOut(Game& game, const std::string& player, std::string key, Done done) {
  const std::string full_key = "cashout:" + player + ":" + key;
  const std::string fingerprint = "game=" + game.config.game;
  if (Replay(full_key, key, fingerprint, done)) return;
  Receipt& receipt = receipts_[full_key];
  receipt.fingerprint = fingerprint;
  receipt.waiting.push_back(std::move(done));
  Result<int64_t> x100 = game.driver->CashOut(player);
  if (!x100.ok()) {
    Answer(full_key, x100.status());
    return;
  }
  const int64_t position = game.driver->last_frame().position;
  int64_t stake = 0;
  if (game.stakes_position == position) {
    if (auto it = game.stakes.find(player); it != game.stakes.end()) stake = it->second;
  }
  Answer(full_key, WagerAnswer{.game = game.config.game,
                               .position = position,
                               .stake = stake,
                               .cashout_x100 = *x100,
                               .payout = CrashPayout(stake, *x100)});
}

void Casino::Buy(std::string player, int64_t chips, std::string key, Done done) {
  Status valid = ValidatePlayer(player);
  if (valid.ok()) valid = ValidateClientKey(key);
  if (valid.ok() && (chips < 1 || chips > limits::kArcadeChipsMax)) {
    valid = Status::InvalidArgument("chips are bought 1.." +
                                    std::to_string(limits::kArcadeChipsMax) + " at a time");
  }
  if (!valid.ok()) {
    done(valid);
    return;
  }
  auto shared = std::make_shared<Done>(std::move(done));
  Status queued =
      Post([this, player = std::move(player), chips, key = std::move(key), shared]() mutable {
        DoBuy(std::move(player), chips, std::move(key), std::move(*shared));
      });
  if (!queued.ok()) (*shared)(queued);
}

void Casino::DoBuy(std::string player, int64_t chips, std::string key, Done done) {
  const std::string account = std::string(kPlayerPrefix) + player;
  Posting posting{.key = "buy:" + player + ":" + key,
                  .legs = {{std::string(kHouseAccount), -chips}, {account, chips}}};
  auto shared = std::make_shared<Done>(std::move(done));
  Status submitted =
      batcher_.Submit(std::move(posting), [this, account, chips, shared](Result<PostingResult> r) {
        if (!r.ok()) {
          (*shared)(r.status());
          return;
        }
        Result<int64_t> balance = ledger_.Balance(account);
        (*shared)(WagerAnswer{
            .stake = chips, .payout = balance.ok() ? *balance : 0, .replayed = r->replayed});
      });
  if (!submitted.ok()) (*shared)(submitted);
}

Result<int64_t> Casino::Chips(std::string_view player) {
  TELOS_RETURN_IF_ERROR(ValidatePlayer(player));
  return ledger_.Balance(std::string(kPlayerPrefix) + std::string(player));
}

Result<RoundProof> Casino::Round(std::string_view game_name, int64_t position) {
  Game* game = FindGame(game_name);
  if (game == nullptr) {
    return Status::NotFound("there is no game called '" + std::string(game_name) + "'");
  }
  const int64_t revealed = game->revealed_max.load();
  if (position < 0 || position > revealed) {
    return Status::NotFound("round " + std::to_string(position) + " of " + game->config.game +
                            " has not been revealed yet");
  }
  RoundProof proof{.game = game->config.game,
                   .position = position,
                   .chain = game->driver->chain_name(),
                   .public_seed = game->config.public_seed};
  std::lock_guard lock(game->proof_mu);
  proof.commitment = ToHex(game->proof_chain.commitment());
  auto hash = game->proof_chain.RoundHash(position);
  if (!hash.ok()) return Status::NotFound(hash.status().message());
  proof.hash = ToHex(*hash);
  if (position + 1 <= revealed) {
    auto next = game->proof_chain.RoundHash(position + 1);
    if (next.ok()) {
      proof.next_hash = ToHex(*next);
      proof.verified = VerifyAgainstNext(*next, *hash);
    }
  }
  const Hash outcome = OutcomeHash(*hash, game->config.public_seed);
  if (game->config.kind == GameKind::kCrash) {
    proof.crash_x100 = CrashPointX100(outcome, game->config.edge_bp);
  } else {
    proof.roll = DiceRoll(outcome);
  }
  return proof;
}

}  // namespace telos::arcade
