// The ledger conformance suite itself (see ledger_conformance.h). Backends instantiate it
// elsewhere.

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "ledger_conformance.h"
#include "telos/arcade/memory_ledger.h"
#include "telos/base/limits.h"
#include "telos/base/random.h"

namespace telos::store {
namespace {

using arcade::AccountBalance;
using arcade::Ledger;
using arcade::Leg;
using arcade::Posting;

Posting Buy(const std::string& player, int64_t chips, const std::string& key) {
  return {.key = key, .legs = {{"house", -chips}, {"player:" + player, chips}}};
}

Posting Stake(const std::string& player, const std::string& escrow, int64_t chips,
              const std::string& key) {
  return {.key = key, .legs = {{"player:" + player, -chips}, {"escrow:" + escrow, chips}}};
}

int64_t MustBalance(Ledger& ledger, const std::string& account) {
  auto balance = ledger.Balance(account);
  EXPECT_TRUE(balance.ok()) << balance.status().ToString();
  return balance.ok() ? *balance : -1;
}

// The invariants: every balance sums to zero and none but the house's is negative.
void ExpectBalanced(Ledger& ledger, const std::string& context) {
  auto balances = ledger.Balances();
  ASSERT_TRUE(balances.ok()) << balances.status().ToString();
  int64_t sum = 0;
  for (const AccountBalance& b : *balances) {
    sum += b.balance;
    if (b.account != "house") {
      EXPECT_GE(b.balance, 0) << b.account << " " << context;
    }
    EXPECT_NE(b.balance, 0) << "Balances() lists only non-zero accounts: " << b.account;
  }
  EXPECT_EQ(sum, 0) << context;
}

#define LEDGER_TEST(name) TEST_P(LedgerConformanceTest, name)

LEDGER_TEST(BuyingChipsMovesThemFromTheHouse) {
  auto posted = ledger().Post(Buy("ann", 100, "buy-1"));
  ASSERT_TRUE(posted.ok()) << posted.status().ToString();
  EXPECT_GT(posted->posting_id, 0);
  EXPECT_FALSE(posted->replayed);
  EXPECT_EQ(MustBalance(ledger(), "player:ann"), 100);
  EXPECT_EQ(MustBalance(ledger(), "house"), -100);
  EXPECT_EQ(MustBalance(ledger(), "player:nobody"), 0);
  auto balances = ledger().Balances();
  ASSERT_TRUE(balances.ok());
  EXPECT_EQ(*balances, (std::vector<AccountBalance>{{"house", -100}, {"player:ann", 100}}));
}

LEDGER_TEST(APlayerCannotSpendMoreThanTheyHold) {
  ASSERT_TRUE(ledger().Post(Buy("ann", 10, "buy-1")).ok());
  auto over = ledger().Post(Stake("ann", "crash:1", 11, "bet-1"));
  EXPECT_EQ(over.status().code(), StatusCode::kFailedPrecondition) << over.status().ToString();
  EXPECT_EQ(MustBalance(ledger(), "player:ann"), 10);
  EXPECT_EQ(MustBalance(ledger(), "escrow:crash:1"), 0);
  // A refusal is not recorded: the same key is judged afresh once the chips are there.
  ASSERT_TRUE(ledger().Post(Buy("ann", 1, "buy-2")).ok());
  auto retried = ledger().Post(Stake("ann", "crash:1", 11, "bet-1"));
  ASSERT_TRUE(retried.ok()) << retried.status().ToString();
  EXPECT_FALSE(retried->replayed);
  EXPECT_EQ(MustBalance(ledger(), "player:ann"), 0);
  EXPECT_EQ(MustBalance(ledger(), "escrow:crash:1"), 11);
  ExpectBalanced(ledger(), "after the stake");
}

LEDGER_TEST(ARetryAnswersWithTheOriginalResult) {
  auto first = ledger().Post(Buy("ann", 50, "buy-1"));
  ASSERT_TRUE(first.ok());
  auto again = ledger().Post(Buy("ann", 50, "buy-1"));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->posting_id, first->posting_id);
  EXPECT_TRUE(again->replayed);
  EXPECT_EQ(MustBalance(ledger(), "player:ann"), 50);
}

LEDGER_TEST(AKeyReusedForADifferentPostingIsRefused) {
  ASSERT_TRUE(ledger().Post(Buy("ann", 50, "buy-1")).ok());
  auto reused = ledger().Post(Buy("ann", 51, "buy-1"));
  EXPECT_EQ(reused.status().code(), StatusCode::kAlreadyExists) << reused.status().ToString();
  auto other_player = ledger().Post(Buy("bob", 50, "buy-1"));
  EXPECT_EQ(other_player.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(MustBalance(ledger(), "player:ann"), 50);
  EXPECT_EQ(MustBalance(ledger(), "player:bob"), 0);
}

LEDGER_TEST(MalformedPostingsAreRefusedAndChangeNothing) {
  const std::vector<Posting> bad = {
      {.key = "", .legs = {{"house", -1}, {"player:a", 1}}},
      {.key = "k1", .legs = {{"house", -1}, {"player:a", 2}}},                   // unbalanced
      {.key = "k2", .legs = {{"house", -1}}},                                    // one leg
      {.key = "k3", .legs = {{"house", 0}, {"player:a", 0}}},                    // zero amounts
      {.key = "k4", .legs = {{"bank", -1}, {"player:a", 1}}},                    // unknown kind
      {.key = "k5", .legs = {{"house", -1}, {"player:", 1}}},                    // empty name
      {.key = "k6", .legs = {{"house", -2}, {"player:a", 1}, {"player:a", 1}}},  // twice
      {.key = "k 7", .legs = {{"house", -1}, {"player:a", 1}}},                  // space in key
      {.key = "k8", .legs = {{"house", -1}, {"player:a", 1}}, .closes_escrow = "player:a"},
      {.key = "k9", .legs = {{"house", -1}, {"player:a", 1}}, .closes_escrow = "escrow:x"},
      {.key = std::string(limits::kArcadeIdempotencyKeyBytesMax + 1, 'k'),
       .legs = {{"house", -1}, {"player:a", 1}}},
      {.key = "k10",
       .legs = {{"house", -(limits::kArcadeChipsMax + 1)},
                {"player:a", limits::kArcadeChipsMax + 1}}},
  };
  auto results = ledger().PostBatch(bad);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  ASSERT_EQ(results->size(), bad.size());
  for (size_t i = 0; i < bad.size(); ++i) {
    EXPECT_EQ((*results)[i].status().code(), StatusCode::kInvalidArgument) << "posting " << i;
  }
  auto balances = ledger().Balances();
  ASSERT_TRUE(balances.ok());
  EXPECT_TRUE(balances->empty());
}

LEDGER_TEST(ABatchAppliesInOrderEachPostingWholeOrNot) {
  const std::vector<Posting> batch = {
      Buy("ann", 10, "buy-1"),
      Stake("ann", "crash:1", 6, "bet-1"),
      Stake("ann", "crash:2", 6, "bet-2"),  // only 4 left: refused
      Buy("ann", 10, "buy-1"),              // the same key again: the first's result
      Stake("ann", "crash:2", 4, "bet-3"),
  };
  auto results = ledger().PostBatch(batch);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  ASSERT_EQ(results->size(), 5u);
  ASSERT_TRUE((*results)[0].ok());
  ASSERT_TRUE((*results)[1].ok());
  EXPECT_EQ((*results)[2].status().code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE((*results)[3].ok());
  EXPECT_TRUE((*results)[3]->replayed);
  EXPECT_EQ((*results)[3]->posting_id, (*results)[0]->posting_id);
  ASSERT_TRUE((*results)[4].ok());
  EXPECT_EQ(MustBalance(ledger(), "player:ann"), 0);
  EXPECT_EQ(MustBalance(ledger(), "escrow:crash:1"), 6);
  EXPECT_EQ(MustBalance(ledger(), "escrow:crash:2"), 4);
  ExpectBalanced(ledger(), "after the batch");

  // The whole batch again: every applied posting replays, the refused one is judged afresh
  // (and refused again: ann has nothing left).
  auto again = ledger().PostBatch(batch);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE((*again)[0]->replayed);
  EXPECT_TRUE((*again)[1]->replayed);
  EXPECT_EQ((*again)[2].status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE((*again)[4]->replayed);
  EXPECT_EQ((*again)[4]->posting_id, (*results)[4]->posting_id);
  EXPECT_EQ(MustBalance(ledger(), "escrow:crash:2"), 4);
}

LEDGER_TEST(EscrowFlowsNetWhatEachAccountPutIn) {
  ASSERT_TRUE(ledger().Post(Buy("ann", 100, "buy-a")).ok());
  ASSERT_TRUE(ledger().Post(Buy("bob", 100, "buy-b")).ok());
  ASSERT_TRUE(ledger().Post(Stake("ann", "dice:7", 10, "bet-1")).ok());
  ASSERT_TRUE(ledger().Post(Stake("ann", "dice:7", 5, "bet-2")).ok());
  ASSERT_TRUE(ledger().Post(Stake("bob", "dice:7", 20, "bet-3")).ok());
  ASSERT_TRUE(ledger().Post(Stake("bob", "dice:8", 1, "bet-4")).ok());
  auto flows = ledger().EscrowFlows("escrow:dice:7");
  ASSERT_TRUE(flows.ok()) << flows.status().ToString();
  EXPECT_EQ(*flows, (std::vector<Leg>{{"player:ann", -15}, {"player:bob", -20}}));
  ASSERT_TRUE(ledger().Post(Stake("bob", "crash:1", 1, "bet-5")).ok());
  auto open = ledger().OpenEscrows("escrow:dice:", 10);
  ASSERT_TRUE(open.ok()) << open.status().ToString();
  EXPECT_EQ(*open, (std::vector<std::string>{"escrow:dice:7", "escrow:dice:8"}));
  auto first = ledger().OpenEscrows("escrow:dice:", 1);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, (std::vector<std::string>{"escrow:dice:7"}));
  auto all = ledger().OpenEscrows("escrow:", 10);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 3u);
  EXPECT_EQ(ledger().OpenEscrows("player:", 10).status().code(), StatusCode::kInvalidArgument);
}

LEDGER_TEST(AClosedEscrowTakesNothingMore) {
  ASSERT_TRUE(ledger().Post(Buy("ann", 100, "buy-a")).ok());
  ASSERT_TRUE(ledger().Post(Stake("ann", "crash:1", 30, "bet-1")).ok());
  // Closing must empty the escrow.
  auto partial = ledger().Post({.key = "settle-1",
                                .legs = {{"escrow:crash:1", -10}, {"house", 10}},
                                .closes_escrow = "escrow:crash:1"});
  EXPECT_EQ(partial.status().code(), StatusCode::kFailedPrecondition);
  auto closed = ledger().EscrowClosed("escrow:crash:1");
  ASSERT_TRUE(closed.ok());
  EXPECT_FALSE(*closed);

  const Posting settle{.key = "settle-1",
                       .legs = {{"escrow:crash:1", -30}, {"house", -30}, {"player:ann", 60}},
                       .closes_escrow = "escrow:crash:1"};
  auto settled = ledger().Post(settle);
  ASSERT_TRUE(settled.ok()) << settled.status().ToString();
  closed = ledger().EscrowClosed("escrow:crash:1");
  ASSERT_TRUE(closed.ok());
  EXPECT_TRUE(*closed);
  EXPECT_EQ(MustBalance(ledger(), "player:ann"), 130);

  // A refund after the settlement, under another key, is fenced off.
  auto refund = ledger().Post({.key = "refund-1",
                               .legs = {{"escrow:crash:1", -30}, {"player:ann", 30}},
                               .closes_escrow = "escrow:crash:1"});
  EXPECT_EQ(refund.status().code(), StatusCode::kFailedPrecondition) << refund.status().ToString();
  // So is a late stake.
  auto late = ledger().Post(Stake("ann", "crash:1", 5, "bet-2"));
  EXPECT_EQ(late.status().code(), StatusCode::kFailedPrecondition);
  // The settlement itself replays.
  auto replay = ledger().Post(settle);
  ASSERT_TRUE(replay.ok());
  EXPECT_TRUE(replay->replayed);
  EXPECT_EQ(MustBalance(ledger(), "player:ann"), 130);
  auto open = ledger().OpenEscrows("escrow:", 10);
  ASSERT_TRUE(open.ok());
  EXPECT_TRUE(open->empty());
  ExpectBalanced(ledger(), "after the settlement");
}

LEDGER_TEST(TwoClosersInOneBatchCloseOnce) {
  ASSERT_TRUE(ledger().Post(Buy("ann", 100, "buy-a")).ok());
  ASSERT_TRUE(ledger().Post(Stake("ann", "crash:1", 30, "bet-1")).ok());
  const std::vector<Posting> batch = {{.key = "refund-a",
                                       .legs = {{"escrow:crash:1", -30}, {"player:ann", 30}},
                                       .closes_escrow = "escrow:crash:1"},
                                      {.key = "refund-b",
                                       .legs = {{"escrow:crash:1", -30}, {"player:ann", 30}},
                                       .closes_escrow = "escrow:crash:1"}};
  auto results = ledger().PostBatch(batch);
  ASSERT_TRUE(results.ok());
  EXPECT_TRUE((*results)[0].ok());
  EXPECT_EQ((*results)[1].status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(MustBalance(ledger(), "player:ann"), 100);
}

LEDGER_TEST(ChainPositionsAreHandedOutOnceEach) {
  for (int64_t expected = 0; expected < 3; ++expected) {
    auto position = ledger().ClaimChainPosition("crash");
    ASSERT_TRUE(position.ok()) << position.status().ToString();
    EXPECT_EQ(*position, expected);
  }
  auto dice = ledger().ClaimChainPosition("dice");
  ASSERT_TRUE(dice.ok());
  EXPECT_EQ(*dice, 0);
  // Another instance on the same database continues the same sequence.
  Ledger* peer = Peer();
  ASSERT_NE(peer, nullptr);
  auto next = peer->ClaimChainPosition("crash");
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(*next, 3);
}

LEDGER_TEST(TwoInstancesNeverSpendTheSameChips) {
  ASSERT_TRUE(ledger().Post(Buy("ann", 100, "buy-a")).ok());
  Ledger* peers[2] = {Peer(), Peer()};
  ASSERT_NE(peers[0], nullptr);
  ASSERT_NE(peers[1], nullptr);
  std::atomic<int> accepted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const std::string key = "bet-" + std::to_string(t) + "-" + std::to_string(i);
        auto posted = peers[t]->Post(Stake("ann", "game" + std::to_string(t) + ":1", 7, key));
        if (posted.ok()) ++accepted;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(accepted.load(), 14);  // 100 / 7
  EXPECT_EQ(MustBalance(ledger(), "player:ann"), 2);
  ExpectBalanced(ledger(), "after two instances bet");
}

// The property test: random operations, invariants after each, balances equal to the model's.
LEDGER_TEST(RandomOperationSequencesKeepTheBooksBalanced) {
  const uint64_t seed = ::testing::UnitTest::GetInstance()->random_seed() + 20261202;
  SCOPED_TRACE("seed " + std::to_string(seed));
  Random random(seed);
  arcade::MemoryLedger model;
  const std::vector<std::string> players = {"a", "b", "c", "d"};
  std::vector<Posting> history;  // postings sent, for replays and key reuse
  int next_key = 0;
  int next_round = 0;
  std::vector<std::string> open_rounds;

  auto pick_player = [&] { return players[random.Uniform(0, players.size() - 1)]; };
  auto make_op = [&]() -> Posting {
    const int64_t kind = random.Uniform(0, 9);
    const std::string key = "op-" + std::to_string(next_key++);
    if (kind <= 1 || open_rounds.empty()) {
      if (open_rounds.size() < 3 && random.Chance(0.5)) {
        open_rounds.push_back("r" + std::to_string(next_round++));
      }
      return Buy(pick_player(), random.Uniform(1, 50), key);
    }
    const std::string& round = open_rounds[random.Uniform(0, open_rounds.size() - 1)];
    if (kind <= 5) return Stake(pick_player(), round, random.Uniform(1, 40), key);
    if (kind == 6 && !history.empty()) return history[random.Uniform(0, history.size() - 1)];
    if (kind == 7 && !history.empty()) {  // a reused key with different content
      Posting reused = Buy(pick_player(), random.Uniform(1, 50), key);
      reused.key = history[random.Uniform(0, history.size() - 1)].key;
      return reused;
    }
    // Settle or refund a round from the model's view of its escrow (the backend must agree).
    const std::string escrow = "escrow:" + round;
    auto flows = model.EscrowFlows(escrow);
    RELEASE_ASSERT(flows.ok(), "the model failed");
    Posting close{.key = key, .closes_escrow = escrow};
    int64_t held = 0;
    for (const Leg& flow : *flows) held -= flow.amount;
    if (held == 0) return Buy(pick_player(), 1, key);
    close.legs.push_back({escrow, -held});
    if (kind == 8) {  // a refund: every flow reversed
      for (const Leg& flow : *flows) close.legs.push_back({flow.account, -flow.amount});
    } else {  // a settlement: one winner at 2x, the house takes or pays the rest
      const Leg& winner = (*flows)[random.Uniform(0, flows->size() - 1)];
      const int64_t payout = -winner.amount * 2;
      close.legs.push_back({winner.account, payout});
      if (held != payout) close.legs.push_back({"house", held - payout});
    }
    std::erase(open_rounds, round);
    return close;
  };

  for (int step = 0; step < 300; ++step) {
    std::vector<Posting> batch;
    const int64_t size = random.Chance(0.3) ? random.Uniform(2, 6) : 1;
    for (int64_t i = 0; i < size; ++i) batch.push_back(make_op());
    auto expected = model.PostBatch(batch);
    auto actual = ledger().PostBatch(batch);
    ASSERT_TRUE(expected.ok());
    ASSERT_TRUE(actual.ok()) << "step " << step << ": " << actual.status().ToString();
    for (size_t i = 0; i < batch.size(); ++i) {
      ASSERT_EQ((*actual)[i].status().code(), (*expected)[i].status().code())
          << "step " << step << " posting " << batch[i].key << ": "
          << (*actual)[i].status().ToString() << " vs the model's "
          << (*expected)[i].status().ToString();
      if ((*actual)[i].ok()) {
        EXPECT_EQ((*actual)[i]->replayed, (*expected)[i]->replayed);
      }
    }
    for (const Posting& p : batch) history.push_back(p);
    ExpectBalanced(ledger(), "step " + std::to_string(step));
    auto model_balances = model.Balances();
    auto balances = ledger().Balances();
    ASSERT_TRUE(balances.ok());
    ASSERT_EQ(*balances, *model_balances) << "step " << step;
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace telos::store
