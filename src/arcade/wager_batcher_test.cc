// WagerBatcher on a ManualClock over a MemoryLedger: acknowledgement only after the commit,
// the window and the size cap, the reservation, retries, bounds and shutdown.

#include "telos/arcade/wager_batcher.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "telos/arcade/memory_ledger.h"

namespace telos::arcade {
namespace {

Posting Buy(const std::string& player, int64_t chips, const std::string& key) {
  return {.key = key, .legs = {{"house", -chips}, {"player:" + player, chips}}};
}

Posting Stake(const std::string& player, int64_t chips, const std::string& key) {
  return {.key = key, .legs = {{"player:" + player, -chips}, {"escrow:crash:1", chips}}};
}

// Collects the answer a wager gets.
struct Answer {
  std::optional<Result<PostingResult>> result;
  WagerDone Callback() {
    return [this](Result<PostingResult> r) { result.emplace(std::move(r)); };
  }
};

class WagerBatcherTest : public ::testing::Test {
 protected:
  void Fund(const std::string& player, int64_t chips) {
    ASSERT_TRUE(ledger_.Post(Buy(player, chips, "buy-" + player + std::to_string(chips))).ok());
  }
  int64_t BalanceOf(const std::string& account) { return ledger_.Balance(account).value(); }

  ManualClock clock_;
  MemoryLedger ledger_;
};

TEST_F(WagerBatcherTest, AWagerIsAcknowledgedOnlyAfterItsBatchCommits) {
  Fund("ann", 100);
  WagerBatcher batcher(ledger_, clock_, {.window_ms = 5, .batch_max = 64});
  Answer a, b, c;
  ASSERT_TRUE(batcher.Submit(Stake("ann", 10, "bet-1"), a.Callback()).ok());
  ASSERT_TRUE(batcher.Submit(Stake("ann", 20, "bet-2"), b.Callback()).ok());
  clock_.Advance(std::chrono::milliseconds(4));
  ASSERT_TRUE(batcher.Submit(Stake("ann", 30, "bet-3"), c.Callback()).ok());
  const int64_t commits_before = ledger_.commits();
  EXPECT_EQ(batcher.CommitDue(), 0u) << "the window has not passed";
  EXPECT_FALSE(a.result.has_value());
  EXPECT_EQ(BalanceOf("player:ann"), 100) << "nothing is written before the commit";
  EXPECT_EQ(batcher.NextDue(), clock_.Now() + std::chrono::milliseconds(1));
  clock_.Advance(std::chrono::milliseconds(1));
  EXPECT_EQ(batcher.CommitDue(), 3u);
  EXPECT_EQ(ledger_.commits(), commits_before + 1) << "one commit for the three wagers";
  for (Answer* answer : {&a, &b, &c}) {
    ASSERT_TRUE(answer->result.has_value());
    ASSERT_TRUE(answer->result->ok()) << answer->result->status().ToString();
    EXPECT_FALSE((*answer->result)->replayed);
  }
  EXPECT_EQ(BalanceOf("player:ann"), 40);
  EXPECT_EQ(BalanceOf("escrow:crash:1"), 60);
  EXPECT_EQ(batcher.Reserved("player:ann"), 0);
}

TEST_F(WagerBatcherTest, AFullBatchCommitsWithoutWaitingAndTheCapSplitsBatches) {
  Fund("ann", 100);
  WagerBatcher batcher(ledger_, clock_, {.window_ms = 50, .batch_max = 4});
  std::vector<Answer> answers(6);
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(
        batcher.Submit(Stake("ann", 1, "bet-" + std::to_string(i)), answers[i].Callback()).ok());
  }
  EXPECT_EQ(batcher.CommitDue(), 4u) << "full: due at once";
  EXPECT_EQ(batcher.CommitDue(), 0u) << "the remaining two wait for the window";
  EXPECT_TRUE(answers[3].result.has_value());
  EXPECT_FALSE(answers[4].result.has_value());
  clock_.Advance(std::chrono::milliseconds(50));
  EXPECT_EQ(batcher.CommitDue(), 2u);
  EXPECT_EQ(batcher.batches_committed(), 2);
}

TEST_F(WagerBatcherTest, TheReservationRefusesWhatQueuedWagersAlreadyHold) {
  Fund("ann", 10);
  WagerBatcher batcher(ledger_, clock_, {.window_ms = 5});
  Answer first;
  ASSERT_TRUE(batcher.Submit(Stake("ann", 6, "bet-1"), first.Callback()).ok());
  EXPECT_EQ(batcher.Reserved("player:ann"), 6);
  Answer second;
  const Status refused = batcher.Submit(Stake("ann", 6, "bet-2"), second.Callback());
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition) << refused.ToString();
  ASSERT_TRUE(batcher.Submit(Stake("ann", 4, "bet-3"), second.Callback()).ok());
  EXPECT_EQ(batcher.CommitDue(/*force=*/true), 2u);
  EXPECT_EQ(BalanceOf("player:ann"), 0);
  EXPECT_EQ(batcher.Reserved("player:ann"), 0);
  // Nothing left: refused without reaching the ledger.
  const int64_t commits = ledger_.commits();
  EXPECT_EQ(batcher.Submit(Stake("ann", 1, "bet-4"), second.Callback()).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(ledger_.commits(), commits);
}

TEST_F(WagerBatcherTest, ChipsCreditedElsewhereAreFoundByAFreshRead) {
  Fund("ann", 10);
  WagerBatcher batcher(ledger_, clock_, {.window_ms = 5});
  Answer a;
  ASSERT_TRUE(batcher.Submit(Stake("ann", 10, "bet-1"), a.Callback()).ok());
  ASSERT_EQ(batcher.CommitDue(true), 1u);
  // Another instance sells ann more chips; the batcher's known balance (0) is stale.
  ASSERT_TRUE(ledger_.Post(Buy("ann", 5, "elsewhere")).ok());
  Answer b;
  ASSERT_TRUE(batcher.Submit(Stake("ann", 5, "bet-2"), b.Callback()).ok());
  ASSERT_EQ(batcher.CommitDue(true), 1u);
  ASSERT_TRUE(b.result->ok());
  EXPECT_EQ(BalanceOf("player:ann"), 0);
}

TEST_F(WagerBatcherTest, ChipsSpentElsewhereAreRefusedByTheLedgerNeverOverdrawn) {
  Fund("ann", 10);
  WagerBatcher batcher(ledger_, clock_, {.window_ms = 5});
  Answer a;
  ASSERT_TRUE(batcher.Submit(Stake("ann", 1, "bet-1"), a.Callback()).ok());
  ASSERT_EQ(batcher.CommitDue(true), 1u);  // the batcher now knows ann holds 9
  // Another instance spends 8 of them behind the batcher's back.
  ASSERT_TRUE(
      ledger_.Post({.key = "other-game", .legs = {{"player:ann", -8}, {"escrow:dice:1", 8}}}).ok());
  Answer b, c;
  ASSERT_TRUE(batcher.Submit(Stake("ann", 5, "bet-2"), b.Callback()).ok());
  ASSERT_EQ(batcher.CommitDue(true), 1u);
  ASSERT_TRUE(b.result.has_value());
  EXPECT_EQ(b.result->status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(BalanceOf("player:ann"), 1);
  // The refusal made the batcher read again: 1 chip is there, 2 are not.
  EXPECT_EQ(batcher.Submit(Stake("ann", 2, "bet-3"), c.Callback()).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_TRUE(batcher.Submit(Stake("ann", 1, "bet-4"), c.Callback()).ok());
  batcher.Stop();  // answers bet-4 while `c` is still alive
  EXPECT_TRUE(c.result->ok());
}

TEST_F(WagerBatcherTest, ACommitWithAnUnknownResultIsRetriedWithTheSameKeys) {
  Fund("ann", 10);
  WagerBatcher batcher(ledger_, clock_, {.window_ms = 5});
  // The first attempt applies and loses its answer; the retry replays.
  ledger_.FailNextCommits(1, Status::UnknownResult("the connection died during COMMIT"));
  Answer a;
  ASSERT_TRUE(batcher.Submit(Stake("ann", 4, "bet-1"), a.Callback()).ok());
  const int64_t commits = ledger_.commits();
  ASSERT_EQ(batcher.CommitDue(true), 1u);
  EXPECT_EQ(ledger_.commits(), commits + 2);
  ASSERT_TRUE(a.result.has_value());
  ASSERT_TRUE(a.result->ok()) << a.result->status().ToString();
  EXPECT_EQ(BalanceOf("player:ann"), 6) << "applied once";
  // The batcher read the balance again (a replay), and still knows what is left.
  Answer b;
  EXPECT_EQ(batcher.Submit(Stake("ann", 7, "bet-2"), b.Callback()).code(),
            StatusCode::kFailedPrecondition);
}

TEST_F(WagerBatcherTest, ACommitThatKeepsFailingAnswersEveryWagerWithTheError) {
  Fund("ann", 10);
  WagerBatcher batcher(ledger_, clock_, {.window_ms = 5});
  ledger_.FailNextCommits(limits::kArcadeBatchCommitAttemptsMax,
                          Status::Unavailable("PostgreSQL is down"));
  Answer a;
  ASSERT_TRUE(batcher.Submit(Stake("ann", 10, "bet-1"), a.Callback()).ok());
  ASSERT_EQ(batcher.CommitDue(true), 1u);
  ASSERT_TRUE(a.result.has_value());
  EXPECT_EQ(a.result->status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(batcher.Reserved("player:ann"), 0) << "the reservation is given back";
  EXPECT_EQ(BalanceOf("player:ann"), 10);
  Answer b;
  ASSERT_TRUE(batcher.Submit(Stake("ann", 10, "bet-1"), b.Callback()).ok()) << "a retry";
  ASSERT_EQ(batcher.CommitDue(true), 1u);
  EXPECT_TRUE(b.result->ok());
}

TEST_F(WagerBatcherTest, TheSameKeyQueuedTwiceIsOneWagerWithOneAnswer) {
  Fund("ann", 10);
  WagerBatcher batcher(ledger_, clock_, {.window_ms = 5});
  Answer a, b;
  ASSERT_TRUE(batcher.Submit(Stake("ann", 8, "bet-1"), a.Callback()).ok());
  ASSERT_TRUE(batcher.Submit(Stake("ann", 8, "bet-1"), b.Callback()).ok()) << "joins, no reserve";
  EXPECT_EQ(batcher.Reserved("player:ann"), 8);
  EXPECT_EQ(batcher.Submit(Stake("ann", 2, "bet-1"), b.Callback()).code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(batcher.queued(), 1u);
  ASSERT_EQ(batcher.CommitDue(true), 1u);
  ASSERT_TRUE(a.result->ok());
  ASSERT_TRUE(b.result->ok());
  EXPECT_EQ((*a.result)->posting_id, (*b.result)->posting_id);
  EXPECT_EQ(BalanceOf("player:ann"), 2);
}

TEST_F(WagerBatcherTest, TheQueueIsBoundedAndMalformedWagersAreRefused) {
  Fund("ann", 100);
  WagerBatcher batcher(ledger_, clock_, {.window_ms = 5, .batch_max = 8, .pending_max = 2});
  Answer a;
  ASSERT_TRUE(batcher.Submit(Stake("ann", 1, "bet-1"), a.Callback()).ok());
  ASSERT_TRUE(batcher.Submit(Stake("ann", 1, "bet-2"), a.Callback()).ok());
  EXPECT_EQ(batcher.Submit(Stake("ann", 1, "bet-3"), a.Callback()).code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(batcher.Submit({.key = "bad", .legs = {{"player:ann", -1}}}, a.Callback()).code(),
            StatusCode::kInvalidArgument);
  batcher.Stop();  // answers the two queued wagers while `a` is still alive
}

TEST_F(WagerBatcherTest, StopAnswersEverythingQueuedAndRefusesWhatComesAfter) {
  Fund("ann", 100);
  WagerBatcher batcher(ledger_, clock_, {.window_ms = 5});
  Answer a;
  ASSERT_TRUE(batcher.Submit(Stake("ann", 1, "bet-1"), a.Callback()).ok());
  batcher.Stop();
  ASSERT_TRUE(a.result.has_value());
  EXPECT_TRUE(a.result->ok());
  EXPECT_EQ(batcher.Submit(Stake("ann", 1, "bet-2"), a.Callback()).code(), StatusCode::kCancelled);
}

}  // namespace
}  // namespace telos::arcade
