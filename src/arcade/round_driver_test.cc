// The round state machine on a ManualClock, settling through a MemoryLedger behind a
// WagerBatcher: the crash game, the dice game, frames, the chain, and refunds exactly once.

#include "telos/arcade/round_driver.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "telos/arcade/memory_ledger.h"
#include "telos/arcade/outcomes.h"
#include "telos/arcade/settlement.h"
#include "telos/base/limits.h"

namespace telos::arcade {
namespace {

constexpr int64_t kChainLength = 100;

// A secret whose chain (of kChainLength) has a first round crashing at or above `x100`
// (searched, so deterministic).
std::string SecretCrashingAtLeast(int64_t x100, const std::string& seed) {
  for (int i = 0;; ++i) {
    const std::string secret = "secret-" + std::to_string(i);
    auto chain = HashChain::Generate(secret, kChainLength);
    if (CrashPointX100(OutcomeHash(*chain->RoundHash(0), seed), 100) >= x100) return secret;
  }
}

class RoundDriverTest : public ::testing::Test {
 protected:
  static constexpr std::string_view kSeed = "public seed";

  void Fund(const std::string& player, int64_t chips) {
    ASSERT_TRUE(ledger_
                    .Post({.key = "buy-" + player,
                           .legs = {{"house", -chips}, {"player:" + player, chips}}})
                    .ok());
  }
  int64_t BalanceOf(const std::string& account) { return ledger_.Balance(account).value(); }
  void ExpectBooksBalance() {
    int64_t sum = 0;
    const std::vector<AccountBalance> balances = ledger_.Balances().value();
    for (const AccountBalance& b : balances) {
      sum += b.balance;
      if (b.account != "house") {
        EXPECT_GE(b.balance, 0) << b.account;
      }
    }
    EXPECT_EQ(sum, 0);
  }
  // Moves the clock in frame steps, ticking, until `phase` or `max_ms` passed.
  void RunUntil(RoundDriver& driver, Phase phase, int64_t max_ms) {
    for (int64_t t = 0; t <= max_ms && driver.phase() != phase; t += 100) {
      clock_.Advance(Millis(100));
      driver.Tick();
      batcher_.CommitDue(true);
    }
    ASSERT_EQ(driver.phase(), phase);
  }
  Status Bet(RoundDriver& driver, BetRequest bet, std::vector<Status>* acks) {
    return driver.PlaceBet(bet, [acks](Status s) { acks->push_back(std::move(s)); });
  }

  ManualClock clock_;
  MemoryLedger ledger_;
  WagerBatcher batcher_{ledger_, clock_, {.window_ms = 2}};
  WagerBatcherSubmitter stakes_{batcher_};
  std::vector<Frame> frames_;
  RoundDriver::FrameSink sink_ = [this](const Frame& f) { frames_.push_back(f); };
};

TEST_F(RoundDriverTest, ACrashRoundBetsRunsCashesOutAndSettlesThroughTheLedger) {
  auto chain = HashChain::Generate(SecretCrashingAtLeast(300, std::string(kSeed)), kChainLength);
  ASSERT_TRUE(chain.ok());
  Fund("ann", 100);
  Fund("bob", 100);
  Fund("cat", 100);
  RoundDriver driver({.game = "crash", .kind = GameKind::kCrash, .public_seed = std::string(kSeed)},
                     ledger_, stakes_, *chain, clock_, sink_);
  driver.Tick();
  ASSERT_EQ(driver.phase(), Phase::kBetting);
  EXPECT_EQ(driver.last_frame().position, 0);
  EXPECT_TRUE(driver.last_frame().round_hash.empty()) << "no reveal before the settlement";

  std::vector<Status> acks;
  ASSERT_TRUE(
      Bet(driver, {.player = "ann", .stake = 10, .key = "a1", .auto_cashout_x100 = 150}, &acks)
          .ok());
  ASSERT_TRUE(Bet(driver, {.player = "bob", .stake = 20, .key = "b1"}, &acks).ok());
  ASSERT_TRUE(Bet(driver, {.player = "cat", .stake = 30, .key = "c1"}, &acks).ok());
  EXPECT_TRUE(acks.empty()) << "acknowledged only once committed";
  EXPECT_EQ(Bet(driver, {.player = "ann", .stake = 5, .key = "a2"}, &acks).code(),
            StatusCode::kAlreadyExists);
  ASSERT_EQ(batcher_.CommitDue(true), 3u);
  ASSERT_EQ(acks.size(), 3u);
  for (const Status& s : acks) EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(BalanceOf(driver.escrow()), 60);

  RunUntil(driver, Phase::kRunning, 6'000);
  EXPECT_EQ(Bet(driver, {.player = "dan", .stake = 1, .key = "d1"}, &acks).code(),
            StatusCode::kFailedPrecondition);
  // bob cashes out by hand once the multiplier passes 1.20x.
  const size_t frames_before = frames_.size();
  while (driver.last_frame().multiplier_x100 < 120) {
    clock_.Advance(Millis(100));
    driver.Tick();
  }
  EXPECT_GE(frames_.size() - frames_before, 5u) << "several frames a second";
  auto bob_at = driver.CashOut("bob");
  ASSERT_TRUE(bob_at.ok()) << bob_at.status().ToString();
  EXPECT_GE(*bob_at, 120);
  EXPECT_EQ(driver.CashOut("bob").status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(driver.CashOut("dan").status().code(), StatusCode::kNotFound);

  RunUntil(driver, Phase::kSettled, 120'000);
  const Frame& settled = driver.last_frame();
  EXPECT_GE(settled.crash_x100, 300);
  EXPECT_EQ(settled.multiplier_x100, settled.crash_x100);
  EXPECT_FALSE(settled.refunded);
  auto revealed = HashFromHex(settled.round_hash);
  ASSERT_TRUE(revealed.ok());
  EXPECT_TRUE(VerifyAgainst(*revealed, chain->commitment(), 1));
  EXPECT_EQ(CrashPointX100(OutcomeHash(*revealed, kSeed), 100), settled.crash_x100)
      << "anyone recomputes the crash point from the revealed hash";

  EXPECT_EQ(BalanceOf("player:ann"), 100 - 10 + 15);  // auto cash-out at 1.50x
  EXPECT_EQ(BalanceOf("player:bob"), 100 - 20 + CrashPayout(20, *bob_at));
  EXPECT_EQ(BalanceOf("player:cat"), 70);  // rode it into the crash
  EXPECT_EQ(BalanceOf(driver.escrow()), 0);
  EXPECT_TRUE(ledger_.EscrowClosed(driver.escrow()).value());
  ExpectBooksBalance();

  // The next round plays the next chain position, whose hash verifies against this one.
  RunUntil(driver, Phase::kBetting, 3'000);
  EXPECT_EQ(driver.last_frame().position, 1);
  RunUntil(driver, Phase::kSettled, 200'000);
  auto next = HashFromHex(driver.last_frame().round_hash);
  ASSERT_TRUE(next.ok());
  EXPECT_TRUE(VerifyAgainstNext(*next, *revealed));
}

TEST_F(RoundDriverTest, ADiceRoundPaysTheBetsUnderTheRoll) {
  auto chain = HashChain::Generate("dice secret", 100);
  ASSERT_TRUE(chain.ok());
  Fund("ann", 100);
  Fund("bob", 100);
  RoundDriver driver({.game = "dice", .kind = GameKind::kDice, .public_seed = std::string(kSeed)},
                     ledger_, stakes_, *chain, clock_, sink_);
  driver.Tick();
  std::vector<Status> acks;
  EXPECT_EQ(
      Bet(driver, {.player = "ann", .stake = 10, .key = "a1", .dice_target = 99}, &acks).code(),
      StatusCode::kInvalidArgument);
  // A stake whose win could not be settled within the ledger's per-leg bound is refused up front.
  EXPECT_EQ(
      Bet(driver,
          {.player = "ann", .stake = limits::kArcadeStakeMax + 1, .key = "a0", .dice_target = 5000},
          &acks)
          .code(),
      StatusCode::kInvalidArgument);
  ASSERT_TRUE(
      Bet(driver, {.player = "ann", .stake = 10, .key = "a1", .dice_target = 5000}, &acks).ok());
  ASSERT_TRUE(
      Bet(driver, {.player = "bob", .stake = 10, .key = "b1", .dice_target = 9800}, &acks).ok());
  RunUntil(driver, Phase::kSettled, 10'000);
  const int64_t roll = driver.last_frame().roll;
  ASSERT_GE(roll, 0);
  EXPECT_EQ(roll, DiceRoll(OutcomeHash(*chain->RoundHash(0), kSeed)));
  EXPECT_EQ(BalanceOf("player:ann"), 90 + (roll < 5000 ? DicePayout(10, 5000, 100) : 0));
  EXPECT_EQ(BalanceOf("player:bob"), 90 + (roll < 9800 ? DicePayout(10, 9800, 100) : 0));
  ExpectBooksBalance();
}

TEST_F(RoundDriverTest, ARoundThatNeverSettlesIsRefundedExactlyOnce) {
  auto chain = HashChain::Generate(SecretCrashingAtLeast(500, std::string(kSeed)), kChainLength);
  ASSERT_TRUE(chain.ok());
  Fund("ann", 100);
  Fund("bob", 100);
  std::string escrow;
  {
    RoundDriver dead({.game = "crash", .kind = GameKind::kCrash, .public_seed = std::string(kSeed)},
                     ledger_, stakes_, *chain, clock_, sink_);
    dead.Tick();
    std::vector<Status> acks;
    ASSERT_TRUE(Bet(dead, {.player = "ann", .stake = 40, .key = "a1"}, &acks).ok());
    ASSERT_TRUE(Bet(dead, {.player = "bob", .stake = 25, .key = "b1"}, &acks).ok());
    RunUntil(dead, Phase::kRunning, 6'000);
    escrow = dead.escrow();
  }  // the driver is gone mid-round (kill -9)
  EXPECT_EQ(BalanceOf(escrow), 65);

  // The new driver at takeover and the periodic sweep both refund; one does.
  auto by_takeover = RefundEscrow(ledger_, escrow);
  ASSERT_TRUE(by_takeover.ok()) << by_takeover.status().ToString();
  EXPECT_EQ(*by_takeover, RefundOutcome::kRefunded);
  auto by_sweep = SweepUnsettled(ledger_, "escrow:crash:", [](std::string_view) { return false; });
  ASSERT_TRUE(by_sweep.ok());
  EXPECT_EQ(by_sweep->refunded, 0);
  auto again = RefundEscrow(ledger_, escrow);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, RefundOutcome::kAlreadyClosed);
  EXPECT_EQ(BalanceOf("player:ann"), 100);
  EXPECT_EQ(BalanceOf("player:bob"), 100);
  EXPECT_EQ(BalanceOf(escrow), 0);
  ExpectBooksBalance();

  // The takeover driver continues the chain: position 1, never 0 again.
  RoundDriver next({.game = "crash", .kind = GameKind::kCrash, .public_seed = std::string(kSeed)},
                   ledger_, stakes_, *chain, clock_, sink_);
  next.Tick();
  EXPECT_EQ(next.last_frame().position, 1);
  EXPECT_NE(next.escrow(), escrow);
}

TEST_F(RoundDriverTest, ASettlementAfterARefundIsFencedOff) {
  auto chain = HashChain::Generate(SecretCrashingAtLeast(200, std::string(kSeed)), kChainLength);
  ASSERT_TRUE(chain.ok());
  Fund("ann", 100);
  RoundDriver driver({.game = "crash", .kind = GameKind::kCrash, .public_seed = std::string(kSeed)},
                     ledger_, stakes_, *chain, clock_, sink_);
  driver.Tick();
  std::vector<Status> acks;
  ASSERT_TRUE(
      Bet(driver, {.player = "ann", .stake = 50, .key = "a1", .auto_cashout_x100 = 110}, &acks)
          .ok());
  RunUntil(driver, Phase::kRunning, 6'000);
  // A sweep that wrongly believes the round dead (a paused driver past its lease) refunds it.
  auto swept = SweepUnsettled(ledger_, "escrow:crash:", [](std::string_view) { return false; });
  ASSERT_TRUE(swept.ok());
  EXPECT_EQ(swept->refunded, 1);
  // The driver wakes up and settles: refused by the closure, so ann is not paid twice.
  RunUntil(driver, Phase::kSettled, 120'000);
  EXPECT_TRUE(driver.last_frame().refunded);
  EXPECT_EQ(BalanceOf("player:ann"), 100);
  ExpectBooksBalance();
}

TEST_F(RoundDriverTest, ABadConfigNamesTheField) {
  EXPECT_EQ(ValidateGameConfig({.game = "Crash!", .public_seed = "s"}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_NE(ValidateGameConfig({.game = "crash", .public_seed = ""}).message().find("public_seed"),
            std::string::npos);
  EXPECT_TRUE(ValidateGameConfig({.game = "crash", .public_seed = "s"}).ok());
}

}  // namespace
}  // namespace telos::arcade
