// The casino service on a ManualClock over a MemoryLedger: buying chips, a dice round from bet
// to settlement, retries answered with the original result and another wager under the same key
// refused, a crash cash-out, round proofs that verify against the next round, a restart
// continuing the chain, the round under way at a stop refunded once, a running crash round's
// cash-outs paid at a stop, and a used-up chain that claims no more positions and is reported
// once.

#include "telos/arcade/casino.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "telos/arcade/digest.h"
#include "telos/arcade/memory_ledger.h"
#include "telos/arcade/outcomes.h"

namespace telos::arcade {
namespace {

constexpr std::string_view kSeed = "casino seed";

class CasinoTest : public ::testing::Test {
 protected:
  std::unique_ptr<Casino> Open(std::string secret = "house secret") {
    CasinoOptions options;
    options.games = {{.game = "crash", .kind = GameKind::kCrash, .public_seed = std::string(kSeed)},
                     {.game = "dice", .kind = GameKind::kDice, .public_seed = std::string(kSeed)}};
    options.house_secret = std::move(secret);
    options.chain_length = 1000;
    auto casino =
        Casino::Create(ledger_, clock_, options, [this](const Frame& f) { frames_.push_back(f); });
    EXPECT_TRUE(casino.ok()) << casino.status().ToString();
    return std::move(*casino);
  }
  // Pumps in 100 ms steps until `game` shows `phase` (at most max_ms).
  void RunUntil(Casino& casino, const std::string& game, Phase phase, int64_t max_ms = 200'000) {
    for (int64_t t = 0; t <= max_ms; t += 100) {
      casino.Pump(/*force_commit=*/true);
      if (Last(game) && Last(game)->phase == phase) return;
      clock_.Advance(Millis(100));
    }
    FAIL() << game << " never reached " << PhaseName(phase);
  }
  std::optional<Frame> Last(const std::string& game) const {
    for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
      if (it->game == game) return *it;
    }
    return std::nullopt;
  }
  // Runs a request through the casino thread (Pump) and returns its answer.
  Result<WagerAnswer> Await(Casino& casino, const std::function<void(Casino::Done)>& request) {
    std::optional<Result<WagerAnswer>> answer;
    request([&answer](Result<WagerAnswer> a) { answer = std::move(a); });
    for (int i = 0; i < 10 && !answer; ++i) casino.Pump(/*force_commit=*/true);
    if (!answer) return Status::DeadlineExceeded("no answer");
    return *answer;
  }
  int64_t Balance(const std::string& account) { return ledger_.Balance(account).value(); }
  void ExpectBooksBalance() {
    int64_t sum = 0;
    const std::vector<AccountBalance> balances = ledger_.Balances().value();
    for (const AccountBalance& b : balances) sum += b.balance;
    EXPECT_EQ(sum, 0);
  }

  ManualClock clock_;
  MemoryLedger ledger_;
  std::vector<Frame> frames_;
};

TEST_F(CasinoTest, ADiceBetSettlesAndItsRetryAnswersTheOriginalResult) {
  auto casino = Open();
  auto bought = Await(*casino, [&](Casino::Done d) { casino->Buy("ann", 100, "k-buy", d); });
  ASSERT_TRUE(bought.ok()) << bought.status().ToString();
  EXPECT_EQ(bought->payout, 100);
  EXPECT_EQ(casino->Chips("ann").value(), 100);
  // The same buy key again is the same posting: replayed, no second sale.
  auto again = Await(*casino, [&](Casino::Done d) { casino->Buy("ann", 100, "k-buy", d); });
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->replayed);
  EXPECT_EQ(casino->Chips("ann").value(), 100);

  RunUntil(*casino, "dice", Phase::kBetting);
  auto bet = Await(*casino, [&](Casino::Done d) { casino->Bet("dice", "ann", 10, 5000, "k1", d); });
  ASSERT_TRUE(bet.ok()) << bet.status().ToString();
  EXPECT_EQ(bet->game, "dice");
  EXPECT_FALSE(bet->replayed);
  const int64_t round = bet->position;
  EXPECT_EQ(casino->Chips("ann").value(), 90);
  auto retry =
      Await(*casino, [&](Casino::Done d) { casino->Bet("dice", "ann", 10, 5000, "k1", d); });
  ASSERT_TRUE(retry.ok());
  EXPECT_TRUE(retry->replayed);
  EXPECT_EQ(retry->position, round);
  EXPECT_EQ(casino->Chips("ann").value(), 90) << "a retry stakes nothing more";
  EXPECT_EQ(Await(*casino, [&](Casino::Done d) { casino->Bet("dice", "ann", 5, 5000, "k2", d); })
                .status()
                .code(),
            StatusCode::kAlreadyExists);

  EXPECT_EQ(casino->Round("dice", round).status().code(), StatusCode::kNotFound)
      << "the round under way is not revealed";
  RunUntil(*casino, "dice", Phase::kSettled);
  const Frame settled = *Last("dice");
  const int64_t expected = settled.roll < 5000 ? 90 + DicePayout(10, 5000, 100) : 90;
  EXPECT_EQ(casino->Chips("ann").value(), expected);
  // The retry after the settlement still answers the original result.
  auto late =
      Await(*casino, [&](Casino::Done d) { casino->Bet("dice", "ann", 10, 5000, "k1", d); });
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(late->position, round);
  EXPECT_EQ(casino->Chips("ann").value(), expected);

  auto proof = casino->Round("dice", round);
  ASSERT_TRUE(proof.ok()) << proof.status().ToString();
  EXPECT_EQ(proof->hash, settled.round_hash);
  EXPECT_EQ(proof->roll, settled.roll);
  EXPECT_TRUE(proof->next_hash.empty());
  EXPECT_FALSE(proof->verified);
  RunUntil(*casino, "dice", Phase::kBetting);
  RunUntil(*casino, "dice", Phase::kSettled);
  proof = casino->Round("dice", round);
  ASSERT_TRUE(proof.ok());
  EXPECT_TRUE(proof->verified);
  EXPECT_EQ(ToHex(Sha256(HashFromHex(proof->next_hash).value())), proof->hash);
  ExpectBooksBalance();
}

TEST_F(CasinoTest, AKeyAnswersOnlyItsOwnRequestAndAnotherWagerUnderItIsRefused) {
  auto casino = Open();
  ASSERT_TRUE(Await(*casino, [&](Casino::Done d) { casino->Buy("eve", 1000, "b", d); }).ok());
  // A buy of another amount under the same key is refused by the ledger, no chips sold.
  EXPECT_EQ(
      Await(*casino, [&](Casino::Done d) { casino->Buy("eve", 500, "b", d); }).status().code(),
      StatusCode::kAlreadyExists);
  EXPECT_EQ(casino->Chips("eve").value(), 1000);

  RunUntil(*casino, "dice", Phase::kBetting);
  // The first bet still on its way: another wager under its key is refused, not queued behind it.
  std::optional<Result<WagerAnswer>> first;
  std::optional<Result<WagerAnswer>> other;
  casino->Bet("dice", "eve", 10, 5000, "K", [&](Result<WagerAnswer> a) { first = a; });
  casino->Bet("dice", "eve", 10, 4000, "K", [&](Result<WagerAnswer> a) { other = a; });
  for (int i = 0; i < 10 && !(first && other); ++i) casino->Pump(/*force_commit=*/true);
  ASSERT_TRUE(first && other);
  ASSERT_TRUE(first->ok()) << first->status().ToString();
  EXPECT_EQ(other->status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(other->status().message(), "key K was used for a different wager");
  EXPECT_EQ(casino->Chips("eve").value(), 990);

  // Answered: another game, stake or target under the key is refused, the same request replayed.
  auto code = [&](std::string game, int64_t stake, int64_t target) {
    return Await(*casino, [&](Casino::Done d) { casino->Bet(game, "eve", stake, target, "K", d); })
        .status()
        .code();
  };
  EXPECT_EQ(code("crash", 500, 0), StatusCode::kAlreadyExists);
  EXPECT_EQ(code("dice", 11, 5000), StatusCode::kAlreadyExists);
  EXPECT_EQ(code("dice", 10, 5001), StatusCode::kAlreadyExists);
  auto retry =
      Await(*casino, [&](Casino::Done d) { casino->Bet("dice", "eve", 10, 5000, "K", d); });
  ASSERT_TRUE(retry.ok()) << retry.status().ToString();
  EXPECT_TRUE(retry->replayed);
  EXPECT_EQ(retry->game, "dice");
  EXPECT_EQ(casino->Chips("eve").value(), 990) << "nothing staked by the refused wagers";
  // The crash bet, under a key of its own, is placed.
  RunUntil(*casino, "crash", Phase::kBetting);
  auto crash =
      Await(*casino, [&](Casino::Done d) { casino->Bet("crash", "eve", 500, 0, "K2", d); });
  ASSERT_TRUE(crash.ok()) << crash.status().ToString();
  EXPECT_EQ(crash->game, "crash");
  EXPECT_FALSE(crash->replayed);
  ExpectBooksBalance();
}

TEST_F(CasinoTest, BadRequestsAreRefusedClearlyAndCostNothing) {
  auto casino = Open();
  ASSERT_TRUE(Await(*casino, [&](Casino::Done d) { casino->Buy("bob", 50, "b", d); }).ok());
  RunUntil(*casino, "dice", Phase::kBetting);
  auto code = [&](const std::function<void(Casino::Done)>& r) {
    return Await(*casino, r).status().code();
  };
  EXPECT_EQ(code([&](Casino::Done d) { casino->Bet("roulette", "bob", 1, 0, "x", d); }),
            StatusCode::kNotFound);
  EXPECT_EQ(code([&](Casino::Done d) { casino->Bet("dice", "bob", 1, 50, "x", d); }),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(code([&](Casino::Done d) { casino->Bet("dice", "bob", 0, 5000, "x", d); }),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(code([&](Casino::Done d) { casino->Bet("dice", "bob", 1, 5000, "has space", d); }),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(code([&](Casino::Done d) { casino->Bet("dice", "bob", 51, 5000, "x", d); }),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(code([&](Casino::Done d) { casino->CashOut("dice", "bob", "y", d); }),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(code([&](Casino::Done d) { casino->Buy("bob", 0, "z", d); }),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(casino->Chips("bob").value(), 50);
  // A refusal is not remembered: the same key, now good, is judged afresh.
  EXPECT_TRUE(
      Await(*casino, [&](Casino::Done d) { casino->Bet("dice", "bob", 50, 5000, "x", d); }).ok());
}

TEST_F(CasinoTest, ACrashCashOutPaysItsMultiplierAndItsRetryAnswersTheSame) {
  auto casino = Open();
  ASSERT_TRUE(Await(*casino, [&](Casino::Done d) { casino->Buy("cat", 100, "c", d); }).ok());
  // Rounds until one runs past 1.10x, so a cash-out by hand can win.
  for (int round = 0; round < 50; ++round) {
    RunUntil(*casino, "crash", Phase::kBetting);
    auto bet = Await(*casino, [&](Casino::Done d) {
      casino->Bet("crash", "cat", 1, 0, "bet-" + std::to_string(round), d);
    });
    ASSERT_TRUE(bet.ok()) << bet.status().ToString();
    RunUntil(*casino, "crash", Phase::kRunning);
    while (Last("crash")->phase == Phase::kRunning && Last("crash")->multiplier_x100 < 110) {
      clock_.Advance(Millis(100));
      casino->Pump(true);
    }
    if (Last("crash")->phase != Phase::kRunning) continue;  // crashed first
    const std::string key = "out-" + std::to_string(round);
    auto out = Await(*casino, [&](Casino::Done d) { casino->CashOut("crash", "cat", key, d); });
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_GE(out->cashout_x100, 110);
    EXPECT_EQ(out->payout, CrashPayout(1, out->cashout_x100));
    auto retry = Await(*casino, [&](Casino::Done d) { casino->CashOut("crash", "cat", key, d); });
    ASSERT_TRUE(retry.ok());
    EXPECT_TRUE(retry->replayed);
    EXPECT_EQ(retry->cashout_x100, out->cashout_x100);
    ExpectBooksBalance();
    return;
  }
  FAIL() << "no crash round ran past 1.10x in 50 rounds";
}

TEST_F(CasinoTest, ARestartContinuesTheChainAndRefundsTheRoundAStopLeftOnce) {
  int64_t stopped_round = -1;
  {
    auto casino = Open();
    ASSERT_TRUE(Await(*casino, [&](Casino::Done d) { casino->Buy("dan", 100, "d", d); }).ok());
    RunUntil(*casino, "dice", Phase::kBetting);
    auto bet =
        Await(*casino, [&](Casino::Done d) { casino->Bet("dice", "dan", 40, 5000, "k", d); });
    ASSERT_TRUE(bet.ok());
    stopped_round = bet->position;
    EXPECT_EQ(casino->Chips("dan").value(), 60);
    casino->Stop();  // mid-round: the stake goes back
    EXPECT_EQ(casino->Chips("dan").value(), 100);
  }
  ExpectBooksBalance();
  frames_.clear();
  auto casino = Open();
  RunUntil(*casino, "dice", Phase::kBetting);
  EXPECT_GT(Last("dice")->position, stopped_round) << "never a hash played twice";
  casino->Stop();
  EXPECT_EQ(ledger_.Balance("player:dan").value(), 100) << "refunded once, not twice";
  ExpectBooksBalance();
}

TEST_F(CasinoTest, AStopSettlesARunningCrashRoundsCashOutsAndRefundsTheRest) {
  auto casino = Open();
  ASSERT_TRUE(Await(*casino, [&](Casino::Done d) { casino->Buy("eve", 100, "e", d); }).ok());
  ASSERT_TRUE(Await(*casino, [&](Casino::Done d) { casino->Buy("fay", 100, "f", d); }).ok());
  // Rounds until one runs past 1.10x, so eve can cash out by hand while fay rides on.
  for (int round = 0; round < 50; ++round) {
    RunUntil(*casino, "crash", Phase::kBetting);
    const std::string n = std::to_string(round);
    ASSERT_TRUE(Await(*casino, [&](Casino::Done d) {
                  casino->Bet("crash", "eve", 10, 0, "eve-" + n, d);
                }).ok());
    ASSERT_TRUE(Await(*casino, [&](Casino::Done d) {
                  casino->Bet("crash", "fay", 20, 0, "fay-" + n, d);
                }).ok());
    RunUntil(*casino, "crash", Phase::kRunning);
    while (Last("crash")->phase == Phase::kRunning && Last("crash")->multiplier_x100 < 110) {
      clock_.Advance(Millis(100));
      casino->Pump(true);
    }
    if (Last("crash")->phase != Phase::kRunning) continue;  // crashed first
    const int64_t eve_before = casino->Chips("eve").value();
    const int64_t fay_before = casino->Chips("fay").value();
    auto out =
        Await(*casino, [&](Casino::Done d) { casino->CashOut("crash", "eve", "o-" + n, d); });
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ASSERT_EQ(Last("crash")->phase, Phase::kRunning);
    casino->Stop();  // before the crash point: eve was told her payout, fay's bet still rides
    EXPECT_EQ(casino->Chips("eve").value(), eve_before + out->payout) << "paid what she was told";
    EXPECT_EQ(casino->Chips("fay").value(), fay_before + 20) << "the stake back";
    ExpectBooksBalance();
    return;
  }
  FAIL() << "no crash round ran past 1.10x in 50 rounds";
}

TEST_F(CasinoTest, AUsedUpChainClaimsNoMorePositionsAndIsReportedOnce) {
  std::ostringstream lines;
  Logger logger("test", LogLevel::kInfo, std::make_shared<spdlog::sinks::ostream_sink_mt>(lines));
  CasinoOptions options;
  options.games = {{.game = "dice", .kind = GameKind::kDice, .public_seed = std::string(kSeed)}};
  options.house_secret = "tiny chain";
  options.chain_length = 3;
  options.logger = &logger;
  auto open = [&] {
    auto casino =
        Casino::Create(ledger_, clock_, options, [this](const Frame& f) { frames_.push_back(f); });
    EXPECT_TRUE(casino.ok()) << casino.status().ToString();
    return std::move(*casino);
  };
  auto casino = open();
  // Three rounds (about 8 s each), then a minute of Ticks with nothing left to play.
  for (int i = 0; i < 900; ++i) {
    casino->Pump(/*force_commit=*/true);
    clock_.Advance(Millis(100));
  }
  EXPECT_EQ(Last("dice")->position, 2);
  EXPECT_EQ(Last("dice")->phase, Phase::kSettled);
  EXPECT_EQ(casino->exhausted_games(), std::vector<std::string>{"dice"});
  const std::string chain = casino->Round("dice", 0).value().chain;
  // Positions 0..2 were claimed and nothing after: the next claim is 3.
  EXPECT_EQ(ledger_.ClaimChainPosition(chain).value(), 3);
  logger.Flush();
  const std::string logged = lines.str();
  const size_t first = logged.find("arcade chain used up");
  ASSERT_NE(first, std::string::npos) << logged;
  EXPECT_EQ(logged.find("arcade chain used up", first + 1), std::string::npos) << "logged once";
  EXPECT_NE(logged.find("\"level\":\"error\""), std::string::npos) << logged;
  casino->Stop();

  // A restart on the used-up chain finds out from one claim past the end, then claims no more.
  casino = open();
  for (int i = 0; i < 100; ++i) {
    casino->Pump(/*force_commit=*/true);
    clock_.Advance(Millis(100));
  }
  EXPECT_EQ(casino->exhausted_games(), std::vector<std::string>{"dice"});
  EXPECT_EQ(ledger_.ClaimChainPosition(chain).value(), 5);
  casino->Stop();
}

}  // namespace
}  // namespace telos::arcade
